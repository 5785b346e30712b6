import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

@Suite struct CRC32CTests {
    @Test func checkValue() {
        #expect(CRC32C.checksum("123456789") == 0xE306_9283)
    }

    /// Where the processor has the instruction, it is used: the answer glibc found at start-up is
    /// read back, so this checks it against the kernel's list of the processor's features.
    @Test func theInstructionIsUsedWhereTheProcessorHasIt() throws {
        #if arch(x86_64) && os(Linux)
            let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
            let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
            #expect(CRC32C.hardware == flags.split(separator: " ").contains("sse4_2"))
        #endif
    }

    @Test func knownVectors() {
        // RFC 3720 B.4: 32 bytes of zeros, of 0xFF, and ascending bytes.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func slicedEqualsBytewise() {
        var rng = SplitMix64(seed: 7)
        for n in [1, 7, 8, 9, 15, 16, 17, 100, 1000] {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var crc: UInt32 = ~0
            for b in bytes {
                crc ^= UInt32(b)
                for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            #expect(CRC32C.checksum(bytes) == ~crc, "length \(n)")
        }
    }

    /// The instruction path runs three streams over 384-byte rounds and joins them through a table
    /// (crc32c_zeros.h): it agrees with the tables for every length to 2,000 bytes (none, one and
    /// several rounds, with every tail), and over 20,000 random blocks of 384–1,536 bytes, which
    /// look up each of the join table's 1,024 entries ~300 times.
    @Test func joinedStreamsAgreeWithTables() {
        var rng = SplitMix64(seed: 13)
        let bytes = (0..<2_008).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { all in
            for n in 0...2_000 {
                let part = UnsafeRawBufferPointer(rebasing: all[n % 8..<n % 8 + n])
                let seed = UInt32(truncatingIfNeeded: rng.next())
                #expect(CRC32C.checksum(part, seed: seed) == CRC32C.softwareChecksum(part, seed: seed), "length \(n)")
            }
        }
        var block = [UInt8](repeating: 0, count: 1_536)
        var mismatches = 0
        for _ in 0..<20_000 {
            let n = Int.random(in: 384...1_536, using: &rng)
            for i in 0..<n { block[i] = UInt8(truncatingIfNeeded: rng.next()) }
            block.withUnsafeBytes { all in
                let part = UnsafeRawBufferPointer(rebasing: all[..<n])
                if CRC32C.checksum(part) != CRC32C.softwareChecksum(part) { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    /// The instruction path (where the CPU has it) and the tables agree with a bitwise CRC for
    /// every length 0–40, at every alignment 0–7, and when chained through `seed`.
    @Test func instructionAndTablesAgreeWithBitwise() {
        func bitwise(_ bytes: ArraySlice<UInt8>, seed: UInt32) -> UInt32 {
            var crc = ~seed
            for b in bytes {
                crc ^= UInt32(b)
                for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            return ~crc
        }
        var rng = SplitMix64(seed: 11)
        let bytes = (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { all in
            for offset in 0..<8 {
                for n in 0...40 {
                    let slice = bytes[offset..<offset + n]
                    let part = UnsafeRawBufferPointer(rebasing: all[offset..<offset + n])
                    let seed = UInt32(truncatingIfNeeded: rng.next())
                    let expected = bitwise(slice, seed: seed)
                    #expect(CRC32C.checksum(part, seed: seed) == expected, "offset \(offset), length \(n)")
                    #expect(CRC32C.softwareChecksum(part, seed: seed) == expected, "offset \(offset), length \(n)")
                    let head = UnsafeRawBufferPointer(rebasing: part[..<(n / 2)])
                    let tail = UnsafeRawBufferPointer(rebasing: part[(n / 2)...])
                    #expect(CRC32C.checksum(tail, seed: CRC32C.checksum(head, seed: seed)) == expected)
                }
            }
        }
    }
}

@Suite struct PowersOfTenTests {
    /// The tables are written out by hand: each entry is ten times the one before.
    @Test func eachIsTenTimesTheOneBefore() {
        #expect(SegmentFormat.powersOfTen.count == 19 && ExactDecimal.powersOfTen.count == 19)
        #expect(SegmentFormat.powersOfTen.first == 1 && ExactDecimal.powersOfTen.first == 1)
        for k in 1..<19 {
            #expect(SegmentFormat.powersOfTen[k] == SegmentFormat.powersOfTen[k - 1] * 10, "10^\(k)")
            #expect(ExactDecimal.powersOfTen[k] == ExactDecimal.powersOfTen[k - 1] * 10, "10^\(k)")
            #expect(ExactDecimal.powersOfTen[k] == Double(SegmentFormat.powersOfTen[k]), "10^\(k)")
        }
    }
}

@Suite struct VarintTests {
    @Test func zigzagBoundaries() {
        for v: Int64 in [0, -1, 1, -2, 2, .max, .min, .max - 1, .min + 1] {
            #expect(ZigZag.decode(ZigZag.encode(v)) == v)
        }
        #expect(ZigZag.encode(0) == 0 && ZigZag.encode(-1) == 1 && ZigZag.encode(1) == 2 && ZigZag.encode(.min) == .max)
    }

    @Test func varintRoundTripAndLengths() throws {
        var values: [UInt64] = [0, 1, 127, 128, 16383, 16384, .max, .max - 1]
        for p in 0..<64 { values += [1 << UInt64(p), (1 << UInt64(p)) - 1, (1 << UInt64(p)) + 1] }
        var w = ByteWriter()
        for v in values { w.uvarint(v) }
        try w.bytes.withUnsafeBytes { (buf) throws in
            var r = ByteReader(buf, context: "test")
            for v in values { #expect(try r.uvarint() == v) }
            #expect(r.isAtEnd)
        }
        var one = ByteWriter()
        one.uvarint(.max)
        #expect(one.count == 10)
    }

    @Test func varintOverlongIsCorruption() {
        let bytes: [UInt8] = Array(repeating: 0xFF, count: 10) + [0x01]
        bytes.withUnsafeBytes { buf in
            var r = ByteReader(buf, context: "test")
            #expect(throws: TSDBError.self) { try r.uvarint() }
        }
        let truncated: [UInt8] = [0x80, 0x80]
        truncated.withUnsafeBytes { buf in
            var r = ByteReader(buf, context: "test")
            #expect(throws: TSDBError.self) { try r.uvarint() }
        }
    }
}

@Suite struct IntColumnTests {
    /// Encodes and decodes `values`, checking that what the decoder says its headers prove holds.
    func roundTrip(_ values: [Int64]) throws -> [Int64] {
        try decoded(values).values
    }

    func decoded(_ values: [Int64]) throws -> (values: [Int64], facts: IntColumn.Facts) {
        var w = ByteWriter()
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        var bytes = w.bytes
        let encodedLength = bytes.count
        bytes += [UInt8](repeating: 0xAB, count: IntColumn.readSlack)  // slack must not leak into values
        var out = [Int64](repeating: 0, count: values.count)
        var facts = IntColumn.Facts.unknown
        try bytes.withUnsafeBytes { (buf) throws in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buf[0..<encodedLength]), context: "column")
            try out.withUnsafeMutableBufferPointer { p in
                facts = try IntColumn.decode(
                    &r, count: values.count, into: p.baseAddress ?? UnsafeMutablePointer(bitPattern: 8)!)
            }
            #expect(r.isAtEnd)
        }
        if let range = facts.range, let outside = out.first(where: { !range.contains($0) }) {
            Issue.record("\(outside) outside the proven range \(range)")
        }
        if facts.ascending, let i = out.indices.dropFirst().first(where: { out[$0] < out[$0 - 1] }) {
            Issue.record("proven ascending, but value \(i) is below the one before")
        }
        return (out, facts)
    }

    /// The checks after decoding a block skip their pass over a column when its headers prove
    /// the answer: these are the columns where that must happen.
    @Test func headersProveWhatTheyCan() throws {
        #expect(try decoded([Int64](repeating: 3, count: 500)).facts == .init(range: 3...3, ascending: true))
        let ids = try decoded((0..<500).map { Int64($0 % 3) + 2 }).facts
        #expect(ids.range.map { $0.lowerBound >= 2 && $0.upperBound < 8 } == true && !ids.ascending)
        var rng = SplitMix64(seed: 12)
        var t: Int64 = 0
        let starts = (0..<1000).map { i -> Int64 in
            t += i % 300 < 100 ? Int64.random(in: 4...5, using: &rng) : Int64.random(in: 60...300, using: &rng)
            return t
        }
        let startFacts = try decoded(starts).facts
        #expect(startFacts.ascending && startFacts.range.map { $0.contains(starts[0]) && $0.contains(t) } == true)
        // Deltas that may go down, or sums that may wrap, prove no order.
        #expect(try decoded([5, 4, 6, 7, 8, 9, 10, 11]).facts.ascending == false)
        #expect(try decoded([.max, .min]).facts == .unknown)
        #expect(try decoded([.min, .max]).facts == .unknown)
        #expect(try decoded([0, .max / 2, .max - 1]).facts == .init(range: 0...(.max - 1), ascending: true))
    }

    static let boundaries: [Int64] = {
        var v: [Int64] = [0, 1, -1, .max, .min, .max - 1, .min + 1]
        for p in 0..<63 {
            let x = Int64(1) << Int64(p)
            v += [x, x - 1, x + 1, -x, -x - 1, -x + 1]
        }
        return v
    }()

    @Test func empty() throws { #expect(try roundTrip([]) == []) }

    @Test func singleValues() throws {
        for v in Self.boundaries { #expect(try roundTrip([v]) == [v]) }
    }

    @Test func boundarySweepPairs() throws {
        for a in Self.boundaries.prefix(40) {
            for b in Self.boundaries {
                #expect(try roundTrip([a, b, a]) == [a, b, a])
            }
        }
    }

    @Test func everyWidth() throws {
        for width in 0...64 {
            let top: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
            let values = (0..<37).map { i in Int64(bitPattern: i % 3 == 0 ? top : UInt64(i) & top) }
            #expect(try roundTrip(values) == values, "width \(width)")
        }
    }

    /// Widths 1–16 are unpacked eight at a time by a copy of the loop per width, and the rest one
    /// by one: every such width, as values and as deltas, over lengths around the groups of eight.
    @Test func everyGroupedWidthAndTail() throws {
        var rng = SplitMix64(seed: 17)
        for width in 1...17 {
            let top = (Int64(1) << Int64(width)) - 1
            for count in 1...27 {
                let values = (0..<count).map { i in i % 5 == 1 ? top : Int64.random(in: 0...top, using: &rng) }
                let sums = values.reduce(into: [Int64]()) { $0.append(($0.last ?? 0) + $1) }
                #expect(try roundTrip(values) == values, "width \(width), \(count) values")
                #expect(try roundTrip(sums) == sums, "width \(width), \(count) sums")
            }
        }
    }

    @Test(arguments: [1, 2, 3, 100, 1024, 4099])
    func seededRandomSeries(count: Int) throws {
        var rng = SplitMix64(seed: UInt64(count))
        let monotone = (0..<count).reduce(into: [Int64]()) { a, _ in
            a.append((a.last ?? 1_700_000_000) + Int64.random(in: 0...400, using: &rng))
        }
        let noisy = (0..<count).map { _ in Int64.random(in: .min ... .max, using: &rng) }
        let small = (0..<count).map { _ in Int64.random(in: -3...3, using: &rng) }
        for series in [monotone, noisy, small] { #expect(try roundTrip(series) == series) }
    }

    /// A workout (5 s gaps) inside a day of 1–3 minute gaps: one width per block would pay the
    /// wide width for every value; miniblocks adapt.
    @Test func mixedRegimesUseMiniblocks() throws {
        var rng = SplitMix64(seed: 12)
        var t: Int64 = 0
        let values = (0..<4096).map { i -> Int64 in
            t +=
                (1000..<1700).contains(i)
                ? Int64.random(in: 4...6, using: &rng) : Int64.random(in: 60...180, using: &rng)
            return t
        }
        var w = ByteWriter()
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        #expect(w.bytes[0] == IntColumn.Encoding.deltaMiniblocks.rawValue)
        #expect(w.count < 4096 * 8 / 8 - 4096 / 10)
        #expect(try roundTrip(values) == values)
    }

    @Test(arguments: [2, 128, 129, 130, 256, 257, 1000])
    func miniblockBoundaries(count: Int) throws {
        var rng = SplitMix64(seed: UInt64(count))
        var t = Int64.max - 1_000_000_000
        let values = (0..<count).map { i -> Int64 in
            t =
                t
                &+ (i / 128 % 2 == 0
                    ? Int64.random(in: 0...3, using: &rng) : Int64.random(in: -100_000...100_000, using: &rng))
            return t
        }
        var w = ByteWriter()
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        #expect(try roundTrip(values) == values)
        // Forced through the miniblock path, whatever the writer would pick.
        var forced = ByteWriter()
        forced.u8(IntColumn.Encoding.deltaMiniblocks.rawValue)
        forced.varint(values[0])
        var start = 1
        while start < count {
            let end = min(start + IntColumn.miniblockSize, count)
            let deltas = (start..<end).map { values[$0] &- values[$0 - 1] }
            let lo = deltas.min()!
            let width = IntColumn.bitWidth(UInt64(bitPattern: deltas.max()! &- lo))
            forced.varint(lo)
            forced.u8(UInt8(width))
            IntColumn.pack(count: deltas.count, width: width, into: &forced) { UInt64(bitPattern: deltas[$0] &- lo) }
            start = end
        }
        let bytes = forced.bytes + [UInt8](repeating: 0, count: IntColumn.readSlack)
        var out = [Int64](repeating: 0, count: count)
        try bytes.withUnsafeBytes { (buf) throws in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buf[0..<forced.count]), context: "column")
            _ = try out.withUnsafeMutableBufferPointer { try IntColumn.decode(&r, count: count, into: $0.baseAddress!) }
            #expect(r.isAtEnd)
        }
        #expect(out == values)
        // Truncated by one byte: an error, never a wrong value.
        try bytes.withUnsafeBytes { (buf) throws in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buf[0..<forced.count - 1]), context: "column")
            #expect(throws: TSDBError.self) {
                try out.withUnsafeMutableBufferPointer { try IntColumn.decode(&r, count: count, into: $0.baseAddress!) }
            }
        }
    }

    @Test func regularSeriesCostsNoBitsPerValue() {
        var w = ByteWriter()
        let values = (0..<1000).map { Int64($0) * 5 }
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        #expect(w.count < 8)
    }

    @Test func unknownEncodingIsCorruption() {
        let bytes: [UInt8] = [7, 0, 0] + [UInt8](repeating: 0, count: 8)
        bytes.withUnsafeBytes { buf in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buf[0..<3]), context: "column")
            var out = [Int64](repeating: 0, count: 1)
            #expect(throws: TSDBError.self) {
                try out.withUnsafeMutableBufferPointer { try IntColumn.decode(&r, count: 1, into: $0.baseAddress!) }
            }
        }
    }

    @Test func truncatedPackedBitsIsCorruption() {
        var w = ByteWriter()
        let values: [Int64] = (0..<100).map { $0 * 7919 % 1000 }
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        let bytes = w.bytes + [UInt8](repeating: 0, count: 8)
        bytes.withUnsafeBytes { buf in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buf[0..<w.count - 1]), context: "column")
            var out = [Int64](repeating: 0, count: 100)
            #expect(throws: TSDBError.self) {
                try out.withUnsafeMutableBufferPointer { try IntColumn.decode(&r, count: 100, into: $0.baseAddress!) }
            }
        }
    }
}

@Suite struct CodecTests {
    @Test(arguments: BlockCodec.allCases)
    func roundTrip(codec: BlockCodec) throws {
        var rng = SplitMix64(seed: 3)
        for n in [0, 1, 100, 70_000] {
            let input = (0..<n).map { i in UInt8(i % 7 == 0 ? Int.random(in: 0...255, using: &rng) : i % 13) }
            guard let packed = codec.compress(input) else {
                #expect(codec != .none)
                continue
            }
            var out = [UInt8](repeating: 0, count: n)
            try packed.withUnsafeBytes { src in try out.withUnsafeMutableBytes { try codec.decompress(src, into: $0) } }
            #expect(out == input)
        }
    }

    @Test(arguments: [BlockCodec.zstd, .lz4])
    func garbageIsCorruption(codec: BlockCodec) {
        let garbage: [UInt8] = (0..<64).map { UInt8(($0 * 37) & 0xFF) }
        var out = [UInt8](repeating: 0, count: 100)
        #expect(throws: TSDBError.self) {
            try garbage.withUnsafeBytes { src in try out.withUnsafeMutableBytes { try codec.decompress(src, into: $0) }
            }
        }
    }
}

@Suite struct ASCIICheckTests {
    /// Every length up to 40, and one byte of 0x80 or more at every position of each: the check
    /// reads eight bytes at a time, so a high byte in the last word or the tail must still count.
    @Test func aHighByteAnywhereIsNotASCII() {
        for n in 0...40 {
            var bytes = (0..<n).map { UInt8(32 + $0 % 90) }
            bytes.withUnsafeBytes { #expect(ByteReader.isASCII($0), "length \(n)") }
            for i in 0..<n {
                for high: UInt8 in [0x80, 0xC3, 0xFF] {
                    let kept = bytes[i]
                    bytes[i] = high
                    bytes.withUnsafeBytes { #expect(!ByteReader.isASCII($0), "length \(n), byte \(i)") }
                    bytes[i] = kept
                }
            }
        }
    }
}

@Suite struct KnownStringTests {
    /// Types repeat in a manifest, not one after another: each is the one read first of its
    /// bytes, a new one is added in order, and bytes that are not UTF-8 are still an error.
    @Test func stringAmongKnownOnesIsTheFirstReadOfIt() throws {
        let texts = ["HKQuantityTypeIdentifierHeartRate", "HKQuantityTypeIdentifierStepCount", "", "é"]
        var w = ByteWriter()
        for i in [0, 1, 0, 2, 1, 3, 0, 3] { w.string(texts[i]) }
        w.uvarint(2)
        w.append([0xC3, 0x28])
        try w.bytes.withUnsafeBytes { (buf) throws in
            var r = ByteReader(buf, context: "test")
            var known = KnownStrings()
            var read: [String] = []
            for _ in 0..<8 { read.append(try r.string("type", among: &known)) }
            #expect(read == [0, 1, 0, 2, 1, 3, 0, 3].map { texts[$0] })
            #expect(known.strings == texts)
            #expect(throws: TSDBError.self) { try r.string("type", among: &known) }
            #expect(known.strings.count == 4)
        }
    }

    /// Lists that repeat in order (a manifest's types month by month, some months missing some),
    /// and in no order, with strings of one length that differ in one byte: each read is the
    /// string written, and the known strings are the distinct ones in the order first read.
    @Test(arguments: [3, 8, 21])
    func stringsAmongKnownOnesMatchTheirBytesInAnyOrder(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let pool = (0..<12).map { "HKQuantityTypeIdentifier" + String(UnicodeScalar(UInt8(65 + $0))) } + ["", "é"]
        var sequence: [Int] = []
        for _ in 0..<40 {
            let inOrder = rng.next() % 2 == 0
            let count = UInt64(pool.count)
            sequence +=
                inOrder
                ? pool.indices.filter { _ in rng.next() % 4 != 0 } : pool.indices.map { _ in Int(rng.next() % count) }
        }
        var w = ByteWriter()
        for i in sequence { w.string(pool[i]) }
        try w.bytes.withUnsafeBytes { (buf) throws in
            var r = ByteReader(buf, context: "test")
            var known = KnownStrings()
            for i in sequence { #expect(try r.string("type", among: &known) == pool[i]) }
            var firstRead: [String] = []
            for i in sequence where !firstRead.contains(pool[i]) { firstRead.append(pool[i]) }
            #expect(known.strings == firstRead)
        }
    }
}

/// A record's fields, written into one buffer and appended once, are the bytes the writer's own
/// field methods append one by one.
@Suite struct RecordCursorTests {
    @Test func aRecordIsItsFieldsWrittenOneByOne() {
        var rng = SplitMix64(seed: 41)
        for _ in 0..<500 {
            let fields = (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                (kind: Int.random(in: 0..<7, using: &rng), value: rng.next() >> UInt64.random(in: 0...63, using: &rng))
            }
            var expected = ByteWriter()
            var written = ByteWriter()
            expected.u8(7)
            written.u8(7)
            Self.write(fields, to: &expected)
            written.record(capacity: 10 * fields.count) { Self.write(fields, to: &$0) }
            #expect(written.bytes == expected.bytes)
        }
    }

    static func write(_ fields: [(kind: Int, value: UInt64)], to sink: inout some FieldSink) {
        for (kind, v) in fields {
            switch kind {
            case 0: sink.u8(UInt8(truncatingIfNeeded: v))
            case 1: sink.u16(UInt16(truncatingIfNeeded: v))
            case 2: sink.u32(UInt32(truncatingIfNeeded: v))
            case 3: sink.u64(v)
            case 4: sink.i64(Int64(bitPattern: v))
            case 5: sink.uvarint(v)
            default: sink.varint(Int64(bitPattern: v))
            }
        }
    }
}

/// The field methods a writer and a record cursor share.
protocol FieldSink {
    mutating func u8(_ v: UInt8)
    mutating func u16(_ v: UInt16)
    mutating func u32(_ v: UInt32)
    mutating func u64(_ v: UInt64)
    mutating func i64(_ v: Int64)
    mutating func uvarint(_ v: UInt64)
    mutating func varint(_ v: Int64)
}

extension ByteWriter: FieldSink {}
extension RecordCursor: FieldSink {}
