/// A validated, memory-mapped segment file.
///
/// Opening checks everything outside the blocks and the slot region: size, header
/// magic/version/CRC, footer CRC and magic, section bounds, dictionary and index CRCs, and that
/// index entries are in bounds and in order. Each block's CRC is checked when it is decoded, the
/// slot region's each time it is read. Any failure is a ``TSDBError`` naming the
/// file and offset; nothing is trusted before it is checked.
public final class SegmentReader: @unchecked Sendable {
    public let path: String
    let file: MappedFile
    let dictionary: SegmentDictionary
    let locations: [BlockLocation]
    public let summaries: [BlockSummary]
    public let sampleCount: Int
    /// Where the slot region (§6.1) is; read by ``slotStream()`` and ``slotTable()``.
    let slotRegion: SlotRegionHandle

    /// Strings for dictionary ids (0 absent, 1 null, k+2 entry k).
    package let units: [OptionalText], sources: [OptionalText], devices: [OptionalText], metadata: [OptionalText]
    package let forms: [(TimeForm, TimeForm)]

    public var type: String { dictionary.type }
    public var year: Int { dictionary.year }
    public var month: Int { dictionary.month }
    /// The segment's size in bytes (its part of the file).
    public var size: Int { file.count }
    /// Where the segment starts in its file.
    public var offset: Int { file.offset }
    /// Called when a block fails its checks (the store remembers the segment for repair).
    let onDamage: (@Sendable () -> Void)?

    public convenience init(path: String) throws(TSDBError) {
        try self.init(file: MappedFile(path: path))
    }

    /// The segment of `count` bytes at `offset` in the file at `path` (a manifest entry's place).
    convenience init(
        path: String, offset: Int, count: Int, onDamage: (@Sendable () -> Void)? = nil
    ) throws(TSDBError) {
        try self.init(file: MappedFile(path: path, offset: offset, count: count), onDamage: onDamage)
    }

    init(file: MappedFile, onDamage: (@Sendable () -> Void)? = nil) throws(TSDBError) {
        self.path = file.path
        self.file = file
        self.onDamage = onDamage
        do {
            let parsed = try file.withBytes { (bytes) throws(TSDBError) in try Self.parse(bytes) }
            (dictionary, locations, summaries, sampleCount, slotRegion) = parsed
        } catch {
            throw error.at(path: file.path, offsetBy: file.offset)
        }
        // Made in one allocation: `[.absent, .null] + list.map(...)` made three arrays a table.
        func table(_ list: [String]) -> [OptionalText] {
            var texts: [OptionalText] = [.absent, .null]
            texts.reserveCapacity(list.count + 2)
            for s in list { texts.append(.text(s)) }
            return texts
        }
        units = table(dictionary.units)
        sources = table(dictionary.sources)
        devices = table(dictionary.devices)
        metadata = table(dictionary.metadata)
        forms = dictionary.forms.map { TimeForm.unpair($0) }
    }

    /// `error` placed in the file: offsets within the segment become offsets within the file.
    func located(_ error: TSDBError) -> TSDBError { error.at(path: path, offsetBy: file.offset) }

    typealias Parsed = (SegmentDictionary, [BlockLocation], [BlockSummary], Int, SlotRegionHandle)

    /// The slot region's place in the file (§6.1, §7). Its CRC is checked each time it is read, not
    /// when the file opens: a query that reads no slots (samples, percentiles, months from block
    /// summaries) skips it, and one that does checks it on the thread that reads it.
    struct SlotRegionHandle {
        var offset: Int
        var storedLength: Int
        var rawLength: Int
        var codec: BlockCodec
        var crc: UInt32
    }

    /// The slot summaries of every block (§6.1), decoded and checked against the block index
    /// (`tsdb verify`; aggregates read them block by block through ``slotStream()``).
    func slotTable() throws(TSDBError) -> SlotTable {
        let summaries = self.summaries
        let offset = slotRegion.offset
        return try withSlotRegion { (raw) throws(TSDBError) in
            try SlotRegion.decode(raw, summaries: summaries, offset: offset)
        }
    }

    /// The slot region for reading block by block (aggregates hold one block's slots at a time).
    func slotStream() throws(TSDBError) -> SlotStream {
        let (region, summaries) = (slotRegion, self.summaries)
        return try withStoredSlotRegion { (stored) throws(TSDBError) in
            // Decompressed where the stream keeps it: a copy and a zeroed buffer were 7% of five
            // heavy years' daily heart rate.
            try SlotStream(count: region.rawLength, offset: region.offset, summaries: summaries) {
                (raw) throws(TSDBError) in
                try Self.decompress(stored, codec: region.codec, into: raw, offset: region.offset)
            }
        }
    }

    /// Block `b`'s slots from `stream` (this segment's), into `slots`; failures name the file and count as damage.
    /// Returns their scale.
    func readSlots(_ stream: inout SlotStream, block b: Int, into slots: inout [StoredSlot]) throws(TSDBError)
        -> UInt8
    {
        do throws(TSDBError) {
            return try stream.slots(ofBlock: b, summary: summaries[b], into: &slots)
        } catch {
            onDamage?()
            throw located(error)
        }
    }

    /// Block `b`'s slots added up per bucket (``SlotStream/runs(ofBlock:summary:lo:hi:bucketEnd:into:)``).
    func readSlotRuns(
        _ stream: inout SlotStream, block b: Int, lo: Int64, hi: Int64, bucketEnd: (Int64) -> Int64,
        into runs: inout [SlotRun]
    ) throws(TSDBError) -> SlotRunsOutcome {
        do throws(TSDBError) {
            return try stream.runs(
                ofBlock: b, summary: summaries[b], lo: lo, hi: hi, bucketEnd: bucketEnd, into: &runs)
        } catch {
            onDamage?()
            throw located(error)
        }
    }

    /// Block `b`'s totals either side of `edge` from its slots (``SlotStream/sides(ofBlock:summary:whole:edge:)``),
    /// when its values are whole numbers (``wholeNumbers(_:)``): nil when it has no slots or its
    /// values are not such, `.some(nil)` when the slots are left for a checked reading.
    func readSlotSides(_ stream: inout SlotStream, block b: Int, edge: Int64) throws(TSDBError)
        -> (before: ValueTotals, after: ValueTotals)??
    {
        guard let whole = Self.wholeNumbers(summaries[b]) else { return .some(nil) }
        do throws(TSDBError) {
            return try stream.sides(ofBlock: b, summary: summaries[b], whole: whole, edge: edge)
        } catch {
            onDamage?()
            throw located(error)
        }
    }

    /// Runs `body` over the decompressed slot region once its CRC is checked; failures name the
    /// file and count as damage.
    private func withSlotRegion<R>(_ body: (UnsafeRawBufferPointer) throws(TSDBError) -> R) throws(TSDBError) -> R {
        let region = slotRegion
        return try withStoredSlotRegion { (stored) throws(TSDBError) in
            try Self.decompressed(
                stored, codec: region.codec, rawLength: region.rawLength, offset: region.offset, body)
        }
    }

    /// The slot region's stored bytes, their CRC checked; failures name the file and count as damage.
    private func withStoredSlotRegion<R>(_ body: (UnsafeRawBufferPointer) throws(TSDBError) -> R)
        throws(TSDBError) -> R
    {
        let region = slotRegion
        do throws(TSDBError) {
            return try file.withBytes { (bytes) throws(TSDBError) in
                let stored = UnsafeRawBufferPointer(
                    rebasing: bytes[region.offset..<region.offset + region.storedLength])
                let crc = CRC32C.checksum(stored)
                guard crc == region.crc else {
                    throw .corrupt(
                        "slot region CRC mismatch (stored \(hex32(region.crc)), computed \(hex32(crc)))",
                        offset: region.offset)
                }
                return try body(stored)
            }
        } catch {
            onDamage?()
            throw located(error)
        }
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(TSDBError) -> Parsed {
        let size = bytes.count
        guard size >= SegmentFormat.headerSize + SegmentFormat.footerSize else {
            throw .corrupt(
                "file is \(size) bytes, shorter than a header and footer "
                    + "(\(SegmentFormat.headerSize + SegmentFormat.footerSize)); truncated?",
                offset: 0)
        }
        try SegmentHeader.check(UnsafeRawBufferPointer(rebasing: bytes[0..<SegmentFormat.headerSize]))
        let footerStart = size - SegmentFormat.footerSize
        let footer = try SegmentFooter.decode(
            UnsafeRawBufferPointer(rebasing: bytes[footerStart..<size]), fileOffset: footerStart)

        // §6 Block index: sits right before the footer.
        // Every size check comes before the arithmetic it protects: fields are untrusted.
        let blockCount = footer.blockCount
        let indexLength = blockCount * SegmentFormat.indexEntrySize
        guard indexLength <= footerStart - SegmentFormat.headerSize,
            footer.indexOffset == UInt64(footerStart - indexLength)
        else {
            throw .corrupt(
                "block index of \(blockCount) entries at offset \(footer.indexOffset) does not end at the footer "
                    + "(\(footerStart))", offset: footerStart + 24)
        }
        let indexStart = footerStart - indexLength
        let indexBytes = UnsafeRawBufferPointer(rebasing: bytes[indexStart..<footerStart])
        let indexCRC = CRC32C.checksum(indexBytes)
        guard indexCRC == footer.indexCRC else {
            throw .corrupt(
                "block index CRC mismatch (stored \(hex32(footer.indexCRC)), computed \(hex32(indexCRC)))",
                offset: indexStart)
        }

        // §6.1 Slot region: sits right before the index.
        let slotStored = footer.slotStoredLength
        guard slotStored <= indexStart - SegmentFormat.headerSize else {
            throw .corrupt(
                "slot region of \(slotStored) bytes does not fit before the index (\(indexStart))",
                offset: footerStart + 48)
        }
        let slotStart = indexStart - slotStored
        let slots = SlotRegionHandle(
            offset: slotStart, storedLength: slotStored, rawLength: footer.slotRawLength, codec: footer.slotCodec,
            crc: footer.slotCRC)

        // §4 Dictionary: sits right before the slot region.
        let dictStored = footer.dictionaryStoredLength
        guard dictStored <= slotStart - SegmentFormat.headerSize,
            footer.dictionaryOffset == UInt64(slotStart - dictStored)
        else {
            throw .corrupt(
                "dictionary of \(dictStored) bytes at offset \(footer.dictionaryOffset) does not end at the slot "
                    + "region (\(slotStart))", offset: footerStart)
        }
        let dictStart = slotStart - dictStored
        let dictStoredBytes = UnsafeRawBufferPointer(rebasing: bytes[dictStart..<slotStart])
        let dictCRC = CRC32C.checksum(dictStoredBytes)
        guard dictCRC == footer.dictionaryCRC else {
            throw .corrupt(
                "dictionary CRC mismatch (stored \(hex32(footer.dictionaryCRC)), computed \(hex32(dictCRC)))",
                offset: dictStart)
        }
        let dictionary = try decompressed(
            dictStoredBytes, codec: footer.dictionaryCodec, rawLength: footer.dictionaryRawLength,
            offset: dictStart
        ) { (raw) throws(TSDBError) in
            try parseDictionary(raw, offset: dictStart)
        }

        // Entries, in file order: blocks are contiguous from the header to the dictionary.
        var locations: [BlockLocation] = []
        var summaries: [BlockSummary] = []
        locations.reserveCapacity(blockCount)
        summaries.reserveCapacity(blockCount)
        var r = ByteReader(indexBytes, baseOffset: indexStart, context: "block index")
        var expectedOffset = SegmentFormat.headerSize
        var total = 0
        var previousLastStart = Int64.min
        for i in 0..<blockCount {
            let entryOffset = r.fileOffset
            let entry = try IndexEntry.decode(&r, index: i)
            func bad(_ what: String) -> TSDBError { .corrupt("block \(i): \(what)", offset: entryOffset) }
            let location = entry.location
            let summary = entry.summary
            guard location.offset == expectedOffset else {
                throw bad("starts at \(location.offset), expected \(expectedOffset) (blocks are contiguous)")
            }
            guard location.storedLength <= dictStart - location.offset else {
                throw bad("\(location.storedLength) stored bytes run past the dictionary at \(dictStart)")
            }
            guard summary.firstStart >= previousLastStart else { throw bad("starts before the previous block ends") }
            previousLastStart = summary.lastStart
            locations.append(location)
            summaries.append(summary)
            expectedOffset = location.offset + location.storedLength
            total += summary.sampleCount
        }
        guard expectedOffset == dictStart else {
            throw .corrupt(
                "blocks end at \(expectedOffset) but the dictionary starts at \(dictStart)", offset: indexStart)
        }
        guard UInt64(total) == footer.sampleCount else {
            throw .corrupt("blocks hold \(total) samples, footer says \(footer.sampleCount)", offset: footerStart + 40)
        }
        return (dictionary, locations, summaries, total, slots)
    }

    /// Runs `body` over the decompressed form of `stored`.
    static func decompressed<R>(
        _ stored: UnsafeRawBufferPointer, codec: BlockCodec, rawLength: Int, offset: Int,
        _ body: (UnsafeRawBufferPointer) throws(TSDBError) -> R
    ) throws(TSDBError) -> R {
        if codec == .none {
            guard stored.count == rawLength else {
                throw .corrupt("stored length \(stored.count) differs from raw length \(rawLength)", offset: offset)
            }
            return try body(stored)
        }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: rawLength + IntColumn.readSlack, alignment: 8)
        defer { scratch.deallocate() }
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        try decompress(
            stored, codec: codec, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<rawLength]), offset: offset)
        return try body(UnsafeRawBufferPointer(rebasing: scratch[0..<rawLength]))
    }

    /// `stored` decompressed into `raw` (exactly filled); a failure names `offset`, where `stored` is.
    static func decompress(
        _ stored: UnsafeRawBufferPointer, codec: BlockCodec, into raw: UnsafeMutableRawBufferPointer, offset: Int
    ) throws(TSDBError) {
        do throws(TSDBError) {
            try codec.decompress(stored, into: raw)
        } catch {
            var e = error
            e.offset = offset
            throw e
        }
    }

    static func parseDictionary(_ raw: UnsafeRawBufferPointer, offset: Int) throws(TSDBError) -> SegmentDictionary {
        var r = ByteReader(raw, baseOffset: offset, context: "dictionary (offsets within its decompressed bytes)")
        var d = SegmentDictionary(
            type: try r.string("type"), year: Int(try r.u16("year")), month: Int(try r.u8("month")))
        guard (1...12).contains(d.month) else { throw r.fail("month \(d.month) is not 1–12") }
        func list() throws(TSDBError) -> [String] {
            let n = try r.count("entry count", limit: r.remaining)
            var out: [String] = []
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try r.string("entry")) }
            return out
        }
        d.units = try list()
        d.sources = try list()
        d.devices = try list()
        d.metadata = try list()
        d.numberTexts = try list()
        let nf = try r.count("time form count", limit: r.remaining / 8)
        // Each half checked on its own (looping over an array of the two allocated one a form).
        func check(_ half: UInt32) throws(TSDBError) {
            // §4.4: bits 22–31 are 0; -00:00 (bit 21) means offset 0 and no Z.
            let flags = half >> 20
            let offset = half & 0xFFFF
            guard half >> 22 == 0, flags != 3, flags != 2 || offset == 0, (half >> 16) & 0xF <= 9 else {
                throw r.fail("time form 0x\(String(half, radix: 16)) has reserved or contradictory bits")
            }
        }
        d.forms.reserveCapacity(nf)
        for _ in 0..<nf {
            let pair = try r.u64("time form pair")
            try check(UInt32(truncatingIfNeeded: pair))
            try check(UInt32(truncatingIfNeeded: pair >> 32))
            d.forms.append(pair)
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) unexpected bytes after the dictionary") }
        return d
    }

    public var blockCount: Int { locations.count }
}

func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

func hex32(_ v: UInt32) -> String { "0x" + String(v, radix: 16, uppercase: true) }
