#if TSDB_TESTING
    import TSDB

    /// The export scanner's fuzz property (Tests/Fuzz/FuzzExportXML.swift): any bytes give the same
    /// elements, or the same error, whether scanned whole or in small chunks, and the same elements
    /// (with their lines and offsets) or the same error message whether each tag is read in one
    /// pass or in two; nothing crashes.
    public func checkExportXML(_ bytes: UnsafeRawBufferPointer) {
        let whole = scanExportXML(bytes, chunk: max(bytes.count, 1))
        let split = scanExportXML(bytes, chunk: 1 + bytes.count % 7)
        func withoutMessages(_ lines: [String]) -> [String] { lines.map { $0.hasPrefix("error") ? "error" : $0 } }
        precondition(withoutMessages(whole) == withoutMessages(split), "chunking changed what was scanned")
        let twoPasses = scanExportXML(bytes, chunk: max(bytes.count, 1), onePass: false)
        precondition(whole == twoPasses, "reading tags in one pass changed what was scanned")
    }

    /// Each element `bytes` holds, a line each (kind, name, line, offset, attributes decoded),
    /// fed to the scanner `chunk` bytes at a time; the last line is the error, if one was thrown.
    func scanExportXML(_ bytes: UnsafeRawBufferPointer, chunk: Int, onePass: Bool = true) -> [String] {
        var scanner = HealthXMLScanner(source: "fuzz")
        scanner.readsInOnePass = onePass
        var out: [String] = []
        let record = { (e: HealthXMLScanner.Element) in
            out.append("\(e.kind) \(e.name) \(e.line) \(e.offset) \(e.attributes.map { "\($0.name)=\($0.value)" })")
        }
        do throws(TSDBError) {
            var o = 0
            while o < bytes.count {
                let n = min(chunk, bytes.count - o)
                try scanner.feed(UnsafeRawBufferPointer(rebasing: bytes[o..<o + n])) { record($0) }
                o += n
            }
            try scanner.finish { record($0) }
        } catch {
            out.append("error \(error)")
        }
        return out
    }
#endif
