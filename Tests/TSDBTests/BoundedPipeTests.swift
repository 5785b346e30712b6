import Foundation
import Testing

@testable import TSDB

/// The pipe between an export's reading thread and its consumer (scanned XML, inflated chunks).
@Suite struct BoundedPipeTests {
    /// A consumer that gives up while the producer is ahead (the pipe full, the producer waiting
    /// for room) stops the producer, and the pipe is then released cleanly. libdispatch stops the
    /// process when a semaphore is released below the value it was made with: the pipe's room
    /// was made as a semaphore of `capacity`, and a cancelled pipe was released with less (a crash
    /// of ExportReaderTests in CI when the reader got ahead of a consumer that threw).
    @Test func aConsumerGivingUpWhileTheProducerIsAheadStopsItCleanly() throws {
        let stopped = DispatchSemaphore(value: 0)
        let put = Locked(0)
        do {
            let pipe = BoundedPipe<Int>(capacity: 4)
            DispatchQueue.global().async {
                defer { stopped.signal() }
                var i = 0
                while (try? pipe.put(i)) != nil {
                    i += 1
                    put.withLock { $0 = i }
                }
            }
            #expect(try pipe.take() == 0)
            // Until four wait behind the one taken: the producer then waits for room.
            while put.withLock({ $0 }) < 5 { usleep(200) }
            pipe.cancel()
            stopped.wait()
        }
        // Its wait for room ended by the cancel, the producer put nothing more.
        #expect(put.withLock { $0 } == 5)
    }

    /// Items come out in order, then the end, or the producer's failure after its items.
    @Test func itemsComeOutInOrderThenTheEndOrTheFailure() throws {
        for failure in [nil, TSDBError.invalidInput("broken")] {
            let pipe = BoundedPipe<Int>(capacity: 2)
            DispatchQueue.global().async {
                for i in 0..<100 { try? pipe.put(i) }
                pipe.finish(failure)
            }
            var taken: [Int] = []
            do {
                while let i = try pipe.take() { taken.append(i) }
                #expect(failure == nil)
            } catch {
                #expect(error.message == "broken")
            }
            #expect(taken == Array(0..<100))
        }
    }
}
