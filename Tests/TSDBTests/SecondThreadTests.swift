import Foundation
import Testing

@testable import TSDB

/// The second thread of long aggregates: it runs the work it is given, on a thread of its own
/// that may use every core the process may.
@Suite struct SecondThreadTests {
    /// Runs `work` through ``SecondThread/run(_:)`` and waits for it: the thread it ran on, and
    /// what it saw.
    func runAndWait<T: Sendable>(_ work: @escaping @Sendable () -> T) -> (thread: pthread_t, value: T) {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<(pthread_t, T)?>(nil)
        SecondThread.run {
            let value = work()
            result.withLock { $0 = (pthread_self(), value) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    @Test func workRunsOnAnotherThread() {
        for round in 0..<20 {
            let (thread, value) = runAndWait { round * 2 }
            #expect(value == round * 2)
            #expect(pthread_equal(thread, pthread_self()) == 0)
        }
    }

    /// A thread is started away from its parent's core, and then left free to move: its cores are
    /// all of the process's.
    @Test func theThreadMayUseEveryCoreOfTheProcess() throws {
        #if os(Linux)
            @Sendable func allowed() -> String {
                let status = (try? String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)) ?? ""
                return status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }.map(String.init) ?? ""
            }
            let process = allowed()
            #expect(!process.isEmpty)
            for _ in 0..<10 { #expect(runAndWait { allowed() }.value == process) }
        #endif
    }

    /// A thread whose work is done waits for the next: work given once a thread waits runs on a
    /// thread that already existed (one listed under /proc/self/task before it was given), where
    /// a new thread's id would be new. Other suites take waiting threads too, so a few tries.
    @Test func finishedThreadsRunLaterWork() throws {
        #if os(Linux)
            func threadIDs() -> Set<Int32> {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                return Set(names.compactMap { Int32($0) })
            }
            /// The calling thread's id: /proc/thread-self links to `<pid>/task/<tid>`.
            @Sendable func threadID() -> Int32 {
                let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                return link.split(separator: "/").last.flatMap { Int32($0) } ?? -1
            }
            var reused = false
            for _ in 0..<5 where !reused {
                _ = runAndWait { threadID() }
                let deadline = Date().addingTimeInterval(5)
                while SecondThread.waitingThreads == 0 && Date() < deadline { usleep(1000) }
                let before = threadIDs()
                reused = before.contains(runAndWait { threadID() }.value)
            }
            #expect(reused)
        #endif
    }

    /// Work given while other work runs gets a thread of its own: two pieces that wait for each
    /// other both finish.
    @Test func concurrentWorkRunsSideBySide() {
        for _ in 0..<10 {
            let (first, second, done) = (
                DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)
            )
            let met = Locked(0)
            SecondThread.run {
                first.signal()
                if second.wait(timeout: .now() + 5) == .success { met.withLock { $0 += 1 } }
                done.signal()
            }
            SecondThread.run {
                second.signal()
                if first.wait(timeout: .now() + 5) == .success { met.withLock { $0 += 1 } }
                done.signal()
            }
            done.wait()
            done.wait()
            #expect(met.withLock { $0 } == 2)
        }
    }
}
