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
        #expect(bytes.count == 361)
        #expect(Array(bytes[0..<8]) == Array("TSDBSEG".utf8) + [0])
        let reader = try SegmentReader(path: Self.directory + "/two-heart-rates.none.seg")
        #expect(reader.blockCount == 1 && reader.sampleCount == 2)
        #expect(
            reader.locations[0]
                == BlockLocation(
                    offset: 16, storedLength: 32, rawLength: 32, crc: reader.locations[0].crc, codec: .none,
                    timeUnitExponent: 6))
        // §8 The slot region: one slot, 07:00–07:15Z, holding both samples.
        #expect(Array(bytes[0xB7..<0xC1]) == [0x01, 0x00, 0x00, 0x02, 0x00, 0x90, 0x01, 0x03, 0x03, 0x09])
        let slots = try reader.slotTable()
        #expect(slots.ranges == [0..<1])
        #expect(
            slots.slots == [
                SlotSummary(
                    start: reader.summaries[0].firstStart, sampleCount: 2, valueCount: 2, minValue: 72, maxValue: 75,
                    sum: 147, sumOfSquaredDeviations: 4.5)
            ])
    }
}
