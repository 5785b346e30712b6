import XCTest

@testable import TSDBParquet
@testable import TSDBSynthetic

/// Parquet's encodings against brute-force decoders written from the spec's text
/// (Formats/parquet-v1.md §3-§4), on seeded random inputs and boundary sweeps.
final class ParquetEncodingTests: XCTestCase {
    // MARK: brute-force decoders

    struct Bytes {
        let b: [UInt8]
        var i = 0
        init(_ b: [UInt8]) { self.b = b }
        mutating func byte() -> UInt8 {
            defer { i += 1 }
            return b[i]
        }
        mutating func varint() -> UInt64 {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let c = byte()
                v |= UInt64(c & 0x7F) << shift
                if c < 0x80 { return v }
                shift += 7
            }
        }
        mutating func zigzag() -> Int64 {
            let u = varint()
            return Int64(bitPattern: u >> 1) ^ -Int64(bitPattern: u & 1)
        }
        /// `count` values of `width` bits, least significant bit first, bit by bit.
        mutating func unpack(_ count: Int, width: Int) -> [UInt64] {
            var out: [UInt64] = []
            var bit = 0
            let start = i
            for _ in 0..<count {
                var v: UInt64 = 0
                for k in 0..<width {
                    let byte = b[start + (bit + k) / 8]
                    if byte >> UInt8((bit + k) % 8) & 1 == 1 { v |= 1 << UInt64(k) }
                }
                bit += width
                out.append(v)
            }
            i = start + (bit + 7) / 8
            return out
        }
    }

    func decodeHybrid(_ bytes: [UInt8], width: Int, count: Int) -> [UInt64] {
        var r = Bytes(bytes)
        var out: [UInt64] = []
        while out.count < count {
            let header = r.varint()
            if header & 1 == 1 {
                out += r.unpack(Int(header >> 1) * 8, width: width)
            } else {
                var v: UInt64 = 0
                for k in 0..<(width + 7) / 8 { v |= UInt64(r.byte()) << UInt64(8 * k) }
                out += Array(repeating: v, count: Int(header >> 1))
            }
        }
        XCTAssertEqual(r.i, bytes.count, "bytes left after the last run")
        return Array(out.prefix(count))
    }

    func decodeDelta(_ bytes: [UInt8]) -> [Int64] {
        var r = Bytes(bytes)
        let blockSize = Int(r.varint())
        let miniblocks = Int(r.varint())
        let count = Int(r.varint())
        var out = [r.zigzag()]
        if count == 0 { return [] }
        while out.count < count {
            let minDelta = r.zigzag()
            let widths = (0..<miniblocks).map { _ in Int(r.byte()) }
            for w in widths where out.count < count {
                for d in r.unpack(blockSize / miniblocks, width: w) where out.count < count {
                    out.append(out.last! &+ minDelta &+ Int64(bitPattern: d))
                }
            }
        }
        XCTAssertEqual(r.i, bytes.count, "bytes left after the last miniblock")
        return out
    }

    // MARK: tests

    func testThriftCompactBytesFollowTheSpec() {
        var w = ThriftCompactWriter()
        w.writeStruct { s in
            s.field(1, i32: 2)  // delta 1, type 5; zigzag(2) = 4
            s.field(4, string: "ab")  // delta 3, type 8; length 2
            s.field(20, i64: -1)  // delta 16 > 15: long form, zigzag(20) = 40; zigzag(-1) = 1
            s.field(21, bool: false)  // delta 1, type 2 (false)
            s.field(22, listOf: .i32, count: 16) { l in for k in 0..<16 { l.writeZigzag(Int64(k)) } }
        }
        let list: [UInt8] = [0x19, 0xF5, 0x10] + (0..<16).map { UInt8($0 * 2) }
        XCTAssertEqual(w.bytes, [0x15, 0x04, 0x38, 0x02, 0x61, 0x62, 0x06, 0x28, 0x01, 0x12] + list + [0x00])
    }

    func testRLEHybridRoundTripsRandomRunsAtEveryWidth() {
        var random = SplitMix64(seed: 7)
        for width in 0...20 {
            for round in 0..<20 {
                let n = Int(random.next() % 300)
                var values: [UInt64] = []
                let limit: UInt64 = width == 0 ? 1 : 1 << UInt64(width)
                while values.count < n {
                    // Runs of 1-40 equal values, so both run kinds and their borders occur.
                    let v = random.next() % limit
                    values += Array(repeating: v, count: Int(random.next() % (round % 2 == 0 ? 3 : 40)) + 1)
                }
                values = Array(values.prefix(n))
                let encoded = ParquetEncoder.rleHybrid(values, width: width)
                XCTAssertEqual(decodeHybrid(encoded, width: width, count: n), values, "width \(width) round \(round)")
            }
        }
    }

    func testRLEHybridUsesRunsForRepeatsAndGroupsForTheRest() {
        XCTAssertEqual(ParquetEncoder.rleHybrid(Array(repeating: 1, count: 50), width: 1), [100, 1])
        XCTAssertEqual(ParquetEncoder.rleHybrid([1, 0, 1], width: 1), [3, 0b101])
    }

    func testDeltaBinaryPackedRoundTripsRandomSeries() {
        var random = SplitMix64(seed: 11)
        let sizes = [0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 255, 256, 257, 1000]
        for (k, n) in sizes.enumerated() {
            for shape in 0..<4 {
                var values: [Int64] = []
                var t = Int64(bitPattern: random.next()) >> 8
                for _ in 0..<n {
                    switch shape {
                    case 0: t &+= Int64(random.next() % 600_000_000)  // timestamps a few minutes apart
                    case 1: t = Int64(bitPattern: random.next())  // anything: 64-bit deltas
                    case 2: t = 60  // constant: zero-width miniblocks
                    default: t &-= Int64(random.next() % 1000)  // falling
                    }
                    values.append(t)
                }
                let encoded = ParquetEncoder.deltaBinaryPacked(values)
                XCTAssertEqual(decodeDelta(encoded), values, "size \(n) (#\(k)) shape \(shape)")
            }
        }
        XCTAssertEqual(decodeDelta(ParquetEncoder.deltaBinaryPacked([Int64.min, Int64.max, 0])), [.min, .max, 0])
    }

    func testStatisticsFollowTheTypeDefinedOrder() {
        let s = EncodedColumn.statistics([.double(0), .double(-3), .double(0)], nullCount: 2)
        XCTAssertEqual(s.minValue, Array(withUnsafeBytes(of: (-3.0).bitPattern.littleEndian) { Array($0) }))
        XCTAssertEqual(s.maxValue, Array(withUnsafeBytes(of: (0.0).bitPattern.littleEndian) { Array($0) }))
        let zero = EncodedColumn.statistics([.double(0)], nullCount: 0)
        XCTAssertEqual(zero.minValue, Array(withUnsafeBytes(of: (-0.0).bitPattern.littleEndian) { Array($0) }))
        let bytes = EncodedColumn.statistics([.bytes([0xC3, 0xA9]), .bytes([0x7A])], nullCount: 0)
        XCTAssertEqual(bytes.minValue, [0x7A], "unsigned bytewise: é (C3 A9) sorts after z")
        let long = EncodedColumn.statistics([.bytes(Array(repeating: 1, count: 300))], nullCount: 1)
        XCTAssertNil(long.minValue)
        XCTAssertEqual(long.nullCount, 1)
        XCTAssertNil(EncodedColumn.statistics([.double(.nan)], nullCount: 0).maxValue)
    }
}
