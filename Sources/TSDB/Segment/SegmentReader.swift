/// A validated, memory-mapped segment file.
///
/// Opening checks everything outside the blocks: size, header magic/version/CRC, footer CRC and
/// magic, section bounds, dictionary and index CRCs, and that index entries are in bounds and in
/// order. Each block's CRC is checked when it is decoded. Any failure is a ``TSDBError`` naming the
/// file and offset; nothing is trusted before it is checked.
public final class SegmentReader: @unchecked Sendable {
    public let path: String
    let file: MappedFile
    let dictionary: SegmentDictionary
    let locations: [BlockLocation]
    public let summaries: [BlockSummary]
    public let sampleCount: Int

    /// Strings for dictionary ids (0 absent, 1 null, k+2 entry k).
    let units: [OptionalText], sources: [OptionalText], devices: [OptionalText], metadata: [OptionalText]
    let forms: [(TimeForm, TimeForm)]

    public var type: String { dictionary.type }
    public var year: Int { dictionary.year }
    public var month: Int { dictionary.month }
    public var fileSize: Int { file.count }
    /// Called when a block fails its checks (the store remembers the segment for repair).
    let onDamage: (@Sendable () -> Void)?

    public convenience init(path: String) throws(TSDBError) {
        try self.init(file: MappedFile(path: path))
    }

    convenience init(path: String, onDamage: @escaping @Sendable () -> Void) throws(TSDBError) {
        try self.init(file: MappedFile(path: path), onDamage: onDamage)
    }

    init(file: MappedFile, onDamage: (@Sendable () -> Void)? = nil) throws(TSDBError) {
        self.path = file.path
        self.file = file
        self.onDamage = onDamage
        do {
            let parsed = try file.withBytes { (bytes) throws(TSDBError) in try Self.parse(bytes) }
            (dictionary, locations, summaries, sampleCount) = parsed
        } catch {
            throw error.at(path: file.path)
        }
        func table(_ list: [String]) -> [OptionalText] { [.absent, .null] + list.map { .text($0) } }
        units = table(dictionary.units)
        sources = table(dictionary.sources)
        devices = table(dictionary.devices)
        metadata = table(dictionary.metadata)
        forms = dictionary.forms.map { TimeForm.unpair($0) }
    }

    typealias Parsed = (SegmentDictionary, [BlockLocation], [BlockSummary], Int)

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(TSDBError) -> Parsed {
        let size = bytes.count
        guard size >= SegmentFormat.headerSize + SegmentFormat.footerSize else {
            throw .corrupt("file is \(size) bytes, shorter than a header and footer (\(SegmentFormat.headerSize + SegmentFormat.footerSize)); truncated?", offset: 0)
        }
        // §3 Header.
        var header = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[0..<SegmentFormat.headerSize]), context: "header")
        let magic = try header.bytes(8, "magic")
        guard magic.elementsEqual(SegmentFormat.magic) else {
            throw .corrupt("bad magic \(hex(magic)), expected \(hex(SegmentFormat.magic)) (not a tsdb segment)", offset: 0)
        }
        let version = try header.u16("version")
        guard version == SegmentFormat.version else {
            throw TSDBError.unsupportedVersion("segment format version \(version); this build reads version \(SegmentFormat.version)", offset: 8)
        }
        let flags = try header.u16("flags")
        let headerCRC = try header.u32("header CRC")
        let computedHeaderCRC = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
        guard headerCRC == computedHeaderCRC else {
            throw .corrupt("header CRC is \(hex32(headerCRC)), computed \(hex32(computedHeaderCRC))", offset: 12)
        }
        guard flags == 0 else { throw .corrupt("header flags are \(flags), expected 0", offset: 10) }

        // §7 Footer.
        let footerStart = size - SegmentFormat.footerSize
        let footerBytes = UnsafeRawBufferPointer(rebasing: bytes[footerStart..<size])
        guard UnsafeRawBufferPointer(rebasing: footerBytes[56..<64]).elementsEqual(SegmentFormat.magic) else {
            throw .corrupt("footer magic missing at the end of the file; truncated or not a segment", offset: size - 8)
        }
        var footer = ByteReader(footerBytes, baseOffset: footerStart, context: "footer")
        let dictOffset = try footer.u64("dictionary offset")
        let dictStored = Int(try footer.u32("dictionary stored length"))
        let dictRaw = Int(try footer.u32("dictionary raw length"))
        let dictCRC = try footer.u32("dictionary CRC")
        let dictCodecByte = try footer.u8("dictionary codec")
        try footer.skip(3, "reserved")
        let indexOffset = try footer.u64("index offset")
        let blockCount = Int(try footer.u32("block count"))
        let indexCRC = try footer.u32("index CRC")
        let sampleCount = try footer.u64("sample count")
        try footer.skip(4, "reserved")
        let footerCRC = try footer.u32("footer CRC")
        let computedFooterCRC = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: footerBytes[0..<52]))
        guard footerCRC == computedFooterCRC else {
            throw .corrupt("footer CRC is \(hex32(footerCRC)), computed \(hex32(computedFooterCRC))", offset: footerStart + 52)
        }

        // §6 Block index: sits right before the footer.
        // Every size check comes before the arithmetic it protects: fields are untrusted.
        let indexLength = blockCount * SegmentFormat.indexEntrySize
        guard indexLength <= footerStart - SegmentFormat.headerSize, indexOffset == UInt64(footerStart - indexLength) else {
            throw .corrupt("block index of \(blockCount) entries at offset \(indexOffset) does not end at the footer (\(footerStart))", offset: footerStart + 24)
        }
        let indexStart = footerStart - indexLength
        let indexBytes = UnsafeRawBufferPointer(rebasing: bytes[indexStart..<footerStart])
        guard CRC32C.checksum(indexBytes) == indexCRC else {
            throw .corrupt("block index CRC mismatch (stored \(hex32(indexCRC)), computed \(hex32(CRC32C.checksum(indexBytes))))", offset: indexStart)
        }

        // §4 Dictionary: sits right before the index.
        guard dictStored <= indexStart - SegmentFormat.headerSize, dictOffset == UInt64(indexStart - dictStored) else {
            throw .corrupt("dictionary of \(dictStored) bytes at offset \(dictOffset) does not end at the index (\(indexStart))", offset: footerStart)
        }
        let dictStart = indexStart - dictStored
        guard let dictCodec = BlockCodec(rawValue: dictCodecByte) else {
            throw .corrupt("unknown dictionary codec \(dictCodecByte)", offset: footerStart + 20)
        }
        let dictStoredBytes = UnsafeRawBufferPointer(rebasing: bytes[dictStart..<indexStart])
        guard CRC32C.checksum(dictStoredBytes) == dictCRC else {
            throw .corrupt("dictionary CRC mismatch (stored \(hex32(dictCRC)), computed \(hex32(CRC32C.checksum(dictStoredBytes))))", offset: dictStart)
        }
        guard dictRaw <= 1 << 30 else { throw .corrupt("dictionary raw length \(dictRaw) is implausible", offset: footerStart + 12) }
        let dictionary = try decompressed(dictStoredBytes, codec: dictCodec, rawLength: dictRaw, offset: dictStart) { (raw) throws(TSDBError) in
            try parseDictionary(raw, offset: dictStart)
        }

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
            let rawOffset = try r.u64("block offset")
            let stored = Int(try r.u32("stored length"))
            let raw = Int(try r.u32("raw length"))
            let crc = try r.u32("block CRC")
            let count = Int(try r.u32("sample count"))
            let codecByte = try r.u8("codec")
            let exponent = try r.u8("time unit")
            try r.skip(2, "reserved")
            let valueCount = Int(try r.u32("value count"))
            let summary = BlockSummary(sampleCount: count, valueCount: valueCount, firstStart: try r.i64(), lastStart: try r.i64(),
                                       maxEnd: try r.i64(), minValue: try r.f64(), maxValue: try r.f64(), sum: try r.f64(), sumOfSquaredDeviations: try r.f64())
            func bad(_ what: String) -> TSDBError { .corrupt("block \(i): \(what)", offset: entryOffset) }
            guard rawOffset == UInt64(expectedOffset) else { throw bad("starts at \(rawOffset), expected \(expectedOffset) (blocks are contiguous)") }
            let offset = expectedOffset
            guard stored <= dictStart - offset else { throw bad("\(stored) stored bytes run past the dictionary at \(dictOffset)") }
            guard let codec = BlockCodec(rawValue: codecByte) else { throw bad("unknown codec \(codecByte)") }
            guard exponent <= SegmentFormat.maxTimeUnitExponent else { throw bad("time unit exponent \(exponent) > \(SegmentFormat.maxTimeUnitExponent)") }
            guard count >= 1, count <= SegmentFormat.maxBlockSamples else { throw bad("sample count \(count) outside 1...\(SegmentFormat.maxBlockSamples)") }
            guard valueCount <= count else { throw bad("value count \(valueCount) exceeds sample count \(count)") }
            guard summary.sumOfSquaredDeviations >= 0 else {
                throw bad("sum of squared deviations \(summary.sumOfSquaredDeviations) is not ≥ 0")
            }
            guard raw <= count * 9 * 12 + 64 else { throw bad("raw length \(raw) is implausible for \(count) samples") }
            guard summary.firstStart <= summary.lastStart, summary.firstStart >= previousLastStart, summary.maxEnd >= summary.lastStart else {
                throw bad("start/end summary out of order")
            }
            previousLastStart = summary.lastStart
            locations.append(BlockLocation(offset: offset, storedLength: stored, rawLength: raw, crc: crc, codec: codec, timeUnitExponent: exponent))
            summaries.append(summary)
            expectedOffset = offset + stored
            total += count
        }
        guard expectedOffset == dictStart else {
            throw .corrupt("blocks end at \(expectedOffset) but the dictionary starts at \(dictStart)", offset: indexStart)
        }
        guard UInt64(total) == sampleCount else {
            throw .corrupt("blocks hold \(total) samples, footer says \(sampleCount)", offset: footerStart + 40)
        }
        return (dictionary, locations, summaries, total)
    }

    /// Runs `body` over the decompressed form of `stored`.
    static func decompressed<R>(_ stored: UnsafeRawBufferPointer, codec: BlockCodec, rawLength: Int, offset: Int,
                                _ body: (UnsafeRawBufferPointer) throws(TSDBError) -> R) throws(TSDBError) -> R {
        if codec == .none {
            guard stored.count == rawLength else { throw .corrupt("stored length \(stored.count) differs from raw length \(rawLength)", offset: offset) }
            return try body(stored)
        }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: rawLength + IntColumn.readSlack, alignment: 8)
        defer { scratch.deallocate() }
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        do throws(TSDBError) {
            try codec.decompress(stored, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<rawLength]))
        } catch {
            var e = error
            e.offset = offset
            throw e
        }
        return try body(UnsafeRawBufferPointer(rebasing: scratch[0..<rawLength]))
    }

    static func parseDictionary(_ raw: UnsafeRawBufferPointer, offset: Int) throws(TSDBError) -> SegmentDictionary {
        var r = ByteReader(raw, baseOffset: offset, context: "dictionary (offsets within its decompressed bytes)")
        var d = SegmentDictionary(type: try r.string("type"), year: Int(try r.u16("year")), month: Int(try r.u8("month")))
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
        for _ in 0..<nf {
            let pair = try r.u64("time form pair")
            for half in [UInt32(truncatingIfNeeded: pair), UInt32(truncatingIfNeeded: pair >> 32)] {
                // §4.4: bits 22–31 are 0; -00:00 (bit 21) means offset 0 and no Z.
                let flags = half >> 20, offset = half & 0xFFFF
                guard half >> 22 == 0, flags != 3, flags != 2 || offset == 0, (half >> 16) & 0xF <= 9 else {
                    throw r.fail("time form 0x\(String(half, radix: 16)) has reserved or contradictory bits")
                }
            }
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
