/// Elements appended to room made for them at the end of an array: no uniqueness or capacity
/// check of the array per element. Sums over intervals append a piece or two per sample; through
/// `Array.append` each was a call that checked the array was not shared (the year's daily steps:
/// ~43,000 calls). Not copyable, so it cannot outlive the call that lends it.
struct Room<Element>: ~Copyable {
    private let base: UnsafeMutablePointer<Element>
    private let capacity: Int
    private(set) var count = 0

    private init(_ base: UnsafeMutablePointer<Element>, capacity: Int) {
        (self.base, self.capacity) = (base, capacity)
    }

    /// Calls `body` with room for `most` elements after `array`'s, and keeps those it appended.
    static func append(to array: inout [Element], atMost most: Int, _ body: (inout Room) -> Void) {
        array.append(addingCapacity: most) { span in
            span.withUnsafeMutableBufferPointer { room, initialized in
                var appended = Room(room.baseAddress! + initialized, capacity: room.count - initialized)
                body(&appended)
                initialized += appended.count
            }
        }
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        precondition(count < capacity, "more elements than the room made for them")
        (base + count).initialize(to: element)
        count += 1
    }

    /// The element appended last (there must be one).
    var last: Element {
        @inline(__always) get { base[count - 1] }
        @inline(__always) set { base[count - 1] = newValue }
    }
}
