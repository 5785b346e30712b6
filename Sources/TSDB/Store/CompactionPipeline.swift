import Dispatch

/// A few files being parsed at once (an incremental run's): each worker writes only its own slot,
/// and the caller reads them once `concurrentPerform` has returned, so the slots need no lock.
final class ParseJob: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<Result<ParsedDayFile, TSDBError>?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// The results, once every file is parsed.
    var results: [Result<ParsedDayFile, TSDBError>] { slots.map { $0! } }
}

/// Day files parsed ahead of their merge: each of `threads` workers takes the next file as it is
/// free, at most `ahead` files past the one the merging thread waits for, and the merging thread
/// takes the results in order. Parsed in batches, both workers waited at each batch's end for the
/// other's last file and for the merging thread to start the next batch (1.4-1.6 cores busy of 2 in
/// a rebuild of the year, `perf stat`). Each slot is written by the worker that took its file and
/// read once its semaphore is signalled, so the slots need no lock.
final class ParseStream: @unchecked Sendable {
    private let files: [RawFile]
    private let slots: UnsafeMutableBufferPointer<Result<ParsedDayFile, TSDBError>?>
    private let ready: [DispatchSemaphore]
    /// Files a worker may take before the merging thread has taken more results.
    private let room: DispatchSemaphore
    private let next = Locked(0)
    private let stopped = Locked(false)
    private let workers = DispatchGroup()
    private let threads: Int

    init(_ files: [RawFile], threads: Int, ahead: Int, options: CompactionOptions, buffers: Pool<ReadBuffer>) {
        self.files = files
        slots = .allocate(capacity: files.count)
        slots.initialize(repeating: nil)
        ready = files.map { _ in DispatchSemaphore(value: 0) }
        // Made empty and filled: libdispatch traps when a semaphore goes while below its initial
        // value, as this one may when a failed run leaves parsed files untaken.
        room = DispatchSemaphore(value: 0)
        for _ in 0..<max(1, ahead) { room.signal() }
        self.threads = max(1, threads)
        // Threads of their own, not libdispatch's: a worker waiting for room held a pool thread
        // that the segment jobs the merging thread waits for needed, until libdispatch added one
        // about a second later.
        for _ in 0..<min(self.threads, files.count) {
            workers.enter()
            SecondThread.run { [self] in
                work(options: options, buffers: buffers)
                workers.leave()
            }
        }
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    private func work(options: CompactionOptions, buffers: Pool<ReadBuffer>) {
        while true {
            room.wait()
            let i = next.withLock { i in
                defer { i += 1 }
                return i
            }
            guard i < files.count, !stopped.withLock({ $0 }) else {
                room.signal()
                return
            }
            slots[i] = Compactor.parse(files[i], alone: files.count == 1, options: options, buffers: buffers)
            ready[i].signal()
        }
    }

    #if TSDB_TESTING
        /// Files the workers have taken to parse (for tests).
        var claimed: Int { min(next.withLock { $0 }, files.count) }
    #endif

    /// File `i`'s result, once parsed; each is taken once, in order.
    func take(_ i: Int) -> Result<ParsedDayFile, TSDBError> {
        ready[i].wait()
        defer { room.signal() }
        return slots[i].take()!
    }

    /// Stops the workers after the files they are parsing, and waits for them.
    func stop() {
        stopped.withLock { $0 = true }
        for _ in 0..<threads { room.signal() }
        workers.wait()
    }
}

/// fsyncs files in the background, each on a thread of its own started on another core: the device
/// serves flushes side by side (20 new files of 12 KB: 3.5 ms one at a time, 1.3–1.4 ms eight at a
/// time; `Benchmarks/compare/fsync_batch.c`, when each segment was a file). A compaction syncs three
/// at once: its segments' file, their folder and the new manifest. They ran on libdispatch's queues
/// until its workers were seen starting on the busy core of the thread that queued them, the second
/// and third fsync 1 ms after the first (uprobes on one new day). One syncfs took 0.6 ms, but it
/// also waits for every other dirty file of the file system (a download in progress), so it is not
/// used. ``finish()`` waits for all and reports the first failure.
final class BackgroundSyncer: Sendable {
    private let group = DispatchGroup()
    private let failure = Locked<TSDBError?>(nil)

    /// Starts an fsync of the file, or with `directory` of the directory, at `path`.
    func sync(_ path: String, directory: Bool = false) {
        group.enter()
        SecondThread.run { [self] in
            defer { group.leave() }
            guard failure.withLock({ $0 == nil }) else { return }
            do throws(TSDBError) {
                if directory { try FileSystem.syncDirectory(path) } else { try FileSystem.syncFile(path) }
            } catch {
                failure.withLock { f in if f == nil { f = error } }
            }
        }
    }

    /// Starts `work` that cannot fail (removals), which ``finish()`` waits for with the syncs.
    func run(_ work: @escaping @Sendable () -> Void) {
        group.enter()
        SecondThread.run { [self] in
            defer { group.leave() }
            work()
        }
    }

    func finish() throws(TSDBError) {
        group.wait()
        if let failure = failure.withLock({ $0 }) { throw failure }
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
        self.init(
            s.start, s.end, s.value, type: strings.intern(s.type), unit: id(s.unit), source: id(s.source),
            device: id(s.device), metadata: id(s.metadata), strings: &strings)
    }

    /// A sample whose strings are already interned in `strings` (a number kept as text is interned here).
    init(
        _ start: Timestamp, _ end: Timestamp, _ value: SampleValue, type: Int32, unit: Int32, source: Int32,
        device: Int32, metadata: Int32, strings: inout ByteInterner
    ) {
        var tag = ValueTag.absent
        var mantissa: Int64 = 0
        switch value {
        case .absent: tag = ValueTag.absent
        case .null: tag = ValueTag.null
        case .decimal(let d):
            tag = ValueTag.decimalBase + d.scale
            mantissa = d.mantissa
        case .numberText(let t):
            tag = ValueTag.numberText
            mantissa = Int64(strings.intern(t))
        }
        self.init(
            start: start.microseconds, end: end.microseconds, mantissa: mantissa,
            forms: TimeForm.pair(start.form, end.form), type: type, unit: unit, source: source, device: device,
            metadata: metadata, valueTag: tag)
    }
}

/// Items handed from a producing thread to a consuming one, at most `capacity` waiting, so both
/// cores work while memory stays bounded: an export's chunks on their way to the compactor, and
/// its scanned XML on its way to the sample builder.
package final class BoundedPipe<Item: Sendable>: @unchecked Sendable {
    private struct State {
        var items: [Item] = []
        var finished = false
        var failure: TSDBError?
        var cancelled = false
    }
    private let state = Locked(State())
    /// Room left (``DispatchSemaphore/room(for:)``: a pipe cancelled with items waiting, or a
    /// producer waiting for room, releases it below its capacity).
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)

    package init(capacity: Int) { free = .room(for: capacity) }

    /// Producer: waits for room; throws when the consumer has given up.
    package func put(_ item: Item) throws(TSDBError) {
        free.wait()
        let cancelled = state.withLock { s in
            if !s.cancelled { s.items.append(item) }
            return s.cancelled
        }
        if cancelled { throw TSDBError.invalidInput("compaction stopped") }
        filled.signal()
    }

    /// Producer: no more items (`failure` if producing failed).
    package func finish(_ failure: TSDBError?) {
        state.withLock { s in
            s.finished = true
            s.failure = failure
        }
        filled.signal()
    }

    /// Consumer: the next item, or nil at the end; throws the producer's failure.
    package func take() throws(TSDBError) -> Item? {
        filled.wait()
        let next: Result<Item?, TSDBError> = state.withLock { s in
            if !s.items.isEmpty { return .success(s.items.removeFirst()) }
            return s.failure.map { .failure($0) } ?? .success(nil)
        }
        free.signal()
        return try next.get()
    }

    /// Consumer: stops the producer (it fails its next `put`).
    package func cancel() {
        state.withLock { $0.cancelled = true }
        free.signal()
    }
}

extension DispatchSemaphore {
    /// A semaphore counting `capacity` free places. Made at 0 and signalled `capacity` times, not
    /// made at `capacity`: libdispatch stops the process when a semaphore is released while its
    /// value is below the one it was made with, which a semaphore waited on when its user gives up is.
    static func room(for capacity: Int) -> DispatchSemaphore {
        let room = DispatchSemaphore(value: 0)
        for _ in 0..<capacity { room.signal() }
        return room
    }
}
