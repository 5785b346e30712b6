import Foundation
import XCTest

@testable import TSDB
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

    // MARK: the encoders' choices against value-by-value ones

    /// The hybrid as §4.2 describes it, a value at a time: literals gathered in a list; a run of
    /// eight or more left after completing the pending group of eight becomes an RLE run.
    func referenceHybrid(_ values: [UInt64], width: Int) -> [UInt8] {
        var out: [UInt8] = []
        func uvarint(_ v: UInt64) {
            var v = v
            while v >= 0x80 {
                out.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            out.append(UInt8(v))
        }
        func bitPack(_ group: [UInt64]) {
            var bits: [Bool] = []
            for v in group { for k in 0..<width { bits.append(v >> UInt64(k) & 1 == 1) } }
            for byte in stride(from: 0, to: bits.count, by: 8) {
                out.append(bits[byte..<byte + 8].enumerated().reduce(0) { $0 | ($1.element ? 1 << $1.offset : 0) })
            }
        }
        var literals: [UInt64] = []
        func flush() {
            while !literals.isEmpty {
                let groups = min((literals.count + 7) / 8, 63)
                uvarint(UInt64(groups << 1 | 1))
                var group = Array(literals.prefix(groups * 8))
                group += Array(repeating: 0, count: groups * 8 - group.count)
                bitPack(group)
                literals.removeFirst(min(groups * 8, literals.count))
            }
        }
        var i = 0
        while i < values.count {
            var j = i
            while j < values.count && values[j] == values[i] { j += 1 }
            let fill = (8 - literals.count % 8) % 8
            if j - i >= 8 + fill {
                literals += values[i..<i + fill]
                flush()
                uvarint(UInt64(j - i - fill) << 1)
                for k in 0..<(width + 7) / 8 { out.append(UInt8(truncatingIfNeeded: values[i] >> UInt64(8 * k))) }
            } else {
                literals += values[i..<j]
            }
            i = j
        }
        flush()
        return out
    }

    func testRLEHybridMakesTheValueByValueEncodersBytes() {
        var random = SplitMix64(seed: 23)
        for width in 0...40 {
            for round in 0..<12 {
                // Up to 1,200 values: bit-packed stretches longer than one header's 63 groups.
                let n = Int(random.next() % 1_200)
                let limit: UInt64 = width == 0 ? 1 : 1 << UInt64(width)
                var values: [UInt64] = []
                while values.count < n {
                    let v = random.next() % limit
                    values += Array(repeating: v, count: Int(random.next() % (round % 3 == 0 ? 2 : 20)) + 1)
                }
                values = Array(values.prefix(n))
                XCTAssertEqual(
                    ParquetEncoder.rleHybrid(values, width: width), referenceHybrid(values, width: width),
                    "width \(width) round \(round)")
            }
        }
    }

    func testARepeatedValueIsTheHybridOfItsCopies() {
        for width in 0...20 {
            for count in 0...300 {
                let value: UInt64 = width == 0 ? 0 : 1 << UInt64(width - 1)
                var runs = ByteWriter()
                ParquetEncoder.appendRLEHybrid(repeating: value, count: count, width: width, to: &runs)
                XCTAssertEqual(
                    runs.bytes, ParquetEncoder.rleHybrid(Array(repeating: value, count: count), width: width),
                    "width \(width) count \(count)")
            }
        }
    }

    func testValueIDsAgreeWithADictionary() {
        var random = SplitMix64(seed: 31)
        for round in 0..<8 {
            var ids = ValueIDs()
            var oracle: [[Int64]: Int32] = [:]
            // Few tags and clustered mantissas (as a month's values), or anything at all.
            let spread: UInt64 = round % 2 == 0 ? 500 : .max
            for step in 0..<20_000 {
                let tag = Int64(random.next() % 4)
                let mantissa = Int64(bitPattern: random.next() % spread) - (round % 4 == 1 ? 250 : 0)
                if let known = oracle[[tag, mantissa]] {
                    XCTAssertEqual(ids[tag, mantissa], known, "round \(round) step \(step)")
                } else {
                    XCTAssertNil(ids[tag, mantissa], "round \(round) step \(step)")
                    let id = Int32(truncatingIfNeeded: random.next() % 100_000) - 1
                    ids[tag, mantissa] = id
                    oracle[[tag, mantissa]] = id
                }
            }
            XCTAssertEqual(ids.count, oracle.count)
            for (key, id) in oracle { XCTAssertEqual(ids[key[0], key[1]], id) }
        }
    }

    func testOneZstdContextMakesFramesOfEverySize() throws {
        var random = SplitMix64(seed: 41)
        let compressor = ZstdCompressor()
        for size in [0, 1, 7, 100, 4_096, 65_536, 200_003, 3, 0, 70_000] {
            // Repetitive bytes (as pages are) and noise, one after the other through the same context.
            let input = (0..<size).map { i in i % 5 == 0 ? UInt8(truncatingIfNeeded: random.next()) : UInt8(i % 7) }
            let frame = compressor.frame(input)
            var output = [UInt8](repeating: 0, count: size)
            try frame.withUnsafeBytes { f in
                try output.withUnsafeMutableBytes { try BlockCodec.zstd.decompress(f, into: $0) }
            }
            XCTAssertEqual(output, input, "size \(size)")
        }
    }

    func testAFileWrittenInPiecesIsTheFileWrittenAtOnce() throws {
        let folder = TemporaryFolder("parquet-pieces")
        defer { folder.cleanup() }
        let schema = [ColumnSchema(name: "start", physicalType: .int64, logicalType: nil, isOptional: false)]
        var random = SplitMix64(seed: 43)
        let groups = (0..<5).map { _ in (0..<3_000).map { _ in Int64(bitPattern: random.next() >> 4) } }
        var files: [[UInt8]] = []
        // Written after every row group, and only at the end.
        for writeSize in [1, ParquetFileWriter.defaultWriteSize] {
            let path = folder.path + "/\(writeSize).parquet"
            let writer = try ParquetFileWriter(
                path: path, schema: schema, keyValues: [], compressor: ZstdCompressor(), writeSize: writeSize)
            for g in groups { try writer.write(rowGroup: [.delta(schema[0], g)], rowCount: g.count) }
            let size = try writer.finish(createdBy: "test")
            files.append(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            XCTAssertEqual(files.last?.count, size)
        }
        XCTAssertEqual(files[0], files[1])
        XCTAssertEqual(Array(files[0].suffix(4)), Array("PAR1".utf8))
    }
}

extension ParquetEncoder {
    /// The hybrid of `values` as bytes of their own.
    static func rleHybrid(_ values: [UInt64], width: Int) -> [UInt8] {
        var out = ByteWriter()
        values.withUnsafeBufferPointer { appendRLEHybrid($0, width: width, to: &out) }
        return out.bytes
    }

    /// DELTA_BINARY_PACKED of `values` as bytes of their own.
    static func deltaBinaryPacked(_ values: [Int64]) -> [UInt8] {
        var out = ByteWriter()
        values.withUnsafeBufferPointer { appendDeltaBinaryPacked($0, to: &out) }
        return out.bytes
    }
}
