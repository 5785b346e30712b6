import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Settings for ``Compactor``.
public struct CompactionOptions: Sendable {
    /// Samples per block (segment-v3 §5).
    public var blockSamples = SegmentFormat.defaultBlockSamples
    /// Compressor for blocks and dictionaries; a block that does not shrink is stored raw.
    public var codec: BlockCodec = .lz4
    public var zstdLevel: Int32 = 3
    /// Day files merged between hand-overs of complete months to the segment writers; the parser
    /// threads run up to twice as many ahead of the merge (or two each, if more).
    public var batchSize = 16
    /// Parser threads (default: one per core).
    public var threads = Cores.online
    /// Ignore the previous state and rebuild every segment from the raw files.
    public var rebuild = false
    /// UTC months to rebuild from the raw files even if no raw file changed: what
    /// `tsdb verify --repair` found damaged.
    public var rebuildMonths: Set<MonthIndex> = []
    /// More added or changed files than this are handled by a full (streaming) rebuild, which
    /// keeps memory bounded; fewer are merged into the existing store.
    public var incrementalFileLimit = 64
    /// Wait for another compaction of the same store to finish (else fail at once).
    public var waitForLock = true
    /// Called when the store is locked by another process (its pid if known) before waiting.
    public var onLockWait: (@Sendable (Int32?) -> Void)?
    /// Reads the newest Apple Health export in `exports/` (the import subsystem's reader).
    package var exportReader: ExportSampleReader?
    /// Interned bytes above which strings no pending sample uses are dropped (ExportCompaction.swift).
    package var stringBudget = 16 << 20

    public init() {}
}

/// Keeps a store in step with its raw folder; the raw folder is only ever read.
///
/// The first run (or `rebuild`) parses every day file, in date order and in parallel batches,
/// and writes each (type, month) as soon as no later file can add to it, so memory holds about
/// two months of samples. Later runs compare the raw files with the manifest (size and mtime,
/// then a content hash): months that only gained new files are rewritten from their existing
/// segments plus the new samples; months with a changed or deleted file are rebuilt from every
/// raw file that contributes to them; nothing changed means nothing is written. Segments are
/// written under a new generation's names and fsynced; the manifest is published atomically
/// last; only then are files no longer named removed. A crash at any point leaves the previous
/// manifest and its files intact.
public final class Compactor {
    public let layout: StoreLayout
    public var options: CompactionOptions
    /// The parser threads' buffers, reused from day file to day file (one per thread at most).
    private let readBuffers = Pool<ReadBuffer>()
    /// Written months' sample arrays, reused for the next month of their type.
    private let sampleBuffers = SampleBuffers()

    public init(layout: StoreLayout, options: CompactionOptions = CompactionOptions()) {
        self.layout = layout
        self.options = options
    }

    struct MonthKey: Hashable, Comparable {
        var type: Int32
        var month: MonthIndex
        static func < (a: MonthKey, b: MonthKey) -> Bool { (a.month.rawValue, a.type) < (b.month.rawValue, b.type) }
    }

    var strings = ByteInterner()
    var pending: [MonthKey: [PackedSample]] = [:]
    var written: [MonthKey: Manifest.SegmentEntry] = [:]
    /// Stored segments that the rewrite of a (type, month) extends, keeping their blocks before the
    /// new samples as they are (IncrementalCompaction.swift).
    var extending: [MonthKey: MappedFile] = [:]
    /// The published generation's segments by month: one that a full rebuild (not an explicit
    /// `rebuild`) writes again byte for byte keeps its file (a newer export rewrites only the
    /// months it changes). By month, then searched by type: keys made of the type's name and the
    /// month were a string built and hashed per segment of the store on every run.
    var publishedSegments: [MonthIndex: [Manifest.SegmentEntry]] = [:]
    /// Segments written this run that kept a published file.
    var segmentsKept = 0
    var late: [MonthKey: [PackedSample]] = [:]
    /// Buffers ``merge(_:keep:)`` gathers a file's samples in, kept for the next file.
    private var gathered = GatheredSamples()
    var generation: UInt64 = 1
    var report = CompactionReport()
    var syncer = BackgroundSyncer()
    /// The one file this run writes its segments into (``SegmentPack``).
    var pack: SegmentPack?
    /// The files whose segments this run reads back (the published ones, and its own pack while an
    /// export streams in), each mapped once, and again if it has grown.
    var storedFiles = MappedFiles()
    /// Segments being written on other threads (a full rebuild's day files, an incremental run's
    /// months), and their keys.
    var writes: SegmentWrites?
    var submitted: Set<MonthKey> = []
    /// Segments written on other threads at once, at most: a month of every type (18 in a
    /// watch's year) and the next month's first, about two months of samples in memory.
    static let segmentsInFlight = 32
    static let daysInLongestMonth = 31
    /// While an export streams in, samples of a written (type, month) join it again (see
    /// ExportCompaction.swift) instead of waiting as late samples.
    var mergingExport = false
    /// The string table's size that triggers its compaction (ExportCompaction.swift).
    var stringLimit = 0

    public func run(progress: ((CompactionProgress) -> Void)? = nil) throws(TSDBError) -> CompactionReport {
        let clock = ContinuousClock.now
        try FileSystem.makeDirectories(layout.segmentsDirectory)
        // Held until the new manifest's folder is synced: the next run deletes what it replaced.
        let lock = try StoreLock(
            path: layout.storeDirectory + "/LOCK", wait: options.waitForLock, onWait: options.onLockWait)
        defer { withExtendedLifetime(lock) {} }
        // No removal or sync outlives the run: one with nothing to do, or one that fails midway.
        defer { _ = try? syncer.finish() }
        let folderSync = try compactAndPublish(progress: progress)
        // The run's memory is given back while the manifest's folder syncs (a device's wait, 0.3-0.4
        // ms here), not after: releases and deallocations (a year's listing, manifests, interned
        // strings) were ~1.8 M of a new day's 13 M instructions (callgrind), and the process ends
        // soon after.
        releaseRunState()
        if let folderSync {
            try folderSync.finish()
            DamageLog.clear(layout)
        }
        let elapsed = ContinuousClock.now - clock
        report.elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// Compacts and renames the new manifest into place; returns the sync of its folder, still
    /// under way (nil when nothing was published).
    private func compactAndPublish(progress: ((CompactionProgress) -> Void)?) throws(TSDBError) -> BackgroundSyncer? {
        strings = ByteInterner()
        pending = [:]
        written = [:]
        extending = [:]
        late = [:]
        syncer = BackgroundSyncer()
        report = CompactionReport()
        stringLimit = options.stringBudget

        // Listed partly on the other core (unless one thread is asked for) while the manifest is read.
        let pendingListing = try RawFileDiscovery.start(layout, parallel: options.threads > 1)
        // The published generation: the base for an incremental run, and (rebuild or not) the
        // files to keep for readers that opened it.
        var published: Manifest?
        if FileSystem.exists(layout.manifestPath) {
            do {
                published = try Manifest.read(at: layout.manifestPath)
            } catch {
                report.warnings.append("\(error) — rebuilding the store from the raw files")
            }
        }
        let previous = options.rebuild ? nil : published
        // Also what lets this run write: what a crashed one left is gone.
        let (damage, obsolete) = SegmentSweep.run(layout, keeping: published)
        remove(obsolete)
        // An explicit rebuild writes every file again, as asked.
        publishedSegments = [:]
        for s in previous?.segments ?? [] { publishedSegments[s.monthIndex, default: []].append(s) }
        segmentsKept = 0
        generation = (published?.generation ?? 0) + 1
        report.generation = generation
        let pack = SegmentPack(storeDirectory: layout.storeDirectory, generation: generation)
        self.pack = pack
        defer { (self.pack, storedFiles) = (nil, MappedFiles()) }
        var rebuildMonths = options.rebuildMonths
        let listing = try pendingListing.finish()
        if previous != nil {
            rebuildMonths.formUnion(damage.months)
            report.repairs = damage.findings
            report.monthsRepaired = damage.months.count
        }
        let files = listing.files
        report.skipped = listing.skipped
        report.ignored = listing.ignored
        var plan = previous.map { IncrementalPlan(files: files, previous: $0) }
        try plan?.recogniseTouchedExports()
        var manifest: Manifest
        do throws(TSDBError) {
            // A new export touches nearly every month: it is streamed through a full rebuild.
            if let previous, let plan, plan.candidates.count <= options.incrementalFileLimit,
                !plan.candidates.contains(where: \.isExport)
            {
                guard
                    let updated = try incremental(
                        plan, previous: previous, rebuilding: rebuildMonths, progress: progress)
                else {
                    report.upToDate = true
                    report.generation = previous.generation
                    finishReport(previous)
                    return nil
                }
                manifest = updated
            } else {
                manifest = try fullRebuild(files, progress: progress)
            }
            try publishPack(pack, in: &manifest)
        } catch {
            // Nothing was published: the segments this run wrote go, as a crash's would.
            _ = try? syncer.finish()
            pack.discard()
            removeCrashLeftovers(newerThan: published?.generation ?? 0)
            throw error
        }

        report.segmentsWritten = written.count - segmentsKept
        report.segmentsUnchanged = segmentsKept

        // Durability before publication: the pack of new segments, the folder naming it and the
        // new manifest's bytes, all synced side by side (the manifest's on this thread, while the
        // others' run); then the manifest renamed into place and its folder synced. In turn, the
        // folder and the manifest waited for the last segment: one new day into a year 11.9-12.7
        // -> 9.9-10.2 ms (at c3a43be, one file per segment).
        manifest.generation = generation
        let staged = layout.manifestPath + ".tmp"
        do throws(TSDBError) {
            try FileSystem.writeUnpublished(manifest.encode(), to: staged)
            try syncer.finish()
        } catch {
            _ = try? syncer.finish()
            FileSystem.remove(staged)
            pack.discard()
            throw error
        }
        // The manifest replaced keeps a second name, so the rename frees nothing: renaming over a
        // file's last name took 0.40 ms here and 0.07 with a link made first (ext4 mounted with
        // `discard` trims the freed blocks there and then); the next run removes it, off its path.
        FileSystem.link(layout.manifestPath, as: layout.replacedManifestPath)
        try FileSystem.moveIntoPlace(staged, as: layout.manifestPath)
        let folderSync = BackgroundSyncer()
        folderSync.sync(layout.storeDirectory, directory: true)
        // The files `published` names stay for readers that opened it, until the next compaction
        // starts (``SegmentSweep``).
        finishReport(manifest)
        return folderSync
    }

    /// Removes what the sweep left (the manifest the last run replaced, files of earlier runs) on
    /// another thread while this one works: a removal that frees a file's blocks waits for the
    /// device (0.4 ms here, of 0.14 ms CPU), and it is done long before this run syncs anything.
    /// One new day into the year took 4.87 -> 4.55 ms with the manifest's second name (medians of 31
    /// alternating, `ab.py`).
    private func remove(_ obsolete: SegmentSweep.Obsolete) {
        guard !obsolete.isEmpty else { return }
        if options.threads > 1 { syncer.run { obsolete.remove() } } else { obsolete.remove() }
    }

    /// Drops what the run gathered (the caller may keep this compactor).
    private func releaseRunState() {
        strings = ByteInterner()
        (pending, written, extending, late) = ([:], [:], [:], [:])
        publishedSegments = [:]
        gathered = GatheredSamples()
    }

    /// Closes the run's pack, gives its segments their file's size, and has it and the folder naming
    /// it fsynced (before the manifest naming it is published), while the manifest is encoded.
    private func publishPack(_ pack: SegmentPack, in manifest: inout Manifest) throws(TSDBError) {
        guard let size = try pack.close() else { return }
        for i in manifest.segments.indices where manifest.segments[i].path == pack.relativePath {
            manifest.segments[i].fileSize = size
        }
        syncer.sync(pack.path)
        syncer.sync(layout.segmentsDirectory, directory: true)
    }

    private func finishReport(_ manifest: Manifest) {
        report.segmentsTotal = manifest.segments.count
        report.segmentBytes = manifest.segments.reduce(0) { $0 + $1.size }
        let files = manifest.files
        report.files = files.count
        report.fileBytes = files.reduce(0) { $0 + $1.size }
        report.samplesStored = manifest.segments.reduce(0) { $0 + $1.sampleCount }
        report.types = manifest.typeCount
    }

    // MARK: Full rebuild

    private func fullRebuild(_ files: [RawFile], progress: ((CompactionProgress) -> Void)?) throws(TSDBError)
        -> Manifest
    {
        report.monthsRebuilt = -1
        var manifest = Manifest()
        let totalBytes = files.reduce(0) { $0 + $1.size }
        var done = 0
        var bytesDone = 0
        progress?(CompactionProgress(filesDone: 0, filesTotal: files.count, bytesDone: 0, bytesTotal: totalBytes))
        // Pipeline: the worker threads parse day files ahead of this thread, which merges them in
        // order and hands complete months to the segment writers; segment fsyncs run meanwhile.
        let dayFiles = files.filter { !$0.isExport }
        // Day files first, in date order; then the export, streamed over the months they wrote.
        let exports = files.filter(\.isExport)
        // Segments are encoded and written on other threads while the next files merge.
        writes = SegmentWrites(capacity: Self.segmentsInFlight)
        defer {
            if let writes { _ = writes.finish() }
            writes = nil
        }
        // Room for every parser thread to be busy, on many cores too.
        let ahead = max(2 * options.batchSize, 2 * options.threads)
        let parsing = ParseStream(
            dayFiles, threads: options.threads, ahead: ahead, options: options, buffers: readBuffers)
        defer { parsing.stop() }
        for (i, file) in dayFiles.enumerated() {
            if let parsed = accept(file, parsing.take(i)) {
                let months = merge(parsed, keep: { _ in true })
                manifest.rawFiles.append(entry(file, parsed, months))
                report.filesAdded += 1
            }
            bytesDone += file.size
            done += 1
            guard done % options.batchSize == 0 || done == dayFiles.count else { continue }
            // A day file holds samples overlapping its local day, so nothing starts more than
            // two days before its date: months ending 3+ days before this file are complete.
            try flush(before: file.day - 3)
            progress?(
                CompactionProgress(
                    filesDone: done, filesTotal: files.count, bytesDone: bytesDone, bytesTotal: totalBytes))
        }
        try flush(before: .max)
        try finishWrites()
        writes = nil
        try rewriteLateMonths()
        for file in exports {
            let before = bytesDone
            let exportProgress = { (fraction: Double, samples: Int) -> Void in
                progress?(
                    CompactionProgress(
                        filesDone: done, filesTotal: files.count, bytesDone: before + Int(fraction * Double(file.size)),
                        bytesTotal: totalBytes, exportSamplesRead: samples))
            }
            let entry = try mergeExport(file, keep: { _ in true }, flushing: true, progress: exportProgress)
            manifest.rawFiles.append(entry)
            report.filesAdded += 1
            try flush(before: .max)
            bytesDone += file.size
            done += 1
            progress?(
                CompactionProgress(
                    filesDone: done, filesTotal: files.count, bytesDone: bytesDone, bytesTotal: totalBytes))
        }
        manifest.rawFiles.sort { $0.place < $1.place }
        manifest.segments = written.keys.sorted().map { written[$0]! }
        return manifest
    }

    // MARK: Parsing and merging

    /// A parse result, or nil after recording why the file is skipped.
    func accept(_ file: RawFile, _ result: Result<ParsedDayFile, TSDBError>) -> ParsedDayFile? {
        switch result {
        case .failure(let error):
            report.skipped.append(error)
            return nil
        case .success(let parsed):
            if let date = parsed.date, date != file.dateText {
                report.skipped.append(
                    TSDBError.invalidInput(
                        "\"date\" is \"\(date)\" but the file name says \(file.dateText); file skipped",
                        path: file.absolutePath))
                return nil
            }
            report.filesRead += 1
            report.bytesRead += file.size
            if file.isExport { report.exportsRead += 1 }
            report.samplesRead += parsed.samples.count
            report.warnings += parsed.warnings.map { "\(file.absolutePath): \($0)" }
            return parsed
        }
    }

    func entry(_ file: RawFile, _ parsed: ParsedDayFile, _ months: [MonthIndex]) -> Manifest.RawFileEntry {
        Manifest.RawFileEntry(
            place: file.path, size: file.size, mtimeNanoseconds: file.mtimeNanoseconds,
            contentHash: parsed.contentHash, sampleCount: parsed.samples.count, months: MonthList(months))
    }

    /// Parses `batch` now, on this thread and (for several files) the other cores: one result per file.
    /// A small compaction's few new files are parsed here rather than handed to a thread to wait for.
    func parse(_ batch: [RawFile]) -> [Result<ParsedDayFile, TSDBError>] {
        let job = ParseJob(count: batch.count)
        Self.parse(batch, into: job, options: options, buffers: readBuffers)
        return job.results
    }

    private static func parse(
        _ batch: [RawFile], into job: ParseJob, options: CompactionOptions, buffers: Pool<ReadBuffer>
    ) {
        let work = { @Sendable (i: Int) in
            job.slots[i] = parse(batch[i], alone: batch.count == 1, options: options, buffers: buffers)
        }
        if options.threads > 1 && batch.count > 1 {
            DispatchQueue.concurrentPerform(iterations: batch.count, execute: work)
        } else {
            for i in 0..<batch.count { work(i) }
        }
    }

    /// One raw file parsed, hashed and its months found; `alone` when it is the only file to parse.
    static func parse(
        _ file: RawFile, alone: Bool, options: CompactionOptions, buffers: Pool<ReadBuffer>
    ) -> Result<ParsedDayFile, TSDBError> {
        let reader = options.exportReader
        return Result { () throws(TSDBError) -> ParsedDayFile in
            let parse = { (b: UnsafeRawBufferPointer) throws(TSDBError) -> ParsedDayFile in
                var parsed = try file.parse(b, exportReader: reader)
                parsed.contentHash = ContentHash.hash(b)
                parsed.months = Self.months(of: parsed.samples)
                return parsed
            }
            // An export is hashed, not parsed, from its bytes: mapped, since it may be GBs.
            guard !file.isExport else {
                let mapped = try MappedFile(path: file.absolutePath)
                mapped.adviseSequential()
                return try mapped.withBytes(parse)
            }
            // A file parsed alone is mapped: a buffer's fresh pages (~1.5 us each to fault in
            // here) pay off only when later files reuse them, and a new day's one file would
            // fault in 60 of them for nothing (the mapping: a few faults over the page cache).
            guard !alone else { return try MappedFile(path: file.absolutePath).withBytes(parse) }
            let buffer = buffers.take() ?? ReadBuffer()
            defer { buffers.give(buffer) }
            return try buffer.withContents(of: file.absolutePath, parse)
        }
    }

    /// The sorted UTC months the samples start in.
    static func months(of samples: [PackedSample]) -> [MonthIndex] {
        var out = Set<MonthIndex>()
        var start = Int64.max
        var end = Int64.min
        for s in samples where s.start < start || s.start >= end {
            let m = MonthIndex.containing(s.start)
            (start, end) = (m.start, m.end)
            out.insert(m.month)
        }
        return out.sorted()
    }

    /// Moves a file's samples whose month passes `keep` into the per-(type, month) buffers,
    /// re-numbering its strings. Returns the months of all its samples.
    func merge(_ parsed: ParsedDayFile, keep: (MonthIndex) -> Bool) -> [MonthIndex] {
        var remap = [Int32](repeating: 0, count: parsed.strings.count)
        for id in 0..<parsed.strings.count {
            remap[id] = parsed.strings.withBytes(Int32(id)) { strings.intern($0) }
        }
        @inline(__always) func map(_ id: Int32) -> Int32 { id >= 0 ? remap[Int(id)] : id }
        var monthStart = Int64.max
        var monthEnd = Int64.min
        var monthIndex = MonthIndex(rawValue: 0)
        var keepMonth = false
        // A day file interleaves its types (runs of ~2.5 samples in the generated year): each
        // (type, month) gathers its samples here and is handed over once, not once a run (a
        // hand-over hashes its key three times; handing over runs made the merge a tenth of the
        // year's compaction in instructions).
        var gathered = self.gathered
        self.gathered = GatheredSamples()
        defer {
            gathered.handOver(to: self)
            self.gathered = gathered
        }
        for var s in parsed.samples {
            if s.start < monthStart || s.start >= monthEnd {
                (monthIndex, monthStart, monthEnd) = MonthIndex.containing(s.start)
                keepMonth = keep(monthIndex)
            }
            guard keepMonth else { continue }
            s.type = map(s.type)
            s.unit = map(s.unit)
            s.source = map(s.source)
            s.device = map(s.device)
            s.metadata = map(s.metadata)
            if s.valueTag == ValueTag.numberText { s.mantissa = Int64(remap[Int(s.mantissa)]) }
            if gathered.append(s, MonthKey(type: s.type, month: monthIndex)) { gathered.handOverFullest(to: self) }
        }
        return parsed.months
    }

    /// Samples moved into the buffers for `key`: pending, or late when its segment is written or
    /// being written (an export's samples always pending: it rewrites such months itself).
    func handOver(_ key: MonthKey, _ samples: [PackedSample]) {
        if (written[key] != nil || submitted.contains(key)) && !mergingExport {
            late[key, default: []] += samples
        } else {
            // A new month starts in its type's last written array (the default is made only then),
            // or in one with room for a month of days like this one.
            let monthOfDays = samples.count * Self.daysInLongestMonth
            pending[key, default: sampleBuffers.take(for: key.type, expecting: monthOfDays)] += samples
        }
    }

    // MARK: Writing segments

    /// Writes every pending (type, month) whose month ends before day `day`.
    func flush(before day: Int64) throws(TSDBError) {
        for key in pending.keys.sorted() {
            let nextMonthDay = key.month.next.start / ISO8601.microsPerDay
            guard day == .max || nextMonthDay <= day else { continue }
            if let writes, written[key] == nil, !submitted.contains(key) {
                submitted.insert(key)
                // Moved into the job, never held here too: the job sorts them in place.
                writes.submit(
                    segmentJob(key, pending.removeValue(forKey: key)!, extending: extending.removeValue(forKey: key)))
            } else {
                if submitted.contains(key) { try finishWrites() }
                var samples = pending.removeValue(forKey: key)!
                try writeSegment(key, &samples)
            }
        }
    }

    func writeSegment(_ key: MonthKey, _ samples: inout [PackedSample]) throws(TSDBError) {
        if let existing = written[key] {
            // The export reached a month the day files wrote: rewrite it with both.
            pending[key] = samples
            try loadStored(existing)
            samples = pending.removeValue(forKey: key)!
        }
        var job = segmentJob(key, samples, extending: extending.removeValue(forKey: key))
        samples = []  // the job's now, alone: sorted in place
        record(key, try job.run())
    }

    /// The job of writing `samples` as the segment of `key`.
    func segmentJob(_ key: MonthKey, _ samples: consuming [PackedSample], extending: MappedFile?) -> SegmentJob {
        SegmentJob(
            key: key, samples: samples, strings: strings, extending: extending, options: options,
            published: publishedSegment(key),
            storeDirectory: layout.storeDirectory, pack: pack!, buffers: sampleBuffers)
    }

    func record(_ key: MonthKey, _ outcome: SegmentJob.Outcome) {
        written[key] = outcome.entry
        if outcome.kept { segmentsKept += 1 }
        report.blocksKept += outcome.blocksKept
    }

    /// Waits for the segments written on other threads and records them; throws the first failure.
    func finishWrites() throws(TSDBError) {
        guard let writes else { return }
        var failure: TSDBError?
        for (key, result) in writes.finish(parallel: options.threads > 1) {
            switch result {
            case .success(let outcome): record(key, outcome)
            case .failure(let error): failure = failure ?? error
            }
        }
        submitted.removeAll()
        if let failure { throw failure }
    }

    /// The published segment of `key`'s type and month, if any.
    func publishedSegment(_ key: MonthKey) -> Manifest.SegmentEntry? {
        guard let month = publishedSegments[key.month] else { return nil }
        let type = strings.string(key.type)
        return month.first { $0.type == type }
    }

    /// Sorts by start, then by every other field (so output does not depend on input order),
    /// and drops exact duplicates (a sample present in two day files is stored once).
    static func sortAndDeduplicate(_ samples: inout [PackedSample]) {
        // Day files arrive in date order and stored segments are already sorted, so most
        // inputs are in order: a linear check saves the O(n log n) sort.
        let inOrder = samples.withUnsafeBufferPointer { p in
            p.count < 2 || (1..<p.count).allSatisfy { !precedes(p[$0], p[$0 - 1]) }
        }
        if !inOrder { samples.sort(by: precedes) }
        // Through the buffer, where the array checked it was unique at each write, and a sample
        // moved only after a duplicate: 35.5 -> 20.3 M instructions on the year (callgrind).
        let kept = samples.withUnsafeMutableBufferPointer { p -> Int in
            var out = 0
            for i in p.indices {
                if out > 0 && p[out - 1].sameSample(as: p[i]) { continue }
                if out != i { p[out] = p[i] }
                out += 1
            }
            return out
        }
        samples.removeSubrange(kept...)
    }

    /// The canonical sample order (segment-v3 §5.4).
    @inline(__always)
    static func precedes(_ a: PackedSample, _ b: PackedSample) -> Bool {
        if a.start != b.start { return a.start < b.start }
        if a.end != b.end { return a.end < b.end }
        if a.valueTag != b.valueTag { return a.valueTag < b.valueTag }
        if a.mantissa != b.mantissa { return a.mantissa < b.mantissa }
        if a.source != b.source { return a.source < b.source }
        if a.device != b.device { return a.device < b.device }
        if a.unit != b.unit { return a.unit < b.unit }
        if a.metadata != b.metadata { return a.metadata < b.metadata }
        return a.forms < b.forms
    }

    /// Orders samples equal in start, end and value by the content of their strings (source,
    /// device, unit, metadata) and then their forms, instead of by interned ids, which depend on
    /// the order inputs were read (segment-v3 §5.4). Such ties are rare and short.
    static func orderTies(_ samples: inout [PackedSample], strings: ByteInterner) {
        // Absent, then null, then text by its bytes.
        func text(_ id: Int32) -> [UInt8] { id >= 0 ? [2] + strings.withBytes(id) { Array($0) } : [UInt8(id + 2)] }
        func key(_ s: PackedSample) -> [[UInt8]] {
            let number = s.valueTag == ValueTag.numberText ? text(Int32(s.mantissa)) : []
            return [number] + [s.source, s.device, s.unit, s.metadata].map(text)
        }
        func tied(_ a: PackedSample, _ b: PackedSample) -> Bool {
            a.start == b.start && a.end == b.end && a.valueTag == b.valueTag
                && (a.mantissa == b.mantissa || a.valueTag == ValueTag.numberText)
        }
        var i = 0
        while i < samples.count {
            var j = i + 1
            while j < samples.count && tied(samples[j], samples[i]) { j += 1 }
            if j - i > 1 {
                samples[i..<j].sort { a, b in
                    let (x, y) = (key(a), key(b))
                    if x != y { return x.lexicographicallyPrecedes(y) { $0.lexicographicallyPrecedes($1) } }
                    return a.forms < b.forms
                }
            }
            i = j
        }
    }

    /// Samples that arrived after their month was written (a day file far from its samples'
    /// dates): read the written segment back, add them, and write it again.
    private func rewriteLateMonths() throws(TSDBError) {
        for key in late.keys.sorted() {
            guard let entry = written[key] else { continue }
            pending[key] = late[key]
            try loadStored(entry)
            written[key] = nil
            var samples = pending.removeValue(forKey: key)!
            try writeSegment(key, &samples)
        }
    }

    /// When nothing is published: deletes only what crashed runs left, temporaries and segments
    /// of generations newer than the published one (the previous generation stays for readers).
    func removeCrashLeftovers(newerThan generation: UInt64) {
        forEachSegmentFile { path, name in
            if name.hasSuffix(".tmp") || (Self.generation(ofSegmentFile: name).map { $0 > generation } ?? false) {
                FileSystem.remove(path)
            }
        }
        FileSystem.remove(layout.manifestPath + ".tmp")
    }

    /// Calls `body` with the path and name of every file under `segments/`: the files themselves
    /// (`<type>.<YYYY-MM>.g<N>.seg`), and those in the per-type folders of stores written before
    /// segments shared one folder, each folder removed once empty.
    func forEachSegmentFile(_ body: (_ path: String, _ name: String) -> Void) {
        guard let entries = try? FileSystem.names(in: layout.segmentsDirectory) else { return }
        for entry in entries {
            let path = layout.segmentsDirectory + "/" + entry.name
            guard entry.isDirectory else {
                body(path, entry.name)
                continue
            }
            for f in (try? FileSystem.names(in: path)) ?? [] { body(path + "/" + f.name, f.name) }
            FileSystem.removeDirectoryIfEmpty(path)
        }
    }

    /// The generation in a segment file name (`2025-03.g12.seg` → 12).
    static func generation(ofSegmentFile name: String) -> UInt64? { generation(ofSegmentFile: name[...]) }

    /// The generation in a segment file name, read from its bytes: a compaction asks for every
    /// file in `segments/` (splitting each name into strings was a quarter of a sweep, callgrind).
    static func generation(ofSegmentFile name: Substring) -> UInt64? {
        let bytes = name.utf8
        let dot = UInt8(ascii: ".")
        guard let last = bytes.lastIndex(of: dot),
            bytes[bytes.index(after: last)...].elementsEqual(SegmentFormat.fileExtension.utf8),
            let previous = bytes[..<last].lastIndex(of: dot), bytes[..<previous].contains(where: { $0 != dot })
        else { return nil }
        let field = bytes[bytes.index(after: previous)..<last]
        guard field.first == UInt8(ascii: "g"), field.count > 1 else { return nil }
        var generation: UInt64 = 0
        for c in field.dropFirst() {
            guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return nil }
            let (times10, o1) = generation.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(c - UInt8(ascii: "0")))
            guard !o1 && !o2 else { return nil }
            generation = sum
        }
        return generation
    }
}

/// One file's samples gathered by (type, month) in file order, before they are handed over to
/// the compactor's buffers. Few keys at a time (a day file's types), found by a linear search
/// from the last one used. The buffers keep their memory from file to file (growing them anew
/// was a fifth of the merge's instructions); at most ``limit`` samples are held at once (an
/// export's chunk is large), so a buffer stays within two megabytes.
struct GatheredSamples {
    static let limit = 1 << 14
    private var keys: [Compactor.MonthKey] = []
    /// `samples[..<keys.count]` are the keys' samples; the rest are empty buffers kept for reuse.
    private var samples: [[PackedSample]] = []
    private var last = 0
    private var held = 0

    /// Adds `s` under `key`; true when ``limit`` samples are held.
    @inline(__always)
    mutating func append(_ s: PackedSample, _ key: Compactor.MonthKey) -> Bool {
        if last >= keys.count || keys[last] != key { last = index(of: key) }
        samples[last].append(s)
        held += 1
        return held >= Self.limit
    }

    private mutating func index(of key: Compactor.MonthKey) -> Int {
        if let i = keys.firstIndex(of: key) { return i }
        keys.append(key)
        if samples.count < keys.count { samples.append([]) }
        return keys.count - 1
    }

    /// Hands the key holding the most samples over (each key's samples stay in order: later ones
    /// are appended after them).
    mutating func handOverFullest(to compactor: Compactor) {
        guard let i = keys.indices.max(by: { samples[$0].count < samples[$1].count }) else { return }
        compactor.handOver(keys[i], samples[i])
        held -= samples[i].count
        samples[i].removeAll(keepingCapacity: true)
    }

    /// Hands every key's samples over, in the order the keys first appeared, and forgets the keys.
    mutating func handOver(to compactor: Compactor) {
        for i in keys.indices where !samples[i].isEmpty {
            compactor.handOver(keys[i], samples[i])
            samples[i].removeAll(keepingCapacity: true)
        }
        keys.removeAll(keepingCapacity: true)
        (last, held) = (0, 0)
    }
}
