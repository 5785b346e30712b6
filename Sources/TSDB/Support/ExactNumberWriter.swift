/// Writes a number's exact text: a whole number below 10^15 digit by digit, any other value as
/// its shortest text that reads back as the same double (as `Double.write(to:)` writes it).
///
/// An instance remembers the digits after the point of the fractions it has written. A long
/// aggregate writes millions of means, and a mean of whole numbers (heart rate) is a whole number
/// plus one of a few thousand fractions (…/3, …/47): the stdlib's shortest-digit search was 12%
/// of five years of 15-minute buckets, a remembered fraction is a table lookup. A fraction not
/// remembered costs what it did (the stdlib writes it; its digits are copied from the row), so
/// means that rarely repeat (hours of ~200 samples) lose nothing.
///
/// Why remembering is exact: for 1 ≤ |v| < 2^52 with a fraction, every text the shortest-digit
/// rule weighs has v's integer digits (v lies at least one spacing of doubles away from a whole
/// number, the texts within half a spacing of v), so the digits after the point follow from the
/// fraction alone and the spacing: from the bits of v below its integer part and its exponent,
/// the key here. `ExactNumberWriterTests` checks this against the stdlib's text across binades.
public struct ExactNumberWriter: Sendable {
    /// Sets of two entries of three words: key and length, then up to 16 bytes of text (point
    /// and digits). A key is never 0: it has fraction bits.
    private var table: [UInt64] = []
    /// The table's sets: few at first, four times as many (what it held moved over) each time it has
    /// missed twice as often as it has sets, up to `mostSets`. A year of days needs a few hundred,
    /// five years of quarter hours thousands; zeroing the largest table at once was 69 page faults
    /// of a one-year query's 400.
    private var sets = 0
    private var misses = 0
    private static let firstSets = 64
    private static let mostSets = 2048
    private static let keyBits: UInt64 = (1 << 58) - 1

    package init() {}

    /// Writes `v` without remembering anything (a single number).
    package static func write(_ v: Double, to out: inout RowBytes) {
        if v.magnitude < 1e15 && Double(Int64(v)) == v { out.write(Int64(v)) } else { v.write(to: &out) }
    }

    /// Inlinable (so public) for its common case, a count or a heart rate: a whole number below 1,000.
    @inlinable @inline(__always)
    public mutating func write(_ v: Double, to out: inout RowBytes) {
        if v >= 0 && v < 1000 && Double(Int64(v)) == v { return out.write(Int64(v)) }
        writeAny(v, to: &out)
    }

    @usableFromInline
    mutating func writeAny(_ v: Double, to out: inout RowBytes) {
        let magnitude = v.magnitude
        // NaN fails both comparisons.
        guard magnitude >= 1, magnitude < 1e15 else { return Self.write(v, to: &out) }
        let whole = Int64(magnitude)
        guard Double(whole) != magnitude else { return out.write(Int64(v)) }
        let exponent = UInt64(magnitude.exponent)
        let key = exponent << 52 | magnitude.significandBitPattern & ((1 << (52 - exponent)) - 1)
        if misses >= 2 * sets && sets < Self.mostSets { grow() }
        var entry = set(of: key) * 6
        if table[entry] & Self.keyBits != key {
            guard table[entry + 3] & Self.keyBits == key else {
                // Not remembered: the stdlib writes it, and its digits are kept from the row.
                misses += 1
                let mark = out.count
                Self.write(v, to: &out)
                out.withBytes(since: mark) { remember($0, whole: whole, key: key, at: entry) }
                return
            }
            entry += 3
        }
        if v < 0 { out.byte(UInt8(ascii: "-")) }
        out.write(whole)
        out.write(words: (table[entry + 1], table[entry + 2]), count: Int(table[entry] >> 58))
    }

    @inline(__always)
    private func set(of key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 53) & (sets - 1)
    }

    /// Four times the sets, with the fractions remembered so far in theirs: forgotten, they were
    /// missed again (the year's hourly means: 2,297 misses of 8,353, ~850 instructions each).
    private mutating func grow() {
        let held = table
        sets = sets == 0 ? Self.firstSets : Swift.min(sets * 4, Self.mostSets)
        table = Array(repeating: 0, count: sets * 6)
        misses = 0
        // Second entries first, so a set's first (the more recent) stays first where two meet.
        for way in [3, 0] {
            for entry in stride(from: way, to: held.count, by: 6) {
                let key = held[entry] & Self.keyBits
                guard key != 0 else { continue }
                let first = set(of: key) * 6
                for k in 0..<3 { table[first + 3 + k] = table[first + k] }
                for k in 0..<3 { table[first + k] = held[entry + k] }
            }
        }
    }

    /// How many fractions the table holds.
    var rememberedCount: Int { stride(from: 0, to: table.count, by: 3).count { table[$0] & Self.keyBits != 0 } }

    /// Puts the point and digits after it of `text` at `entry` (the set's first), moving the
    /// set's first entry to second, when `text` is a sign, `whole`, a point and at most 15 digits
    /// (values below 10 may have 16).
    private mutating func remember(_ text: UnsafeBufferPointer<UInt8>, whole: Int64, key: UInt64, at entry: Int) {
        var i = text.first == UInt8(ascii: "-") ? 1 : 0
        var parsed: Int64 = 0
        while i < text.count, text[i] >= UInt8(ascii: "0"), text[i] <= UInt8(ascii: "9"), parsed < 1 << 53 {
            parsed = parsed * 10 + Int64(text[i] - UInt8(ascii: "0"))
            i += 1
        }
        let fraction = UnsafeBufferPointer(rebasing: text[i...])
        guard parsed == whole, (2...16).contains(fraction.count), fraction.first == UInt8(ascii: "."),
            fraction.dropFirst().allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(fraction)) }
        for k in 0..<3 { table[entry + 3 + k] = table[entry + k] }
        table[entry] = key | UInt64(fraction.count) << 58
        (table[entry + 1], table[entry + 2]) = words
    }
}
