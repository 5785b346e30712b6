import Dispatch

/// One (type, month)'s samples on their way to a segment file, with everything the writing needs,
/// so that it can run on another thread while the compactor merges the next day files.
struct SegmentJob: Sendable {
    let key: Compactor.MonthKey
    var samples: [PackedSample]
    /// The compactor's strings when the job was made (a copy: the compactor goes on interning, and
    /// so does the job, with the strings of the segment it extends).
    var strings: ByteInterner
    /// The stored segment of this (type, month) that the samples join (a month that only gained
    /// files): its blocks before the new samples are kept as they are, the rest decoded to join
    /// them. Read here rather than by the compactor, so that both threads share the reading.
    let extending: MappedFile?
    let options: CompactionOptions
    /// The published generation's segment of this type and month, kept if written again byte for byte.
    let published: Manifest.SegmentEntry?
    let storeDirectory: String
    /// The run's file, where the segment goes.
    let pack: SegmentPack
    /// Where the samples' array goes once encoded, for the type's next month.
    var buffers: SampleBuffers? = nil

    struct Outcome: Sendable {
        var entry: Manifest.SegmentEntry
        /// The published file was kept.
        var kept: Bool
        /// Blocks of the extended segment kept as they were stored.
        var blocksKept = 0
    }

    /// Orders the samples (segment-v3 §5.4), encodes them and writes them into the run's pack.
    mutating func run() throws(TSDBError) -> Outcome {
        let prefix = try extending.flatMap { (file) throws(TSDBError) in try joinStored(file) }
        let blocksKept = prefix?.entries.count ?? 0
        defer {
            // Moved out first: an array still held here would be copied, not kept, when emptied.
            var spent: [PackedSample] = []
            swap(&spent, &samples)
            buffers?.give(&spent, for: key.type)
        }
        Compactor.sortAndDeduplicate(&samples)
        Compactor.mergeSameReadings(&samples)
        Compactor.orderTies(&samples, strings: strings)
        if let last = prefix?.lastStart {
            precondition(samples.first!.start > last, "samples joining a segment's kept blocks start after them")
        }
        let (y, m) = (key.month.year, key.month.month)
        let type = strings.string(key.type)
        var writer = SegmentWriter()
        writer.blockSamples = options.blockSamples
        writer.codec = options.codec
        writer.zstdLevel = options.zstdLevel
        let bytes = samples.withUnsafeBufferPointer {
            writer.encode(type: type, year: y, month: m, samples: $0, strings: strings, after: prefix)
        }
        let crc = CRC32C.checksum(bytes)
        if let old = published, old.size == bytes.count, old.crc == crc, holds(old, bytes) {
            return Outcome(entry: old, kept: true, blocksKept: blocksKept)
        }
        // The pack is fsynced once the run has written every segment, before the manifest names it.
        let offset = try pack.append(bytes)
        // The pack's size is known when the run ends (Compactor.publishPack).
        let entry = Manifest.SegmentEntry(
            type: type, year: y, month: m, path: pack.relativePath, fileSize: 0, offset: offset, size: bytes.count,
            crc: crc, sampleCount: (prefix?.sampleCount ?? 0) + samples.count,
            firstStart: prefix?.firstStart ?? samples.first!.start, lastStart: samples.last!.start,
            maxEnd: samples.reduce(prefix?.maxEnd ?? .min) { max($0, $1.end) })
        return Outcome(entry: entry, kept: false, blocksKept: blocksKept)
    }

    /// Joins the stored segment in `file` to the samples: the blocks before the first new sample as
    /// they are stored (returned, with their strings interned), the samples of the rest decoded.
    private mutating func joinStored(_ file: MappedFile) throws(TSDBError) -> SegmentPrefix? {
        let reader = try SegmentReader(file: file)
        let kept = reader.blocksKept(whenAddingFrom: samples.lazy.map(\.start).min() ?? .max)
        var prefix: SegmentPrefix?
        if kept > 0 {
            prefix = try reader.prefix(blocks: kept)
            prefix!.intern(into: &strings)
        }
        try reader.appendSamples(fromBlock: kept, type: key.type, strings: &strings, to: &samples)
        return prefix
    }

    /// Whether the store holds exactly `bytes` where `entry` says (read back, not trusted from the
    /// manifest), in a file of the size the manifest gives (one cut short or grown is being repaired).
    private func holds(_ entry: Manifest.SegmentEntry, _ bytes: [UInt8]) -> Bool {
        let path = storeDirectory + "/" + entry.path
        guard (try? FileSystem.status(path))?.size == entry.fileSize,
            let file = try? MappedFile(path: path, offset: entry.offset, count: entry.size),
            file.count == bytes.count
        else { return false }
        return file.withBytes { mapped in bytes.withUnsafeBytes { $0.elementsEqual(mapped) } }
    }
}

/// Segment jobs running on other threads while the compactor goes on; at most `capacity` of them
/// waiting or running at once, so memory stays bounded when writing falls behind reading.
///
/// Jobs wait in a queue that libdispatch's workers take from, and so does the thread that
/// ``finish()``es, rather than sleeping until the workers are done. A run that hands every job
/// over at once and then finishes (an incremental one: a new day's 18 segments) asks no worker:
/// the finishing thread and one thread started on the other core take them all. Timed at each step
/// of one new day, libdispatch's workers started late on the busy core, and its start-up and
/// three threads cost more than the jobs they took.
final class SegmentWrites: Sendable {
    /// Places for jobs when the submitting thread goes on working (libdispatch's workers run the
    /// jobs); nil when it only submits and finishes (no bound on waiting jobs: their samples are in
    /// memory already).
    private let room: DispatchSemaphore?
    private let group = DispatchGroup()
    /// Submitted jobs no thread has taken yet, oldest first; taken out (moved, so a job's samples
    /// have one owner and sort in place) by whichever thread runs it.
    private let waiting = Locked<[SegmentJob]>([])
    private let outcomes = Locked<[(Compactor.MonthKey, Result<SegmentJob.Outcome, TSDBError>)]>([])

    /// Jobs streamed to libdispatch's workers while the submitter goes on, at most `capacity` at once.
    init(capacity: Int) { room = .room(for: capacity) }

    /// Jobs all handed over, then run by ``finish(parallel:)``.
    init() { room = nil }

    /// Queues `job` (after waiting for room, when streaming, and asking a worker to run the oldest
    /// waiting one).
    func submit(_ job: consuming SegmentJob) {
        room?.wait()
        group.enter()
        var handed: SegmentJob? = consume job
        waiting.withLock { $0.append(handed.take()!) }
        if room != nil { DispatchQueue.global().async { _ = self.runOldest() } }
    }

    /// Runs the oldest waiting job here; false if none is waiting.
    private func runOldest() -> Bool {
        guard var job = waiting.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return false }
        let result: Result<SegmentJob.Outcome, TSDBError>
        do throws(TSDBError) {
            result = .success(try job.run())
        } catch {
            result = .failure(error)
        }
        outcomes.withLock { $0.append((job.key, result)) }
        room?.signal()
        group.leave()
        return true
    }

    /// Runs waiting jobs here until none is left (with a second thread's help, when not streaming
    /// and `parallel`), waits for the rest, and gives every job's outcome by (type, month).
    func finish(parallel: Bool = true) -> [(Compactor.MonthKey, Result<SegmentJob.Outcome, TSDBError>)] {
        if room == nil, parallel, waiting.withLock({ $0.count > 1 }) {
            SecondThread.run { while self.runOldest() {} }
        }
        while runOldest() {}
        group.wait()
        return outcomes.withLock { done in
            defer { done = [] }
            return done.sorted { $0.0 < $1.0 }
        }
    }
}

/// The sample arrays of segments already written, kept for the next month of the same type: a
/// month's samples are gathered by appending (the array doubling as it grows) into memory new to
/// the process, whose pages fault in one by one (70% of a year's compaction's page faults were
/// those appends). A type's months are alike in size, so its last array fits its next month.
final class SampleBuffers: Sendable {
    private let spare = Locked<[Int32: [PackedSample]]>([:])

    /// An empty array for `type`'s next month, with the room of its last one if any, else with room
    /// for `expected` samples: grown by doubling from a day's samples, a type's first months wrote
    /// each sample into about two arrays' fresh pages, and a fresh page costs a fault (~1.5 us
    /// here). Room never written to is never faulted in.
    func take(for type: Int32, expecting expected: Int = 0) -> [PackedSample] {
        if let spent = spare.withLock({ $0.removeValue(forKey: type) }) { return spent }
        var fresh: [PackedSample] = []
        fresh.reserveCapacity(expected)
        return fresh
    }

    /// Keeps `samples`' memory for `type` (emptied, and only the largest one per type).
    func give(_ samples: inout [PackedSample], for type: Int32) {
        samples.removeAll(keepingCapacity: true)
        spare.withLock { spare in
            if samples.capacity > spare[type]?.capacity ?? 0 { spare[type] = samples }
        }
    }
}
