import Testing

@testable import TSDB

/// `SampleBuffers` hands back a type's largest spent array, emptied, and never another type's.
@Suite struct SampleBuffersTests {
    private func samples(_ count: Int) -> [PackedSample] {
        (0..<count).map {
            PackedSample(
                start: Int64($0), end: Int64($0), mantissa: 72, forms: 0, type: 1, unit: 0, source: 0, device: 0,
                metadata: 0, valueTag: 0)
        }
    }

    @Test func aTypesLargestSpentArrayComesBackEmptyWithItsRoom() {
        let buffers = SampleBuffers()
        #expect(buffers.take(for: 7).capacity == 0)
        var large = samples(5_000)
        let room = large.capacity
        var small = samples(10)
        var other = samples(300)
        buffers.give(&large, for: 7)
        buffers.give(&small, for: 7)
        buffers.give(&other, for: 8)
        let taken = buffers.take(for: 7)
        #expect(taken.isEmpty && taken.capacity == room)
        #expect(buffers.take(for: 7).capacity == 0, "taken once")
        let eight = buffers.take(for: 8)
        #expect(eight.isEmpty && eight.capacity >= 300 && eight.capacity < room)
    }

    /// Without a spent array, a type's month starts with the room asked for (a day's samples times
    /// a month's days), not grown from nothing; a spent array is given whatever is asked.
    @Test func aFreshArrayHasTheRoomExpected() {
        let buffers = SampleBuffers()
        let fresh = buffers.take(for: 3, expecting: 31 * 1_300)
        #expect(fresh.isEmpty && fresh.capacity >= 31 * 1_300)
        var spent = samples(100)
        let room = spent.capacity
        buffers.give(&spent, for: 3)
        #expect(buffers.take(for: 3, expecting: 50_000).capacity == room)
    }
}
