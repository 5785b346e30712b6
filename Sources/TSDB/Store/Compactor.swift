#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Settings for ``Compactor``.
public struct CompactionOptions: Sendable {
    /// Samples per block (segment-v1 §5).
    public var blockSamples = SegmentFormat.defaultBlockSamples
    /// Compressor for blocks and dictionaries; a block that does not shrink is stored raw.
    public var codec: BlockCodec = .zstd
    public var zstdLevel: Int32 = 3
    /// Day files parsed in parallel per batch.
    public var batchSize = 16
    /// Parser threads (default: one per core).
    public var threads = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    public init() {}
}

/// Builds a store from the day files under `raw/` (a full rebuild; the raw folder is only read).
///
/// Files are parsed in date order, in parallel batches. A (type, month) is encoded and written as
/// soon as no later day file can contribute to it, so memory holds about two months of samples.
/// Segments are written to temporary files, fsynced and renamed; the new manifest is published
/// atomically last, and only then are the previous generation's files removed.
public final class Compactor {
    public let layout: StoreLayout
    public var options: CompactionOptions

    public init(layout: StoreLayout, options: CompactionOptions = CompactionOptions()) {
        self.layout = layout
        self.options = options
    }

    struct MonthKey: Hashable, Comparable {
        var type: Int32
        /// `year * 12 + month - 1`.
        var month: Int32
        static func < (a: MonthKey, b: MonthKey) -> Bool { (a.month, a.type) < (b.month, b.type) }
    }

    private var strings = ByteInterner()
    private var pending: [MonthKey: [PackedSample]] = [:]
    private var written: [MonthKey: Manifest.SegmentEntry] = [:]
    private var late: [MonthKey: [PackedSample]] = [:]
    private var directoriesToSync = Set<String>()
    private var generation: UInt64 = 1
    private var report = CompactionReport()
    private var syncer = BackgroundSyncer()

    public func run(progress: ((CompactionProgress) -> Void)? = nil) throws(TSDBError) -> CompactionReport {
        let clock = ContinuousClock.now
        strings = ByteInterner(); pending = [:]; written = [:]; late = [:]; directoriesToSync = []
        syncer = BackgroundSyncer()
        report = CompactionReport()
        let previous = try? Manifest.read(at: layout.manifestPath)
        generation = (previous?.generation ?? 0) + 1
        report.generation = generation
        try FileSystem.makeDirectories(layout.segmentsDirectory)

        let (files, skippedPaths) = try RawFileDiscovery.find(rawDirectory: layout.rawDirectory)
        report.skipped = skippedPaths
        var manifest = Manifest()
        manifest.generation = generation
        var sizes: [Int] = []
        var totalBytes = 0
        for f in files {
            let size = (try? FileSystem.status(f.absolutePath).size) ?? 0
            sizes.append(size)
            totalBytes += size
        }
        var done = 0, bytesDone = 0
        progress?(CompactionProgress(filesDone: 0, filesTotal: files.count, bytesDone: 0, bytesTotal: totalBytes))

        // Pipeline: batch k+1 is parsed on the worker threads while this thread merges and
        // encodes batch k; segment fsyncs run on their own queue meanwhile.
        let batches = stride(from: 0, to: files.count, by: options.batchSize).map {
            Array(files[$0..<min($0 + options.batchSize, files.count)])
        }
        var pendingParse = batches.first.map { startParsing($0) }
        var batchStart = 0
        for (k, batch) in batches.enumerated() {
            let results = pendingParse!.wait()
            pendingParse = k + 1 < batches.count ? startParsing(batches[k + 1]) : nil
            for (file, result) in zip(batch, results) {
                switch result {
                case .failure(let error):
                    report.skipped.append(error)
                case .success(let parsed):
                    if let date = parsed.date, date != file.dateText {
                        report.skipped.append(TSDBError(.invalidInput, "\"date\" is \"\(date)\" but the file name says \(file.dateText); file skipped", path: file.absolutePath))
                        continue
                    }
                    let status = try? FileSystem.status(file.absolutePath)
                    manifest.rawFiles.append(Manifest.RawFileEntry(path: file.relativePath, size: status?.size ?? 0,
                                                                   mtimeNanoseconds: status?.mtimeNanoseconds ?? 0,
                                                                   sampleCount: parsed.samples.count))
                    report.filesRead += 1
                    report.samplesRead += parsed.samples.count
                    report.warnings += parsed.warnings.map { "\(file.absolutePath): \($0)" }
                    merge(parsed)
                }
            }
            for (i, _) in batch.enumerated() { bytesDone += sizes[batchStart + i] }
            done += batch.count
            report.bytesRead = bytesDone
            // A day file holds samples overlapping its local day, so nothing starts more than
            // two days before its date: months ending 3+ days before this batch are complete.
            try flush(before: batch.last!.day - 3)
            progress?(CompactionProgress(filesDone: done, filesTotal: files.count, bytesDone: bytesDone, bytesTotal: totalBytes))
            batchStart += batch.count
        }
        try flush(before: .max)
        try rewriteLateMonths()

        manifest.segments = written.keys.sorted().map { written[$0]! }
        // Durability before publication: every segment (fsynced in the background as it was
        // written) and its directory entry, then the manifest.
        try syncer.finish()
        for dir in directoriesToSync.sorted() { try FileSystem.syncDirectory(dir) }
        try FileSystem.syncDirectory(layout.segmentsDirectory)
        try FileSystem.writeAtomically(manifest.encode(), to: layout.manifestPath)
        removeUnreferencedFiles(manifest)

        report.segmentsWritten = manifest.segments.count
        report.segmentBytes = manifest.segments.reduce(0) { $0 + $1.fileSize }
        report.samplesStored = manifest.segments.reduce(0) { $0 + $1.sampleCount }
        report.types = Set(manifest.segments.map(\.type)).count
        let elapsed = ContinuousClock.now - clock
        report.elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// Starts parsing `batch` on background threads; `wait()` on the result gives one result per file.
    private func startParsing(_ batch: [RawFile]) -> ParseJob {
        let job = ParseJob(count: batch.count)
        let parallel = options.threads > 1 && batch.count > 1
        DispatchQueue.global().async {
            let work = { @Sendable (i: Int) in
                let file = batch[i]
                job.slots[i] = Result { () throws(TSDBError) -> ParsedDayFile in
                    let mapped = try MappedFile(path: file.absolutePath)
                    mapped.adviseSequential()
                    return try mapped.withBytes { (b) throws(TSDBError) in try DayFileParser.parse(b, path: file.absolutePath) }
                }
            }
            if parallel {
                DispatchQueue.concurrentPerform(iterations: batch.count, execute: work)
            } else {
                for i in 0..<batch.count { work(i) }
            }
            job.done.signal()
        }
        return job
    }

    /// Moves a file's samples into the per-(type, month) buffers, re-numbering its strings.
    private func merge(_ parsed: ParsedDayFile) {
        var remap = [Int32](repeating: 0, count: parsed.strings.count)
        for id in 0..<parsed.strings.count {
            remap[id] = parsed.strings.withBytes(Int32(id)) { strings.intern($0) }
        }
        @inline(__always) func map(_ id: Int32) -> Int32 { id >= 0 ? remap[Int(id)] : id }
        var monthStart = Int64.max, monthEnd = Int64.min, monthIndex: Int32 = 0
        // Consecutive samples mostly share a (type, month): append to a local run and hand it
        // over when the key changes, instead of hashing the key for every sample.
        var runKey = MonthKey(type: -1, month: 0)
        var run: [PackedSample] = []
        func handOver() {
            guard !run.isEmpty else { return }
            if written[runKey] != nil { late[runKey, default: []] += run } else { pending[runKey, default: []] += run }
            run.removeAll(keepingCapacity: true)
        }
        defer { handOver() }
        for var s in parsed.samples {
            s.type = map(s.type)
            s.unit = map(s.unit)
            s.source = map(s.source)
            s.device = map(s.device)
            s.metadata = map(s.metadata)
            if s.valueTag == ValueTag.numberText { s.mantissa = Int64(remap[Int(s.mantissa)]) }
            if s.start < monthStart || s.start >= monthEnd {
                (monthIndex, monthStart, monthEnd) = Self.month(of: s.start)
            }
            let key = MonthKey(type: s.type, month: monthIndex)
            if key != runKey {
                handOver()
                runKey = key
            }
            run.append(s)
        }
    }

    /// The UTC calendar month of an instant: its index and bounds in µs.
    static func month(of micros: Int64) -> (index: Int32, start: Int64, end: Int64) {
        let (day, _) = ISO8601.floorDivide(micros, ISO8601.microsPerDay)
        let (y, m, _) = ISO8601.civil(day)
        let start = ISO8601.days(year: y, month: m, day: 1) * ISO8601.microsPerDay
        let end = ISO8601.days(year: m == 12 ? y + 1 : y, month: m == 12 ? 1 : m + 1, day: 1) * ISO8601.microsPerDay
        return (Int32(y * 12 + m - 1), start, end)
    }

    /// Writes every pending (type, month) whose month ends before day `day`.
    private func flush(before day: Int64) throws(TSDBError) {
        for key in pending.keys.sorted() {
            let (y, m) = (Int(key.month) / 12, Int(key.month) % 12 + 1)
            let nextMonthDay = ISO8601.days(year: m == 12 ? y + 1 : y, month: m == 12 ? 1 : m + 1, day: 1)
            guard day == .max || nextMonthDay <= day else { continue }
            var samples = pending.removeValue(forKey: key)!
            try writeSegment(key, &samples)
        }
    }

    private func writeSegment(_ key: MonthKey, _ samples: inout [PackedSample]) throws(TSDBError) {
        Self.sortAndDeduplicate(&samples)
        let (y, m) = (Int(key.month) / 12, Int(key.month) % 12 + 1)
        let type = strings.string(key.type)
        var writer = SegmentWriter()
        writer.blockSamples = options.blockSamples
        writer.codec = options.codec
        writer.zstdLevel = options.zstdLevel
        let bytes = samples.withUnsafeBufferPointer { writer.encode(type: type, year: y, month: m, samples: $0, strings: strings) }
        let relative = StoreLayout.segmentRelativePath(type: type, year: y, month: m, generation: generation)
        let path = layout.storeDirectory + "/" + relative
        let directory = FileSystem.parentDirectory(path)
        try FileSystem.makeDirectories(directory)
        // fsynced in the background: nothing names this generation's files until the manifest
        // is published, and run() waits for every fsync before that.
        try FileSystem.writeAtomically(bytes, to: path, syncFile: false, syncDirectory: false)
        syncer.sync(path)
        directoriesToSync.insert(directory)
        written[key] = Manifest.SegmentEntry(type: type, year: y, month: m, path: relative, fileSize: bytes.count,
                                            fileCRC: CRC32C.checksum(bytes), sampleCount: samples.count,
                                            firstStart: samples.first!.start, lastStart: samples.last!.start,
                                            maxEnd: samples.reduce(Int64.min) { max($0, $1.end) })
    }

    /// Sorts by start, then by every other field (so output does not depend on input order),
    /// and drops exact duplicates (a sample present in two day files is stored once).
    static func sortAndDeduplicate(_ samples: inout [PackedSample]) {
        samples.sort { a, b in
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
        var out = 0
        for i in samples.indices {
            if out > 0 && samples[out - 1].sameSample(as: samples[i]) { continue }
            samples[out] = samples[i]
            out += 1
        }
        samples.removeSubrange(out...)
    }

    /// Samples that arrived after their month was written (a day file far from its samples'
    /// dates): read the written segment back, add them, and write it again.
    private func rewriteLateMonths() throws(TSDBError) {
        for key in late.keys.sorted() {
            guard let entry = written[key] else { continue }
            let reader = try SegmentReader(path: layout.storeDirectory + "/" + entry.path)
            var samples = late[key]!
            let block = DecodedBlock()
            for b in 0..<reader.blockCount {
                try reader.decode(block: b, into: block)
                for i in 0..<block.count { samples.append(PackedSample(reader.sample(i, of: block), strings: &strings)) }
            }
            written[key] = nil
            try writeSegment(key, &samples)
        }
    }

    /// Deletes segment files (and stale temporaries) that the published manifest does not name.
    private func removeUnreferencedFiles(_ manifest: Manifest) {
        let keep = Set(manifest.segments.map { layout.storeDirectory + "/" + $0.path })
        guard let typeDirs = try? FileSystem.list(layout.segmentsDirectory) else { return }
        for dir in typeDirs where dir.isDirectory {
            let dirPath = layout.segmentsDirectory + "/" + dir.name
            for f in (try? FileSystem.list(dirPath)) ?? [] {
                let path = dirPath + "/" + f.name
                if !keep.contains(path) { FileSystem.remove(path) }
            }
            FileSystem.removeDirectoryIfEmpty(dirPath)
        }
        FileSystem.remove(layout.manifestPath + ".tmp")
    }
}

/// One batch being parsed: each worker writes only its own slot, and the reader waits for
/// `done` before reading any, so the slots need no lock.
private final class ParseJob: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<Result<ParsedDayFile, TSDBError>?>
    let done = DispatchSemaphore(value: 0)

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func wait() -> [Result<ParsedDayFile, TSDBError>] {
        done.wait()
        return slots.map { $0! }
    }
}

/// fsyncs files on a serial background queue; ``finish()`` waits for all and reports the first failure.
final class BackgroundSyncer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "tsdb.fsync")
    private var failure: TSDBError?

    func sync(_ path: String) {
        queue.async {
            guard self.failure == nil else { return }
            do throws(TSDBError) { try FileSystem.syncFile(path) } catch { self.failure = error }
        }
    }

    func finish() throws(TSDBError) {
        let failure = queue.sync { self.failure }
        if let failure { throw failure }
    }
}

extension PackedSample {
    /// Packs a decoded sample, interning its strings.
    init(_ s: Sample, strings: inout ByteInterner) {
        func id(_ t: OptionalText) -> Int32 {
            switch t {
            case .absent: return PackedSample.absent
            case .null: return PackedSample.null
            case .text(let v): return strings.intern(v)
            }
        }
        var tag = ValueTag.absent
        var mantissa: Int64 = 0
        switch s.value {
        case .absent: tag = ValueTag.absent
        case .null: tag = ValueTag.null
        case .decimal(let d): tag = ValueTag.decimalBase + d.scale; mantissa = d.mantissa
        case .numberText(let t): tag = ValueTag.numberText; mantissa = Int64(strings.intern(t))
        }
        self.init(start: s.start.microseconds, end: s.end.microseconds, mantissa: mantissa,
                  forms: TimeForm.pair(s.start.form, s.end.form), type: strings.intern(s.type), unit: id(s.unit),
                  source: id(s.source), device: id(s.device), metadata: id(s.metadata), valueTag: tag)
    }
}
