import Foundation
import Testing

@testable import TSDB

/// The test vectors under Formats/vectors/segment-v3 (Formats/segment-v3.md §9).
///
/// Each `NAME.json` day file has a `NAME.<codec>.seg` segment. For codec `none` the segment must be
/// exactly what this build writes; for every codec, decoding it must give back the JSON's samples.
/// Set TSDB_WRITE_VECTORS=1 to (re)write the segment files after an intentional format change.
@Suite struct FormatVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Formats/vectors/segment-v3").standardized.path

    /// name, codec, samples per block
    static let vectors: [(String, BlockCodec, Int)] = [
        ("two-heart-rates", .none, 4096),
        ("edge-cases", .none, 2),
        ("edge-cases", .zstd, 4096),
        ("edge-cases", .lz4, 3),
        ("heart-rate-workout", .none, 4096),
    ]

    func expectedSamples(_ name: String) throws -> [Sample] {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/\(name).json")))
        var strings = ByteInterner()
        let parsed = try bytes.withUnsafeBytes { try DayFileParser.parse($0) }
        var local = parsed.strings
        var packed = parsed.samples.map { PackedSample(unpack($0, &local), strings: &strings) }
        Compactor.sortAndDeduplicate(&packed)
        return packed.map { unpack($0, &strings) }
    }

    func encode(_ samples: [Sample], codec: BlockCodec, blockSamples: Int) -> [UInt8] {
        encodeSegment(samples, blockSamples: blockSamples, codec: codec)
    }

    @Test(arguments: 0..<vectors.count)
    func vector(index: Int) throws {
        let (name, codec, blockSamples) = Self.vectors[index]
        let segmentPath = Self.directory + "/\(name).\(codec).seg"
        let samples = try expectedSamples(name)
        let written = encode(samples, codec: codec, blockSamples: blockSamples)
        if ProcessInfo.processInfo.environment["TSDB_WRITE_VECTORS"] == "1" {
            try Data(written).write(to: URL(fileURLWithPath: segmentPath))
        }
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: segmentPath)))
        if codec == .none {
            #expect(stored == written, "\(name).\(codec).seg is not what this build writes")
        }
        #expect(try readSegment(segmentPath) == samples, "\(name).\(codec).seg does not decode to \(name).json")
    }

    @Test func workoutVectorExercisesMiniblocks() throws {
        // Byte 0 of the block is the start column's encoding (§5.1): 2 = miniblocks.
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/heart-rate-workout.none.seg")))
        #expect(bytes[SegmentFormat.headerSize] == IntColumn.Encoding.deltaMiniblocks.rawValue)
    }

    @Test func workedExampleHeaderAndFooter() throws {
        // The numbers quoted in Formats/segment-v3.md §8.
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/two-heart-rates.none.seg")))
        #expect(bytes.count == 352)
        #expect(Array(bytes[0..<8]) == Array("TSDBSEG".utf8) + [0])
        let reader = try SegmentReader(path: Self.directory + "/two-heart-rates.none.seg")
        #expect(reader.blockCount == 1 && reader.sampleCount == 2)
        #expect(
            reader.locations[0]
                == BlockLocation(
                    offset: 16, storedLength: 32, rawLength: 32, crc: reader.locations[0].crc, codec: .none,
                    timeUnitExponent: 6))
        // §8 The slot region: one byte, no slots (two samples in one slot are a sparse block).
        #expect(bytes[0xB7] == 0x00 && reader.slotRegion.storedLength == 1)
        #expect(try reader.slotTable().ranges == [0..<0])
        // The workout vector's dense heart rate has them.
        let workout = try SegmentReader(path: Self.directory + "/heart-rate-workout.none.seg")
        #expect(try !workout.slotTable().slots.isEmpty)
    }
}
