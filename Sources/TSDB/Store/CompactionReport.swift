/// What a compaction did.
public struct CompactionReport: Sendable {
    public var filesRead = 0
    public var bytesRead = 0
    /// Files not compacted, each with the reason (file, offset, line). Their samples are not in the store.
    public var skipped: [TSDBError] = []
    /// Non-fatal findings (e.g. unknown keys ignored), prefixed with the file.
    public var warnings: [String] = []
    /// Samples read from the raw files.
    public var samplesRead = 0
    /// Samples stored; fewer than read when identical samples appeared in two day files.
    public var samplesStored = 0
    public var duplicatesDropped: Int { samplesRead - samplesStored }
    public var types = 0
    public var segmentsWritten = 0
    public var segmentBytes = 0
    public var generation: UInt64 = 0
    public var elapsedSeconds = 0.0

    /// True when some input was skipped: the store is consistent but incomplete.
    public var isPartial: Bool { !skipped.isEmpty }
}

/// Progress of a running compaction, for a progress bar.
public struct CompactionProgress: Sendable {
    public var filesDone: Int
    public var filesTotal: Int
    public var bytesDone: Int
    public var bytesTotal: Int
}
