/// What a compaction did.
public struct CompactionReport: Sendable {
    public var filesRead = 0
    public var bytesRead = 0
    /// Of the files read, Apple Health exports (kept by `tsdb import`) rather than day files.
    public var exportsRead = 0
    /// Files not compacted, each with the reason (file, offset, line). Their samples are not in the store.
    public var skipped: [TSDBError] = []
    /// Non-fatal findings (e.g. unknown keys ignored), prefixed with the file.
    public var warnings: [String] = []
    /// Names under `raw/` that are not day files (`README.md`, `.DS_Store`, `x.json.bak`): not read.
    public var ignored: [String] = []
    /// Published segments found missing or damaged, each with what is done about it.
    public var repairs: [String] = []
    /// Months rebuilt because their segments were missing or damaged.
    public var monthsRepaired = 0
    /// Samples read from the raw files.
    public var samplesRead = 0
    /// Samples stored; fewer than read when identical samples appeared in two day files.
    public var samplesStored = 0
    /// Samples read but not stored because another day file had them too (full rebuilds only).
    public var duplicatesDropped: Int { isFullRebuild ? samplesRead - samplesStored : 0 }
    /// Every segment was rebuilt from every raw file (first run, `rebuild`, or a large change).
    public var isFullRebuild: Bool { monthsRebuilt < 0 }
    public var types = 0
    /// Segment files written by this run, and segments it made again byte for byte, which kept
    /// their published files.
    public var segmentsWritten = 0
    public var segmentsUnchanged = 0
    /// Segments in the store afterwards, and their total size.
    public var segmentsTotal = 0
    public var segmentBytes = 0
    /// The files holding them, and their total size: more than the segments' when earlier runs'
    /// files still hold segments later runs replaced (manifest-v4.md, Files).
    public var files = 0
    public var fileBytes = 0
    /// The files hold more than their segments and the zeros before each (a segment starts at a
    /// multiple of 8): segments replaced by later runs.
    public var filesHoldReplacedSegments: Bool { fileBytes - segmentBytes > SegmentPack.alignment * segmentsTotal }
    /// Raw files by what happened to them since the previous run.
    public var filesAdded = 0
    public var filesChanged = 0
    public var filesDeleted = 0
    public var filesUnchanged = 0
    /// Of `filesUnchanged`, the kept Apple Health exports (the rest are day files).
    public var exportsUnchanged = 0
    /// Files with a new modification time but the same content (only the manifest is updated).
    public var filesTouched = 0
    /// Months rebuilt from raw files and months extended with new files (-1: full rebuild).
    public var monthsRebuilt = 0
    public var monthsAppended = 0
    /// Of the extended months' stored blocks, those kept byte for byte.
    public var blocksKept = 0
    /// Nothing had changed: no new generation was published.
    public var upToDate = false
    public var generation: UInt64 = 0
    public var elapsedSeconds = 0.0

    /// Samples read from the Apple Health export, by type, and the first and last start among them.
    public var exportSamples: [String: Int] = [:]
    public var exportSpan: ClosedRange<Int64>?
    /// What the export reader left out, and why (also among `warnings`, with the export's path).
    public var exportFindings: [String] = []

    /// True when some input was skipped: the store is consistent but incomplete.
    public var isPartial: Bool { !skipped.isEmpty }
}

/// Progress of a running compaction, for a progress bar.
public struct CompactionProgress: Sendable {
    public var filesDone: Int
    public var filesTotal: Int
    public var bytesDone: Int
    public var bytesTotal: Int
    /// Samples read so far from an Apple Health export (0 while day files are read).
    public var exportSamplesRead = 0
}
