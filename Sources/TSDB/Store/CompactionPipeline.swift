import Dispatch

/// One batch being parsed: each worker writes only its own slot, and the reader waits for
/// `done` before reading any, so the slots need no lock.
final class ParseJob: @unchecked Sendable {
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
        return results
    }

    /// The results, once every file is parsed.
    var results: [Result<ParsedDayFile, TSDBError>] { slots.map { $0! } }
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
