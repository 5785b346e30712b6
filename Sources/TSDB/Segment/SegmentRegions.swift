/// The fixed-layout regions of a segment file (Formats/segment-v3.md), each encoding and decoding
/// itself, as leveldb's `Footer` and `BlockHandle` do. Decoding checks what one region can check
/// alone (magic, version, CRC, reserved bytes, field ranges); how regions fit together is the
/// reader's (``SegmentReader``).

/// §3 The 16-byte header: magic, version, flags (0), CRC-32C of the first 12 bytes.
enum SegmentHeader {
    static func encode(into w: inout ByteWriter) {
        let start = w.bytes.count
        w.append(SegmentFormat.magic)
        w.u16(SegmentFormat.version)
        w.u16(0)
        w.u32(w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<start + 12])) })
    }

    static func check(_ bytes: UnsafeRawBufferPointer) throws(TSDBError) {
        var r = ByteReader(bytes, context: "header")
        let magic = try r.bytes(8, "magic")
        guard magic.elementsEqual(SegmentFormat.magic) else {
            throw .corrupt(
                "bad magic \(hex(magic)), expected \(hex(SegmentFormat.magic)) (not a tsdb segment)", offset: 0)
        }
        let version = try r.u16("version")
        let flags = try r.u16("flags")
        let stored = try r.u32("header CRC")
        // §3: the CRC before the version, so a damaged version field is damage, not a newer format.
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
        guard stored == computed else {
            throw .corrupt("header CRC is \(hex32(stored)), computed \(hex32(computed))", offset: 12)
        }
        guard version == SegmentFormat.version else {
            throw .unsupportedVersion(
                "segment format version \(version); this build reads version \(SegmentFormat.version)",
                offset: 8)
        }
        guard flags == 0 else { throw .corrupt("header flags are \(flags), expected 0", offset: 10) }
    }
}

/// §7 The 80-byte footer: where the dictionary, the slot region and the index are, block and sample counts.
struct SegmentFooter: Equatable {
    var dictionaryOffset: UInt64
    var dictionaryStoredLength: Int
    var dictionaryRawLength: Int
    var dictionaryCRC: UInt32
    var dictionaryCodec: BlockCodec
    var indexOffset: UInt64
    var blockCount: Int
    var indexCRC: UInt32
    var sampleCount: UInt64
    var slotCodec: BlockCodec
    var slotStoredLength: Int
    var slotRawLength: Int
    var slotCRC: UInt32

    func encode(into w: inout ByteWriter) {
        let start = w.bytes.count
        w.u64(dictionaryOffset)
        w.u32(UInt32(dictionaryStoredLength))
        w.u32(UInt32(dictionaryRawLength))
        w.u32(dictionaryCRC)
        w.u8(dictionaryCodec.rawValue)
        w.u8(slotCodec.rawValue)
        w.u16(0)
        w.u64(indexOffset)
        w.u32(UInt32(blockCount))
        w.u32(indexCRC)
        w.u64(sampleCount)
        w.u32(UInt32(slotStoredLength))
        w.u32(UInt32(slotRawLength))
        w.u32(slotCRC)
        w.u32(0)
        w.u32(0)
        w.u32(w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<start + 68])) })
        w.append(SegmentFormat.magic)
    }

    /// Decodes the last `SegmentFormat.footerSize` bytes of a file, found at `fileOffset`.
    static func decode(_ bytes: UnsafeRawBufferPointer, fileOffset: Int) throws(TSDBError) -> SegmentFooter {
        guard UnsafeRawBufferPointer(rebasing: bytes[72..<80]).elementsEqual(SegmentFormat.magic) else {
            throw .corrupt(
                "footer magic missing at the end of the file; truncated or not a segment", offset: fileOffset + 72)
        }
        let stored = bytes.loadUnaligned(fromByteOffset: 68, as: UInt32.self).littleEndian
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<68]))
        guard stored == computed else {
            throw .corrupt("footer CRC is \(hex32(stored)), computed \(hex32(computed))", offset: fileOffset + 68)
        }
        var r = ByteReader(bytes, baseOffset: fileOffset, context: "footer")
        let dictionaryOffset = try r.u64("dictionary offset")
        let stored0 = Int(try r.u32("dictionary stored length"))
        let raw = Int(try r.u32("dictionary raw length"))
        let dictionaryCRC = try r.u32("dictionary CRC")
        let codecByte = try r.u8("dictionary codec")
        guard let codec = BlockCodec(rawValue: codecByte) else {
            throw .corrupt("unknown dictionary codec \(codecByte)", offset: fileOffset + 20)
        }
        let slotCodecByte = try r.u8("slot region codec")
        guard let slotCodec = BlockCodec(rawValue: slotCodecByte) else {
            throw .corrupt("unknown slot region codec \(slotCodecByte)", offset: fileOffset + 21)
        }
        try r.zeros(2, "reserved")
        let footer = SegmentFooter(
            dictionaryOffset: dictionaryOffset, dictionaryStoredLength: stored0, dictionaryRawLength: raw,
            dictionaryCRC: dictionaryCRC, dictionaryCodec: codec, indexOffset: try r.u64("index offset"),
            blockCount: Int(try r.u32("block count")), indexCRC: try r.u32("index CRC"),
            sampleCount: try r.u64("sample count"), slotCodec: slotCodec,
            slotStoredLength: Int(try r.u32("slot region stored length")),
            slotRawLength: Int(try r.u32("slot region raw length")), slotCRC: try r.u32("slot region CRC"))
        try r.zeros(8, "reserved")
        guard raw <= 1 << 30 else {
            throw .corrupt("dictionary raw length \(raw) is implausible", offset: fileOffset + 12)
        }
        guard footer.slotRawLength <= 1 << 30 else {
            throw .corrupt("slot region raw length \(footer.slotRawLength) is implausible", offset: fileOffset + 52)
        }
        return footer
    }
}

/// §6 One 88-byte block index entry: where the block is, how it is stored, and its summary.
struct IndexEntry: Equatable {
    var location: BlockLocation
    var summary: BlockSummary

    func encode(into w: inout ByteWriter) {
        w.u64(UInt64(location.offset))
        w.u32(UInt32(location.storedLength))
        w.u32(UInt32(location.rawLength))
        w.u32(location.crc)
        w.u32(UInt32(summary.sampleCount))
        w.u8(location.codec.rawValue)
        w.u8(location.timeUnitExponent)
        w.u16(0)
        w.u32(UInt32(summary.valueCount))
        w.i64(summary.firstStart)
        w.i64(summary.lastStart)
        w.i64(summary.maxEnd)
        w.f64(summary.minValue)
        w.f64(summary.maxValue)
        w.f64(summary.sum)
        w.f64(summary.sumOfSquaredDeviations)
    }

    /// Decodes entry `index` and checks its fields on their own (not yet its place in the file).
    static func decode(_ r: inout ByteReader, index: Int) throws(TSDBError) -> IndexEntry {
        let entryOffset = r.fileOffset
        func bad(_ what: String) -> TSDBError { .corrupt("block \(index): \(what)", offset: entryOffset) }
        // §6, field by field at the table's offsets.
        let e = try r.record(SegmentFormat.indexEntrySize, "index entry")
        let offset = e.u64(at: 0)
        let stored = Int(e.u32(at: 8))
        let raw = Int(e.u32(at: 12))
        let crc = e.u32(at: 16)
        let count = Int(e.u32(at: 20))
        let codecByte = e.u8(at: 24)
        let exponent = e.u8(at: 25)
        guard e.u16(at: 26) == 0 else { throw bad("reserved bytes are not zero") }
        let valueCount = Int(e.u32(at: 28))
        let summary = BlockSummary(
            sampleCount: count, valueCount: valueCount, firstStart: e.i64(at: 32), lastStart: e.i64(at: 40),
            maxEnd: e.i64(at: 48), minValue: e.f64(at: 56), maxValue: e.f64(at: 64), sum: e.f64(at: 72),
            sumOfSquaredDeviations: e.f64(at: 80))
        guard offset <= UInt64(Int.max) else { throw bad("offset \(offset) is out of range") }
        guard let codec = BlockCodec(rawValue: codecByte) else { throw bad("unknown codec \(codecByte)") }
        guard exponent <= SegmentFormat.maxTimeUnitExponent else {
            throw bad("time unit exponent \(exponent) > \(SegmentFormat.maxTimeUnitExponent)")
        }
        guard count >= 1, count <= SegmentFormat.maxBlockSamples else {
            throw bad("sample count \(count) outside 1...\(SegmentFormat.maxBlockSamples)")
        }
        guard valueCount <= count else { throw bad("value count \(valueCount) exceeds sample count \(count)") }
        guard summary.sumOfSquaredDeviations >= 0 else {
            throw bad("sum of squared deviations \(summary.sumOfSquaredDeviations) is not ≥ 0")
        }
        guard raw <= count * 9 * 12 + 64 else { throw bad("raw length \(raw) is implausible for \(count) samples") }
        guard summary.firstStart <= summary.lastStart, summary.maxEnd >= summary.lastStart else {
            throw bad("start/end summary out of order")
        }
        let location = BlockLocation(
            offset: Int(offset), storedLength: stored, rawLength: raw, crc: crc, codec: codec,
            timeUnitExponent: exponent)
        return IndexEntry(location: location, summary: summary)
    }
}
