import CTSDBThreads
import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A second thread for work shared with the calling thread, started on another core and, when
/// asked early, before the work is known.
///
/// Measured here: Linux put a new thread (or a dispatch worker) on its busy parent's core, where
/// it waited up to a scheduler tick, 4 ms, as long as five years of hourly heart rate take on two
/// cores; started on the idle core it ran within 0.1 ms (CTSDBThreads). ``start(waitingAtMost:)``
/// starts one before the work is known, and it sleeps until its work comes (it does not spin:
/// with the other core busy, a spinning one made a year's daily query 20–50% slower than a single
/// thread). The command line no longer starts one early, and a query takes one only when it
/// pays (``Store/parallelPieces(_:options:walker:)``): the year's daily heart rate as a whole
/// process took 2.4–2.9 ms in Europe/Paris days on one thread against 4.1–4.5 ms with one started
/// early and used, and 3.5–4.2 against 3.9–4.5 ms in UTC days with the thread started when the
/// pieces were cut (`perf stat -r 100`, interleaved).
package final class StandbyThread: Sendable {
    private enum State {
        case waiting
        case given(@Sendable () -> Void)
        case stopped
    }

    private let state: Locked<State>
    /// Signalled when work is handed over.
    private let handed = DispatchSemaphore(value: 0)
    /// The thread ``start(waitingAtMost:)`` started, until ``run(_:)`` takes it.
    private static let early = Locked<StandbyThread?>(nil)

    private init(_ state: State) { self.state = Locked(state) }

    /// Starts a thread that waits (asleep) at most `seconds` for the next ``run(_:)``; nothing on a
    /// machine with one core.
    package static func start(waitingAtMost seconds: Double = 0.05) {
        guard sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1 else { return }
        let thread = StandbyThread(.waiting)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        guard launch({ thread.waitForWork(until: deadline) }) else { return }
        early.withLock { $0 = thread }
    }

    /// Runs `work` on another thread: the one started early if it is still waiting, else a new one
    /// (a dispatch worker if no thread can be made).
    package static func run(_ work: @escaping @Sendable () -> Void) {
        if let thread = early.withLock({ t in
            defer { t = nil }
            return t
        }), thread.hand(work) {
            return
        }
        if !launch(work) { DispatchQueue.global().async(execute: work) }
    }

    private func hand(_ work: @escaping @Sendable () -> Void) -> Bool {
        let given = state.withLock { s in
            guard case .waiting = s else { return false }
            s = .given(work)
            return true
        }
        if given { handed.signal() }
        return given
    }

    /// Sleeps until work is handed over or `deadline` passes, then runs the work, if any; work
    /// handed over after that is refused (``hand(_:)`` returns false).
    private func waitForWork(until deadline: UInt64) {
        _ = handed.wait(timeout: DispatchTime(uptimeNanoseconds: deadline))
        let work = state.withLock { s -> (@Sendable () -> Void)? in
            defer { s = .stopped }
            guard case .given(let work) = s else { return nil }
            return work
        }
        work?()
    }

    /// Starts a detached thread on another core running `body`; false if none could be made.
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
