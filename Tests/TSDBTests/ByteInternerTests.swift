import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// The interner against a dictionary of first appearances, with and without room reserved.
@Suite struct ByteInternerTests {
    /// Random byte strings (the empty one among them) drawn from a pool, so most come again.
    static func texts(_ count: Int, _ random: inout SplitMix64) -> [[UInt8]] {
        let pool = (0..<(count / 3 + 1)).map { _ in
            (0..<Int(random.next() % 41)).map { _ in UInt8(random.next() % 256) }
        }
        return (0..<count).map { _ in pool[Int(random.next() % UInt64(pool.count))] }
    }

    /// Ids are first appearances, and each id's bytes are its text's, whatever room was reserved
    /// (none, too little, plenty) and whenever (at the start, midway).
    @Test(arguments: [0, 1, 7, 5_000]) func idsAreFirstAppearancesWhateverTheRoom(reserved: Int) {
        var random = SplitMix64(seed: UInt64(reserved) + 1)
        let texts = Self.texts(6_000, &random)
        var oracle: [[UInt8]: Int32] = [:]
        var interner = ByteInterner()
        interner.reserveCapacity(count: reserved, bytes: reserved * 20)
        var mismatches = 0
        for (k, text) in texts.enumerated() {
            if k == texts.count / 2 { interner.reserveCapacity(count: reserved * 4, bytes: reserved * 3) }
            let expected = oracle[text] ?? Int32(oracle.count)
            oracle[text] = expected
            if text.withUnsafeBytes({ interner.intern($0) }) != expected { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(interner.count == oracle.count)
        for (text, id) in oracle { #expect(interner.withBytes(id) { Array($0) } == text) }
    }

    /// A chunk made with room like the last one starts empty.
    @Test func roomLikeAnotherParseStartsEmpty() {
        var full = ParsedDayFile()
        let at = Timestamp(microseconds: 0)
        for k in 0..<100 {
            full.add(
                at, at, .null, type: full.intern("type \(k % 3)"), unit: full.intern("unit \(k)"), source: -1,
                device: -1,
                metadata: -1)
        }
        let next = ParsedDayFile(roomLike: full)
        #expect(next.sampleCount == 0 && next.strings.count == 0 && next.samples.capacity >= 100)
    }
}
