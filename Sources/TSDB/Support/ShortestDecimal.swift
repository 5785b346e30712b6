/// The shortest decimal that reads back as a given double, closest to it among the shortest and
/// the even one of two equally close (what `Double.description` writes), by Giulietti's Schubfach
/// method ("The Schubfach way to render doubles", 2020), for magnitudes from 2^-10 to 2^53.
///
/// Schubfach scales the double's rounding interval by a power of ten to integers a few units
/// apart and picks from the one or two decimals of the right length that the interval holds; it
/// needs `10^e × 2^r` for one `e`, which for the magnitudes here (`e` ≤ 19) is a `UInt64` power of
/// ten shifted to the top of 128 bits: exact, so no table of rounded powers. The stdlib's own
/// search cost ~600 instructions a number; this ~100-140 (callgrind).
package enum ShortestDecimal {
    /// `(digits, exponent)` with `|v| = digits × 10^exponent`, `digits` without trailing zeros,
    /// for 2^-10 ≤ |v| < 2^53 (the stdlib writes all of them without an exponent); nil for any
    /// other `v`, NaN included.
    package static func digits(of v: Double) -> (digits: UInt64, exponent: Int)? {
        let magnitude = v.magnitude
        guard magnitude >= 0x1p-10, magnitude < 0x1p53 else { return nil }
        let c = magnitude.significandBitPattern | 1 << 52
        let q = Int(magnitude.exponentBitPattern) - 1075
        var (digits, exponent) = schubfach(c: c, q: q)
        while digits % 10_000 == 0 {
            digits /= 10_000
            exponent += 4
        }
        while digits % 10 == 0 {
            digits /= 10
            exponent += 1
        }
        return (digits, exponent)
    }

    /// `10^e` for `e` in 0...19 (a literal, so the compiler lays it out rather than a first use).
    package static let powersOfTen: [UInt64] = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
        10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000,
        1_000_000_000_000_000, 10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000,
        10_000_000_000_000_000_000,
    ]

    /// The decimal `(s, k)`, `s × 10^k`, for the double `c × 2^q` (`c` with its hidden bit,
    /// `q` in -62...0): Figure 4 of the paper with the changes of its Figure 6.
    ///
    /// The interval is taken as wide below `v` as above. At a binade's start it is half as wide
    /// below, but here that start is a power of two from 2^-10 to 2^52, a decimal of at most 16
    /// digits whose shorter neighbours lie far outside either interval: the answer is the same.
    static func schubfach(c: UInt64, q: Int) -> (UInt64, Int) {
        // The interval's ends and the value, times 4 so they are integers.
        let cb = c << 2
        let cbl = cb - 2
        let cbr = cb + 2
        // k = ⌊log10(2^q)⌋; h puts the scaled values' binary point where the product below drops
        // 128 bits.
        let k = (q * 1_262_611) >> 22
        let h = q + ((-k * 1_741_647) >> 19) + 1
        let power = powersOfTen[-k]
        let g = power << power.leadingZeroBitCount
        // h is 1...4 (the paper's §9), so the shifted values stay below 2^59.
        let vbl = roundToOdd(g, cbl &<< h)
        let vb = roundToOdd(g, cb &<< h)
        let vbr = roundToOdd(g, cbr &<< h)
        // An even significand's interval includes its ends (reading rounds ties to even).
        let even = c & 1 == 0
        let lower = vbl + (even ? 0 : 1)
        let upper = vbr - (even ? 0 : 1)
        let s = vb >> 2
        if s >= 10 {
            // One digit fewer: at most one of the two decimals around v lies inside.
            let shorter = s / 10
            let downInside = lower <= 40 * shorter
            let upInside = 40 * shorter + 40 <= upper
            if downInside != upInside { return (shorter + (upInside ? 1 : 0), k + 1) }
        }
        let downInside = lower <= 4 * s
        let upInside = 4 * s + 4 <= upper
        if downInside != upInside { return (s + (upInside ? 1 : 0), k) }
        // Both inside: the closer, the even one on a tie.
        let middle = 4 * s + 2
        let up = vb > middle || (vb == middle && s & 1 != 0)
        return (s + (up ? 1 : 0), k)
    }

    /// `⌊g × 2^64 × cp / 2^128⌋` with its lowest bit set when the dropped bits are not
    /// (nearly) zero: the scaled value rounded to odd, which keeps "exactly on a decimal" and
    /// "just past it" apart. `g` here fills 64 bits; its lower 64 of the paper's 128 are 0.
    @inline(__always)
    static func roundToOdd(_ g: UInt64, _ cp: UInt64) -> UInt64 {
        let (high, low) = g.multipliedFullWidth(by: cp)
        return high | (low > 1 ? 1 : 0)
    }
}
