#if TSDB_TESTING
    import TSDB

    /// The export scanner's fuzz property (Tests/Fuzz/FuzzExportXML.swift): any bytes give the same
    /// elements, or the same error, whether scanned whole or in small chunks; nothing crashes.
    public func checkExportXML(_ bytes: UnsafeRawBufferPointer) {
        func scan(chunk: Int) -> [String] {
            var scanner = HealthXMLScanner(source: "fuzz")
            var out: [String] = []
            let record = { (e: HealthXMLScanner.Element) in
                out.append("\(e.kind) \(e.name) \(e.attributes.map { "\($0.name)=\($0.value)" })")
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
                out.append("error")
            }
            return out
        }
        let whole = scan(chunk: max(bytes.count, 1))
        let split = scan(chunk: 1 + bytes.count % 7)
        precondition(whole == split, "chunking changed what was scanned")
    }
#endif
