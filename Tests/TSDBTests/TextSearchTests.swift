import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// ``Swift/String/containsText(_:)`` answers as the standard library's `contains(_:)`, which the
/// engine used, does: on the ASCII path and off it. That search is by characters; this file
/// imports Foundation, whose `contains(_:)` is another (it finds `"a\r"` in `"a\r\n"` and no
/// empty text), so the reference is written out here.
@Suite struct TextSearchTests {
    /// A search by characters, as the standard library's.
    static func reference(_ haystack: String, _ needle: String) -> Bool {
        let (h, n) = (Array(haystack), Array(needle))
        guard !n.isEmpty else { return true }
        guard n.count <= h.count else { return false }
        return (0...(h.count - n.count)).contains { h[$0..<($0 + n.count)].elementsEqual(n) }
    }

    @Test func randomTextsAgreeWithTheStandardLibrarysSearch() {
        var rng = SplitMix64(seed: 7)
        // Few letters, so that patterns often occur; a carriage return, line feed and accents
        // (precomposed and combining) to take the other path.
        let pieces = ["a", "b", "c", "watch", "iphone", " ", "\r", "\n", "\r\n", "é", "e\u{301}", "ß"]
        func text(_ n: UInt64) -> String { (0..<rng.next() % n).map { _ in pieces[Int(rng.next() % 12)] }.joined() }
        for _ in 0..<5_000 {
            let (haystack, needle) = (text(12), text(4))
            #expect(
                haystack.containsText(needle) == Self.reference(haystack, needle),
                "\(haystack.debugDescription) / \(needle.debugDescription)")
        }
    }

    @Test func edges() {
        #expect("apple watch".containsText("watch"))
        #expect("apple watch".containsText("apple watch"))
        #expect(!"watch".containsText("apple watch"))
        #expect("watch".containsText(""))
        #expect(!"".containsText("w"))
        #expect(!"a\r\nb".containsText("\r"))  // "\r\n" is one character
        #expect("cafe\u{301}".containsText("caf\u{e9}"))  // canonically equivalent
    }
}
