/// Writes a number's exact text: a whole number below 10^15 digit by digit, any other value as
/// its shortest text that reads back as the same double (as `Double.write(to:)` writes it).
///
/// An instance remembers the digits after the point of the fractions it has written. A long
/// aggregate writes millions of means, and a mean of whole numbers (heart rate) is a whole number
/// plus one of a few thousand fractions (…/3, …/47): the stdlib's shortest-digit search was 12%
/// of five years of 15-minute buckets, a remembered fraction is a table lookup. A fraction not
/// remembered is written by its shortest digits as `ShortestDecimal` finds them (and its point and
/// digits are then copied from the row): means that rarely repeat (hours of ~200 samples) cost
/// that search and one copy.
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
    /// The table's sets: none for the first `numbersBeforeTable` numbers, then few, four times as
    /// many (what it held moved over) each time it has missed twice as often as it has sets, up to
    /// `mostSets`. Five years of days need a few hundred, of quarter hours thousands; zeroing the
    /// largest table at once was 69 page faults of a one-year query's 400.
    private var sets = 0
    private var misses = 0
    /// A short output (the year's 365 daily means) would spend more on making and filling a
    /// table (~370 instructions a number) than it saves.
    private static let numbersBeforeTable = 512
    private static let firstSets = 64
    private static let mostSets = 2048
    private static let keyBits: UInt64 = (1 << 58) - 1

    package init() {}

    /// Writes `v` without remembering anything (a single number).
    package static func write(_ v: Double, to out: inout RowBytes) {
        // NaN fails the comparison.
        if v.magnitude < 1e15 && Double(Int64(v)) == v { return out.write(Int64(v)) }
        if writeShortest(v, to: &out) == nil { v.write(to: &out) }
    }

    /// Writes `v`, not a whole number, with 2^-10 ≤ |v| < 2^53, by the shortest digits
    /// `ShortestDecimal` finds (~400 instructions with their writing; the stdlib's search cost ~850),
    /// and returns how many bytes the point and the digits after it took; writes nothing and
    /// returns nil for any other `v`.
    static func writeShortest(_ v: Double, to out: inout RowBytes) -> Int? {
        guard let (digits, exponent) = ShortestDecimal.digits(of: v), exponent < 0 else { return nil }
        // The shortest decimal of a double that is not whole has its whole part (no decimal
        // within half a spacing of it is whole), so only the digits after the point are new.
        let whole = Int64(v.magnitude)
        if v < 0 { out.byte(UInt8(ascii: "-")) }
        out.write(whole)
        out.byte(UInt8(ascii: "."))
        let scale = -exponent
        let fraction = whole == 0 ? digits : digits - UInt64(whole) * ShortestDecimal.powersOfTen[scale]
        out.write(fraction: fraction, digits: scale)
        return scale + 1
    }

    /// Inlinable (so public) for its common case, a count or a heart rate: a whole number below 1,000.
    @inlinable @inline(__always)
    public mutating func write(_ v: Double, to out: inout RowBytes) {
        if v >= 0 && v < 1000 && Double(Int(v)) == v { return out.writeBelowThousand(Int(v)) }
        writeAny(v, to: &out)
    }

    @usableFromInline
    mutating func writeAny(_ v: Double, to out: inout RowBytes) {
        let magnitude = v.magnitude
        // NaN fails both comparisons.
        guard magnitude >= 1, magnitude < 1e15 else { return Self.write(v, to: &out) }
        let whole = Int64(magnitude)
        guard Double(whole) != magnitude else { return out.write(Int64(v)) }
        // From the bits: 1 ≤ magnitude < 2^50 is a normal number (`exponent` was a call, ~12 a number).
        let exponent = UInt64(magnitude.exponentBitPattern) &- 1023
        let key = exponent << 52 | magnitude.significandBitPattern & ((1 << (52 - exponent)) - 1)
        if misses >= (sets == 0 ? Self.numbersBeforeTable : 2 * sets) && sets < Self.mostSets { grow() }
        guard sets > 0 else {
            misses += 1
            return Self.write(v, to: &out)
        }
        var entry = set(of: key) * 6
        if table[entry] & Self.keyBits != key {
            guard table[entry + 3] & Self.keyBits == key else {
                // Not remembered: written by its shortest digits, which are then kept from the row.
                misses += 1
                guard let tail = Self.writeShortest(v, to: &out) else { return v.write(to: &out) }
                if tail <= 16 { out.withBytes(since: out.count - tail) { remember($0, key: key, at: entry) } }
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

    /// Puts `fraction`, a point and the digits after it (at most 16 bytes), at `entry` (the set's
    /// first), moving the set's first entry to second.
    private mutating func remember(_ fraction: UnsafeBufferPointer<UInt8>, key: UInt64, at entry: Int) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(fraction)) }
        for k in 0..<3 { table[entry + 3 + k] = table[entry + k] }
        table[entry] = key | UInt64(fraction.count) << 58
        (table[entry + 1], table[entry + 2]) = words
    }
}
