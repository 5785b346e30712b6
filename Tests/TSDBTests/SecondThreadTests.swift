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
}
