extension String {
    /// Whether `other` occurs in this string, as `contains(_:)` finds it: byte by byte when both
    /// are ASCII without a carriage return (each byte then a whole character, so the answers
    /// agree), else by `contains(_:)`. The standard library's search costs tens of thousands of
    /// instructions a call (callgrind), and source filters and priorities ask it per source and
    /// device of every query.
    package func containsText(_ other: String) -> Bool {
        func plain(_ s: String) -> Bool { s.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "\r") } }
        guard plain(self) && plain(other) else { return contains(other) }
        let (text, pattern) = (Array(utf8), Array(other.utf8))
        guard pattern.count <= text.count else { return false }
        guard !pattern.isEmpty else { return true }
        return (0...(text.count - pattern.count)).contains { i in text[i..<(i + pattern.count)].elementsEqual(pattern) }
    }
}
