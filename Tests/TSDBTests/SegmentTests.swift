import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Builds segment bytes from samples the way the compactor does.
func encodeSegment(_ samples: [Sample], blockSamples: Int = 64, codec: BlockCodec = .zstd) -> [UInt8] {
    var strings = ByteInterner()
    var packed = samples.map { PackedSample($0, strings: &strings) }
    Compactor.sortAndDeduplicate(&packed)
    var writer = SegmentWriter()
    writer.blockSamples = blockSamples
    writer.codec = codec
    let (y, m, _) = ISO8601.civil(ISO8601.floorDivide(samples.first?.start.microseconds ?? 0, ISO8601.microsPerDay).0)
    return packed.withUnsafeBufferPointer {
        writer.encode(type: samples.first?.type ?? "T", year: y, month: m, samples: $0, strings: strings)
    }
}

/// Opens and fully decodes a segment file: its blocks and its slot summaries (whose CRC is
/// checked when they are read, not when the file opens).
func readSegment(_ path: String) throws -> [Sample] {
    try readSegment(SegmentReader(path: path))
}

/// Fully decodes an opened segment (a segment inside a larger file, too).
func readSegment(_ reader: SegmentReader) throws -> [Sample] {
    _ = try reader.slotTable()
    let block = DecodedBlock()
    var out: [Sample] = []
    for b in 0..<reader.blockCount {
        try reader.decode(block: b, into: block)
        for i in 0..<block.count { out.append(reader.sample(i, of: block)) }
    }
    return out
}

func randomSamples(_ n: Int, seed: UInt64) -> [Sample] {
    var rng = SplitMix64(seed: seed)
    var t: Int64 = 1_740_787_200_000_000  // 2025-03-01
    let sources: [OptionalText] = [.text("watch"), .text("phone ☎"), .null, .absent]
    let metas: [OptionalText] = [
        .absent, .null, .text(#"{"HKMetadataKeyHeartRateMotionContext":1}"#), .text(#"{"a":[1,"\n"]}"#),
    ]
    return (0..<n).map { i in
        t += Int64.random(in: 0...3, using: &rng) == 0 ? 0 : Int64.random(in: 1...400_000_000, using: &rng)
        let fraction = UInt8.random(in: 0...9, using: &rng)
        let startMicros = fraction == 0 ? t / 1_000_000 * 1_000_000 : fraction < 6 ? t / 1000 * 1000 : t
        let form = TimeForm(
            offsetMinutes: Int16.random(in: -720...840, using: &rng), fractionDigits: min(fraction, 6),
            isZulu: fraction == 7)
        let value: SampleValue
        switch i % 9 {
        case 0: value = .null
        case 1: value = .absent
        case 2: value = .numberText("1.5e\(Int.random(in: -5...5, using: &rng))")
        default:
            value = .decimal(
                ExactDecimal(
                    mantissa: Int64.random(in: -100_000...100_000, using: &rng),
                    scale: UInt8.random(in: 0...18, using: &rng)))
        }
        let duration =
            Int64.random(in: 0...2, using: &rng) == 0
            ? 0 : Int64.random(in: 0...3_600_000_000, using: &rng) / 1000 * 1000
        return Sample(
            type: "HKQuantityTypeIdentifierHeartRate", start: Timestamp(microseconds: startMicros, form: form),
            end: Timestamp(microseconds: startMicros + duration, form: form), value: value,
            unit: i % 5 == 0 ? .null : .text("count/min"), source: sources[i % 4], device: sources[(i / 4) % 4],
            metadata: metas[Int.random(in: 0..<4, using: &rng)])
    }
}

@Suite struct SegmentTests {
    func sorted(_ s: [Sample]) -> [Sample] {
        var strings = ByteInterner()
        var packed = s.map { PackedSample($0, strings: &strings) }
        Compactor.sortAndDeduplicate(&packed)
        return packed.map { unpack($0, &strings) }
    }

    func withFile<R>(_ bytes: [UInt8], _ body: (String) throws -> R) rethrows -> R {
        let folder = TemporaryFolder("segment")
        defer { folder.cleanup() }
        folder.write(bytes: bytes, to: "x.seg")
        return try body(folder.path + "/x.seg")
    }

    func error(_ bytes: [UInt8]) -> TSDBError? {
        withFile(bytes) { path in
            do {
                _ = try readSegment(path)
                return nil
            } catch let e as TSDBError { return e } catch { return nil }
        }
    }

    @Test(arguments: [(1, BlockCodec.zstd), (7, .lz4), (300, .none), (1000, .zstd), (2500, .lz4)])
    func seededRoundTrip(count: Int, codec: BlockCodec) throws {
        let input = randomSamples(count, seed: UInt64(count))
        let bytes = encodeSegment(input, blockSamples: 128, codec: codec)
        let decoded = try withFile(bytes) { try readSegment($0) }
        #expect(decoded == sorted(input))
    }

    @Test func blockSummariesMatchTheData() throws {
        let input = randomSamples(700, seed: 9)
        let bytes = encodeSegment(input, blockSamples: 100)
        try withFile(bytes) { path in
            let reader = try SegmentReader(path: path)
            let block = DecodedBlock()
            #expect(reader.blockCount == 7)
            for b in 0..<reader.blockCount {
                try reader.decode(block: b, into: block)
                let s = reader.summaries[b]
                let values = (0..<block.count).compactMap { block.value(at: $0, in: reader) }
                #expect(s.sampleCount == block.count && s.valueCount == values.count)
                #expect(s.firstStart == block.starts[0] && s.lastStart == block.starts[block.count - 1])
                #expect(s.maxEnd == block.ends.prefix(block.count).max())
                #expect(s.minValue == values.min() && s.maxValue == values.max())
                #expect(abs(s.sum - values.reduce(0, +)) <= 1e-9 * max(1, abs(s.sum)))
            }
        }
    }

    @Test func secondPrecisionUsesSecondUnits() throws {
        // Deltas of 290–310 s: 5 bits each in second units, 25 bits in microseconds.
        var rng = SplitMix64(seed: 5)
        var t: Int64 = 1_740_787_200_000_000
        let input = (0..<100).map { _ in
            t += Int64.random(in: 290...310, using: &rng) * 1_000_000
            return Sample(type: "T", start: Timestamp(microseconds: t), end: Timestamp(microseconds: t), value: .null)
        }
        let bytes = encodeSegment(input, blockSamples: 100, codec: .none)
        try withFile(bytes) { (path) throws in
            let reader = try SegmentReader(path: path)
            #expect(reader.locations[0].timeUnitExponent == 6)
            // 99 deltas × 5 bits ≈ 62 bytes plus ~30 bytes of column headers; µs units would need > 300.
            #expect(reader.locations[0].rawLength < 120)
            #expect(try readSegment(path) == input)
        }
        let millis = input.map { s -> Sample in
            var s = s
            s.start.microseconds += 1000
            s.end.microseconds += 1000
            return s
        }
        var shifted = millis
        shifted[50].start.microseconds += 1000
        shifted[50].end.microseconds += 1000
        try withFile(encodeSegment(shifted, blockSamples: 100, codec: .none)) { (path) throws in
            #expect(try SegmentReader(path: path).locations[0].timeUnitExponent == 3)
        }
    }

    // MARK: One test per failure mode

    @Test func truncatedAtEveryLength() {
        let bytes = encodeSegment(randomSamples(200, seed: 1))
        for n in stride(from: 0, to: bytes.count, by: 1) {
            let e = error(Array(bytes[0..<n]))
            #expect(e?.kind == .corruption, "length \(n)")
        }
    }

    @Test func everySingleByteFlipIsDetected() {
        let bytes = encodeSegment(randomSamples(150, seed: 2), blockSamples: 50)
        for i in 0..<bytes.count {
            var damaged = bytes
            damaged[i] ^= 0x10
            let e = error(damaged)
            #expect(e != nil, "flip at \(i) went unnoticed")
        }
    }

    @Test func flippedHeaderByte() {
        var bytes = encodeSegment(randomSamples(10, seed: 3))
        bytes[3] ^= 1
        let e = error(bytes)
        #expect(e?.message.contains("bad magic") == true && e?.offset == 0)
        #expect(e?.path?.hasSuffix("x.seg") == true)
    }

    @Test func wrongVersion() {
        var bytes = encodeSegment(randomSamples(10, seed: 3))
        bytes[8] = 2
        let crc = CRC32C.checksum(Array(bytes[0..<12]))
        for k in 0..<4 { bytes[12 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        let e = error(bytes)
        #expect(e?.kind == .unsupportedVersion && e?.message.contains("version 2") == true)
    }

    /// A flipped bit in the version field is damage (the header CRC says so), not a newer format:
    /// "unsupported version" would send the user to upgrade instead of rebuilding.
    @Test func flippedVersionBitIsCorruption() {
        for bit in 0..<16 {
            var bytes = encodeSegment(randomSamples(10, seed: 3))
            bytes[8 + bit / 8] ^= UInt8(1 << (bit % 8))
            let e = error(bytes)
            #expect(e?.kind == .corruption && e?.message.contains("header CRC") == true, "bit \(bit)")
        }
    }

    @Test func badHeaderCRC() {
        var bytes = encodeSegment(randomSamples(10, seed: 3))
        bytes[13] ^= 0xFF
        #expect(error(bytes)?.message.contains("header CRC") == true)
    }

    @Test func flippedBlockByte() {
        var bytes = encodeSegment(randomSamples(100, seed: 4))
        bytes[SegmentFormat.headerSize + 5] ^= 0x01
        let e = error(bytes)
        #expect(e?.message.contains("block 0 CRC mismatch") == true && e?.offset == SegmentFormat.headerSize)
    }

    @Test func flippedFooterByte() {
        var bytes = encodeSegment(randomSamples(100, seed: 4))
        bytes[bytes.count - SegmentFormat.footerSize + 41] ^= 0x01
        #expect(error(bytes)?.message.contains("footer CRC") == true)
    }

    @Test func flippedIndexByte() {
        var bytes = encodeSegment(randomSamples(100, seed: 4))
        bytes[bytes.count - SegmentFormat.footerSize - 3] ^= 0x01
        #expect(error(bytes)?.message.contains("block index CRC mismatch") == true)
    }

    @Test func flippedDictionaryByte() throws {
        var bytes = encodeSegment(randomSamples(100, seed: 4))
        let dictOffset = Int(
            bytes.withUnsafeBytes {
                $0.loadUnaligned(fromByteOffset: bytes.count - SegmentFormat.footerSize, as: UInt64.self)
            })
        bytes[dictOffset + 1] ^= 0x01
        let e = error(bytes)
        #expect(e?.message.contains("dictionary CRC mismatch") == true && e?.offset == dictOffset)
    }

    @Test func notASegment() {
        let text =
            #"{"date":"2025-01-01","samples":[]} plus enough bytes to pass the size check"#
            + String(repeating: ".", count: 24)
        let e = error(Array(text.utf8))
        #expect(e?.kind == .corruption)
    }

    /// A segment read from its place in a larger file (manifest-v4.md §1): one that starts off a
    /// page boundary reads as the file of its bytes alone, and damage is reported at its offset
    /// in the file, not in the segment.
    @Test(arguments: [0, 8, 4096, 4101 * 8])
    func aSegmentInsideAFile(at offset: Int) throws {
        let samples = randomSamples(300, seed: 11)
        let segment = encodeSegment(samples, blockSamples: 64, codec: .lz4)
        let folder = TemporaryFolder("segment-in-file")
        defer { folder.cleanup() }
        let before = [UInt8](repeating: 0xA5, count: offset)
        folder.write(bytes: before + segment + [1, 2, 3], to: "pack.seg")
        folder.write(bytes: segment, to: "alone.seg")
        let path = folder.path + "/pack.seg"
        let reader = try SegmentReader(path: path, offset: offset, count: segment.count)
        #expect(reader.offset == offset && reader.size == segment.count)
        #expect(try readSegment(reader) == (try readSegment(folder.path + "/alone.seg")))

        var damaged = before + segment
        damaged[offset + SegmentFormat.headerSize + 5] ^= 0x01
        folder.write(bytes: damaged, to: "damaged.seg")
        let opened = try SegmentReader(path: folder.path + "/damaged.seg", offset: offset, count: segment.count)
        let e = #expect(throws: TSDBError.self) { try opened.decode(block: 0, into: DecodedBlock()) }
        #expect(e?.message.contains("block 0 CRC mismatch") == true)
        #expect(e?.offset == offset + SegmentFormat.headerSize && e?.path == folder.path + "/damaged.seg")

        var header = before + segment
        header[offset + 3] ^= 1
        folder.write(bytes: header, to: "header.seg")
        let bad = #expect(throws: TSDBError.self) {
            try SegmentReader(path: folder.path + "/header.seg", offset: offset, count: segment.count)
        }
        #expect(bad?.message.contains("bad magic") == true && bad?.offset == offset)
    }

    /// A place past the end of its file is damage, named with the file's size.
    @Test func aSegmentPastItsFilesEnd() {
        let folder = TemporaryFolder("segment-past-end")
        defer { folder.cleanup() }
        folder.write(bytes: [UInt8](repeating: 0, count: 100), to: "short.seg")
        let e = #expect(throws: TSDBError.self) {
            try SegmentReader(path: folder.path + "/short.seg", offset: 60, count: 41)
        }
        #expect(e?.kind == .corruption && e?.message.contains("file is 100 bytes") == true)
    }

    @Test func emptyFile() {
        #expect(error([])?.message.contains("truncated") == true)
    }
}

/// Blocks whose every length, offset and CRC is right but whose columns are not: only the
/// checks after decoding can tell, and each failure must be named with its sample.
@Suite struct DecodedColumnCheckTests {
    /// 40 heart rates five minutes apart (no slot summaries), in one block.
    static let samples = SlotSummaryTests.series(40, seed: 5).enumerated().map { i, s -> Sample in
        var s = s
        s.start.microseconds = 1_740_787_200_000_000 + Int64(i) * 300_000_000
        s.end = s.start
        return s
    }

    /// The segment of ``samples`` (codec none) with its block's columns as `tamper` leaves them,
    /// and every length, offset and CRC made right again.
    func segment(tampering tamper: (BlockColumns) -> Void) throws -> [UInt8] {
        let bytes = encodeSegment(Self.samples, blockSamples: 1000, codec: .none)
        let footerStart = bytes.count - SegmentFormat.footerSize
        var footer = try bytes.withUnsafeBytes { (b) throws in
            try SegmentFooter.decode(UnsafeRawBufferPointer(rebasing: b[footerStart...]), fileOffset: footerStart)
        }
        let (dictionaryStart, indexStart) = (Int(footer.dictionaryOffset), Int(footer.indexOffset))
        var entry = try bytes.withUnsafeBytes { (b) throws in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: b[indexStart..<footerStart]), context: "index")
            return try IndexEntry.decode(&r, index: 0)
        }
        #expect(footer.blockCount == 1 && entry.location.codec == .none)
        let n = entry.summary.sampleCount
        let raw =
            Array(bytes[entry.location.offset..<dictionaryStart]) + Array(repeating: 0, count: IntColumn.readSlack)
        let columns = BlockColumns(capacity: n)
        columns.count = n
        try raw.withUnsafeBytes { (b) throws in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: b[0..<entry.location.rawLength]), context: "block")
            for c in Column.allCases { _ = try IntColumn.decode(&r, count: n, into: columns[c]) }
        }
        tamper(columns)
        let block = columns.encode()
        let shift = block.count - entry.location.storedLength
        entry.location.storedLength = block.count
        entry.location.rawLength = block.count
        entry.location.crc = CRC32C.checksum(block)
        var index = ByteWriter()
        entry.encode(into: &index)
        footer.dictionaryOffset += UInt64(shift)
        footer.indexOffset += UInt64(shift)
        footer.indexCRC = CRC32C.checksum(index.bytes)
        var out = ByteWriter()
        out.append(Array(bytes[0..<entry.location.offset]))
        out.append(block)
        out.append(Array(bytes[dictionaryStart..<indexStart]))  // the dictionary and the slot region
        out.append(index.bytes)
        footer.encode(into: &out)
        return out.bytes
    }

    /// The error of decoding the tampered block whole, after checking that decoding only its
    /// values (as aggregates do) fails the same way when the damage is in the columns they read.
    func failure(_ tamper: (BlockColumns) -> Void, inValues: Bool = true) throws -> String? {
        let folder = TemporaryFolder("columns")
        defer { folder.cleanup() }
        folder.write(bytes: try segment(tampering: tamper), to: "x.seg")
        func message(_ columns: ColumnSet) throws -> String? {
            do {
                try SegmentReader(path: folder.path + "/x.seg").decode(block: 0, into: DecodedBlock(), columns: columns)
                return nil
            } catch { return error.message }
        }
        let whole = try message(.all)
        if inValues { #expect(try message(.values) == whole) }
        return whole
    }

    @Test func untouchedColumnsDecode() throws {
        #expect(try failure { _ in } == nil)
    }

    @Test func startsOutOfOrder() throws {
        #expect(try failure { swap(&$0[.start][7], &$0[.start][8]) } == "block 0: sample 8: starts are not in order")
    }

    /// A start column stored as plain values (FOR): its headers bound the offsets but, unlike
    /// deltas that are never negative, do not prove their order, so the instants are checked.
    @Test func startsOutOfOrderInAFrameOfReferenceColumn() throws {
        // Offsets far apart both ways pack narrower as values than as deltas.
        let zigzag = { (columns: BlockColumns) in
            for i in 1..<39 { columns[.start][i] = i % 2 == 1 ? 11_000 : 100 }
        }
        let bytes = try segment(tampering: zigzag)
        #expect(bytes[SegmentFormat.headerSize] == IntColumn.Encoding.frameOfReference.rawValue)
        #expect(try failure(zigzag) == "block 0: sample 2: starts are not in order")
    }

    @Test func startBeforeTheBlock() throws {
        #expect(try failure { $0[.start][0] = -1 } == "block 0: sample 0: starts are not in order")
    }

    @Test func startOverflowing() throws {
        #expect(try failure { $0[.start][39] = .max / 100 } == "block 0: sample 39: time overflows 64 bits")
    }

    @Test func negativeDuration() throws {
        #expect(try failure({ $0[.duration][6] = -1 }, inValues: false) == "block 0: sample 6: negative duration")
    }

    @Test func idsOutOfRange() throws {
        let source = try failure({ $0[.source][12] = 9 }, inValues: false)
        #expect(source == "block 0: sample 12: source id 9 out of range")
        #expect(try failure({ $0[.unit][3] = -1 }, inValues: false) == "block 0: sample 3: unit id -1 out of range")
        #expect(try failure { $0[.valueTag][5] = 22 } == "block 0: sample 5: value tag id 22 out of range")
    }

    @Test func numberTextOutOfRange() throws {
        let message = try failure {
            $0[.valueTag][30] = Int64(ValueTag.numberText)
            $0[.mantissa][30] = 4
        }
        #expect(message == "block 0: sample 30: number text id 4 out of range")
    }
}

/// Index entries (§6) read field by field at their offsets: every field round-trips, and each
/// check of an entry on its own names what is wrong.
@Suite struct IndexEntryTests {
    static func entry(_ rng: inout SplitMix64) -> IndexEntry {
        let first = Int64(bitPattern: rng.next()) >> 8
        let count = 1 + Int(rng.next() % UInt64(SegmentFormat.maxBlockSamples))
        let codec = BlockCodec(rawValue: UInt8(rng.next() % 3))!
        let location = BlockLocation(
            offset: Int(rng.next() >> 2), storedLength: Int(rng.next() >> 33),
            rawLength: Int(rng.next() % UInt64(count * 9 * 12 + 65)),
            crc: UInt32(truncatingIfNeeded: rng.next()), codec: codec, timeUnitExponent: UInt8(rng.next() % 7))
        let summary = BlockSummary(
            sampleCount: count, valueCount: Int(rng.next() % UInt64(count + 1)), firstStart: first,
            lastStart: first + Int64(rng.next() >> 40), maxEnd: first + Int64(rng.next() >> 39),
            minValue: Double(Int64(bitPattern: rng.next())) / 3, maxValue: Double(rng.next()),
            sum: -Double(rng.next()), sumOfSquaredDeviations: Double(rng.next() >> 11))
        var e = IndexEntry(location: location, summary: summary)
        e.summary.maxEnd = max(e.summary.maxEnd, e.summary.lastStart)
        return e
    }

    func decode(_ bytes: [UInt8]) throws(TSDBError) -> IndexEntry {
        let result: Result<IndexEntry, TSDBError> = bytes.withUnsafeBytes { b in
            var r = ByteReader(b, baseOffset: 1000, context: "block index")
            do throws(TSDBError) {
                let e = try IndexEntry.decode(&r, index: 3)
                return r.isAtEnd ? .success(e) : .failure(r.fail("bytes left"))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    @Test func seededEntriesRoundTrip() throws {
        var rng = SplitMix64(seed: 88)
        for _ in 0..<500 {
            let e = Self.entry(&rng)
            var w = ByteWriter()
            e.encode(into: &w)
            #expect(w.count == SegmentFormat.indexEntrySize)
            #expect(try decode(w.bytes) == e)
        }
    }

    /// The entry's bytes with `value` written at `offset` (little-endian, `size` bytes).
    func tampered(offset: Int, size: Int, value: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: 1)
        var w = ByteWriter()
        Self.entry(&rng).encode(into: &w)
        var bytes = w.bytes
        for k in 0..<size { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
        return bytes
    }

    func message(offset: Int, size: Int, value: UInt64) -> String? {
        do {
            _ = try decode(tampered(offset: offset, size: size, value: value))
            return nil
        } catch { return error.offset == 1000 ? error.message : "at \(String(describing: error.offset))" }
    }

    @Test func eachFieldCheckNamesTheBlock() {
        #expect(message(offset: 0, size: 8, value: .max) == "block 3: offset 18446744073709551615 is out of range")
        #expect(message(offset: 24, size: 1, value: 3) == "block 3: unknown codec 3")
        #expect(message(offset: 25, size: 1, value: 7) == "block 3: time unit exponent 7 > 6")
        #expect(message(offset: 20, size: 4, value: 0) == "block 3: sample count 0 outside 1...65536")
        #expect(message(offset: 20, size: 4, value: 65_537) == "block 3: sample count 65537 outside 1...65536")
        #expect(message(offset: 26, size: 2, value: 0x100) == "block 3: reserved bytes are not zero")
        #expect(message(offset: 80, size: 8, value: (-1.0).bitPattern)?.contains("is not ≥ 0") == true)
        #expect(
            message(offset: 40, size: 8, value: UInt64(bitPattern: .min)) == "block 3: start/end summary out of order")
    }

    @Test func shortEntryIsCorruption() {
        var w = ByteWriter()
        var rng = SplitMix64(seed: 2)
        Self.entry(&rng).encode(into: &w)
        for n in 0..<SegmentFormat.indexEntrySize {
            #expect(throws: TSDBError.self) { try decode(Array(w.bytes[0..<n])) }
        }
    }
}
