import CTSDBThreads
import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cores online, counted once: the default of every `threads` setting (compaction,
/// aggregates, Parquet export).
package enum Cores {
    package static let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}

/// A second thread for work shared with the calling thread, started on another core.
///
/// Measured here: Linux put a new thread (or a dispatch worker) on its busy parent's core, where
/// it waited up to a scheduler tick, 4 ms, as long as five years of hourly heart rate take on two
/// cores; started on the idle core it ran within 0.1 ms (CTSDBThreads). A thread started before
/// the work was known, to wait asleep for it, was tried and removed: the year's daily heart rate
/// as a whole process took 2.4–2.9 ms in Europe/Paris days on one thread against 4.1–4.5 ms with
/// one started early and used (`perf stat -r 100`, interleaved); a query now takes a second thread
/// only when it pays (``Store/parallelPieces(_:options:walker:)``). A thread whose work is done
/// waits for the next rather than exiting, so a compaction that hands out five pieces of work
/// (listing, encoding, three fsyncs) starts two threads instead of five (`perf trace`): one new day
/// into a year took 6.3 instead of 7.1 ms of CPU and 5.95 instead of 6.29 ms (medians of 15 with the
/// runner's settling, `Benchmarks/compare/ab.py --settle`; on tmpfs 4.9 instead of 5.1 ms of CPU,
/// 4.10 instead of 4.16 ms, medians of 201), and a long-lived server starts its second threads once.
enum SecondThread {
    /// Runs `work` on a thread of its own on another core, one whose earlier work is done or a new one
    /// (a dispatch worker if no thread can be made).
    static func run(_ work: @escaping @Sendable () -> Void) {
        if !launch(work) { DispatchQueue.global().async(execute: work) }
    }

    #if TSDB_TESTING
        /// Threads waiting for work (for tests).
        static var waitingThreads: Int { Int(ctsdb_threads_parked()) }
    #endif

    /// Starts `body` on a thread of its own on another core; false if none could be made.
    private static func launch(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Body(body))
        let made = ctsdb_thread_start_elsewhere(
            { raw in
                Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, box.toOpaque())
        if made != 0 { box.release() }
        return made == 0
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
