/// On-disk constants of segment format v3. Section numbers refer to Formats/segment-v3.md.
enum SegmentFormat {
    /// §3 File header: magic, also repeated at the very end of the footer (§7).
    static let magic: [UInt8] = Array("TSDBSEG".utf8) + [0]
    /// §3 The only version this build writes and reads.
    static let version: UInt16 = 3
    /// §3 magic (8) + version (2) + flags (2) + CRC (4).
    static let headerSize = 16
    /// §6 One block index entry.
    static let indexEntrySize = 88
    /// §7 Footer at the end of the file.
    static let footerSize = 80
    /// §5 Default number of samples per block (the writer may use fewer; readers accept 1...maxBlockSamples).
    static let defaultBlockSamples = 4096
    /// §5 Largest block a reader accepts, so a corrupt count cannot ask for unbounded memory.
    static let maxBlockSamples = 65_536
    /// §5.2 Largest time-unit exponent: a unit of 10^6 µs = 1 s.
    static let maxTimeUnitExponent: UInt8 = 6
    /// §4 Dictionary ids 0 and 1 mean "absent" and "null"; entry k is id k + 2.
    static let firstDictionaryID: Int64 = 2
    /// Segment file suffix.
    static let fileExtension = "seg"

    /// Written out, so that the table is data in the binary: computed, each use in a loop called
    /// swift_once (the year's compaction made 1.4M such calls for the two tables).
    static let powersOfTen: [Int64] = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000, 10_000_000_000,
        100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000, 1_000_000_000_000_000,
        10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000,
    ]
}

/// Summary of one block, stored uncompressed in the block index (§6) so queries can
/// skip or answer blocks without decoding them.
public struct BlockSummary: Sendable, Equatable {
    public var sampleCount: Int
    /// Samples whose value is a number.
    public var valueCount: Int
    /// Start of the first and last sample (µs since the epoch, UTC).
    public var firstStart: Int64
    public var lastStart: Int64
    /// Latest `end` of any sample in the block.
    public var maxEnd: Int64
    /// Over numeric values; `+inf`/`-inf`/0 when `valueCount` is 0.
    public var minValue: Double
    public var maxValue: Double
    public var sum: Double
    /// Σ (v − mean)² over the numeric values, mean being the block's own (version 2; version 1
    /// stored Σ v², which loses the variance of large values with a small spread).
    public var sumOfSquaredDeviations: Double
}

/// Where a block's bytes are and how they are stored (§6).
struct BlockLocation: Equatable {
    var offset: Int
    var storedLength: Int
    var rawLength: Int
    var crc: UInt32
    var codec: BlockCodec
    /// Starts and durations are stored in units of 10^exponent µs (§5.2).
    var timeUnitExponent: UInt8
}

/// The per-segment dictionaries (§4): strings referenced by id from the block columns.
struct SegmentDictionary: Equatable {
    var type: String
    var year: Int
    var month: Int
    var units: [String] = []
    var sources: [String] = []
    var devices: [String] = []
    var metadata: [String] = []
    var numberTexts: [String] = []
    var forms: [UInt64] = []
}
