#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a mutex (swift-nio's `NIOLockedValueBox` in miniature): the only way to the
/// value is `withLock`, so a `Sendable` claim on its owner is true.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// Things kept for reuse by whichever thread needs one next: buffers that were faulted in once, or
/// formatters that remember what they wrote. Each is used by one thread at a time (taken, then
/// given back); there are at most as many as were in use at once.
package final class Pool<Element>: Sendable {
    private let spare = Locked<[Element]>([])

    package init() {}

    /// A spare one, if any was given back.
    package func take() -> Element? { spare.withLock { $0.popLast() } }

    package func give(_ element: Element) { spare.withLock { $0.append(element) } }
}
