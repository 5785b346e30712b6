#if TSDB_TESTING
    /// The properties the fuzz targets check (Tests/Fuzz), here so the regression tests run the
    /// very same code on the inputs kept under Tests/Fuzz/crashes.

    /// Parses `bytes` as a day file; if it parses, its samples must survive writing and re-parsing.
    public func checkRawJSON(_ bytes: UnsafeRawBufferPointer) {
        guard let parsed = try? DayFileParser.parse(bytes, path: "fuzz.json") else { return }
        var strings = parsed.strings
        let samples = parsed.samples.map { Sample($0, strings: &strings) }
        let written = DayFileWriter.dayFile(date: parsed.date ?? "2025-01-01", samples: samples)
        guard let again = try? written.withUnsafeBytes({ try DayFileParser.parse($0, path: "rewritten.json") }) else {
            fatalError("a parsed day file did not parse after being written back")
        }
        var strings2 = again.strings
        guard again.samples.map({ Sample($0, strings: &strings2) }) == samples else {
            fatalError("samples changed when written back and parsed again")
        }
    }

    /// Opens `bytes` as a segment; if it opens, every block must decode or fail with an error, and
    /// a slot region that decodes whole must give the same slots read block by block.
    public func checkSegmentBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let reader = try? SegmentReader(file: MappedFile(copying: bytes, path: "fuzz.seg")) else { return }
        let table = try? reader.slotTable()
        let block = DecodedBlock()
        for b in 0..<reader.blockCount {
            guard (try? reader.decode(block: b, into: block)) != nil else { continue }
            for i in 0..<block.count { _ = reader.sample(i, of: block) }
            if let table { _ = try? reader.checkSlots(of: b, decoded: block, in: table) }
        }
        guard let table, var stream = try? reader.slotStream() else { return }
        var slots: [StoredSlot] = []
        for b in 0..<reader.blockCount {
            guard let scale = try? reader.readSlots(&stream, block: b, into: &slots),
                slots.map({ SlotSummary($0, scale: scale) }) == Array(table.slots[table.ranges[b]])
            else { fatalError("block \(b)'s slots differ between the whole region and the block-by-block reader") }
        }
    }
#endif
