import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// `ExactNumberWriter` finds most numbers' shortest digits itself (`ShortestDecimal`), and
/// remembers the digits after the point of a fraction to reuse them for every number with the
/// same fraction bits and exponent: each text must be the one the stdlib writes (whole numbers
/// below 10^15 without a point).
@Suite struct ExactNumberWriterTests {
    /// What the stdlib writes (its `description` drops a NaN's sign, `write(to:)` keeps it).
    static func oracle(_ v: Double) -> String {
        if v.magnitude < 1e15 && v == v.rounded() { return String(Int64(v)) }
        var text = ""
        v.write(to: &text)
        return text
    }

    /// Writes `v` with `writer` into a row of exactly `room` bytes (default: plenty).
    static func text(_ v: Double, _ writer: inout ExactNumberWriter, room: Int = 64) -> String {
        var bytes: [UInt8] = []
        RowBytes.append(to: &bytes, capacity: room) { writer.write(v, to: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func single(_ v: Double) -> String {
        var bytes: [UInt8] = []
        RowBytes.append(to: &bytes, capacity: 64) { ExactNumberWriter.write(v, to: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A decimal text's significant digits: "0.00125" and "1.25e-03" give "125", "72.0" gives "72".
    static func digitsWithoutPoint(_ text: String) -> String {
        let mantissa = text.prefix { $0 != "e" }.filter { $0 != "." }
        let trimmed = mantissa.drop { $0 == "0" }
        return String(trimmed.reversed().drop { $0 == "0" }.reversed())
    }

    /// Whole numbers as `String` writes them, across the short path's edges (one, two and three
    /// digits) and the longest numbers, in rows with exactly their room.
    @Test func wholeNumbersAreTheirDecimalText() {
        var numbers: [Int64] = Array(-1_100...1_100) + [.min, .max, .min + 1, .max - 1]
        var p: Int64 = 1000
        for _ in 4...18 {
            p *= 10
            numbers += [p - 1, p, p + 1, -p]
        }
        for n in numbers {
            let expected = String(n)
            var bytes: [UInt8] = []
            RowBytes.append(to: &bytes, capacity: expected.utf8.count) { $0.write(n) }
            #expect(String(decoding: bytes, as: UTF8.self) == expected)
        }
    }

    /// Means of whole numbers: each fraction r/q comes back with many whole parts, in every binade
    /// from 1 to 2^49 and across the powers of ten inside a binade (99.x and 100.x share one).
    @Test func meansOfWholeNumbersAreTheStdlibsText() {
        var writer = ExactNumberWriter()
        var wholes: [Int64] = Array(1...130) + [999, 1000, 1023, 1024, 65_535, 99_999, 100_000, 1 << 40]
        wholes += [999_999_999_999_999 / 64, (1 << 49) - 1, 999_999_999_999_998]
        for q in Int64(2)...48 {
            for r in 1..<q {
                for n in wholes {
                    let (sum, overflow) = n.multipliedReportingOverflow(by: q)
                    guard !overflow else { continue }
                    for v in [Double(sum + r) / Double(q), -Double(sum + r) / Double(q)] {
                        let written = Self.text(v, &writer)
                        guard written == Self.oracle(v) else {
                            Issue.record("\(v): wrote \(written), expected \(Self.oracle(v))")
                            return
                        }
                    }
                }
            }
        }
    }

    /// Random bit patterns: one fraction's bits under many whole parts of the same exponent
    /// (the key the writer remembers), in every binade from 1 to 2^53.
    @Test func sameFractionBitsUnderOtherWholePartsAreTheStdlibsText() {
        var writer = ExactNumberWriter()
        var rng = SplitMix64(seed: 71)
        for exponent in UInt64(0)...52 {
            for _ in 0..<300 {
                let fractionBits = exponent == 52 ? 0 : UInt64.random(in: 0..<(1 << (52 - exponent)), using: &rng)
                for _ in 0..<8 {
                    let wholeBits = exponent == 0 ? 0 : UInt64.random(in: 0..<(1 << exponent), using: &rng)
                    let v = Double(
                        sign: Bool.random(using: &rng) ? .minus : .plus, exponentBitPattern: UInt(1023 + exponent),
                        significandBitPattern: wholeBits << (52 - exponent) | fractionBits)
                    #expect(Self.text(v, &writer) == Self.oracle(v), "\(v)")
                }
            }
        }
    }

    /// Edges: zero, below one, the powers of two and ten and their neighbours, 10^15, values
    /// whose fraction has 16 digits, and what is not a number.
    @Test func boundariesAreTheStdlibsText() {
        var values: [Double] = [0, -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        values += [0.5, 0.1, 1e-5, 1e15 - 0.5, 1e15, 1e15 + 1, 0x1p52, 0x1p52 + 1, 1e16, 1.0000000000000002]
        for k in -12...54 { values.append(Double(sign: .plus, exponent: k, significand: 1)) }
        var power = 1.0
        for _ in 0...16 {
            values.append(power)
            power *= 10
        }
        // A writer past its first numbers, so that it remembers what it writes.
        var writer = ExactNumberWriter()
        for n in 0..<600 { _ = Self.text(Double(n) + 0.5, &writer) }
        for v in values {
            for neighbour in [v, v.nextUp, v.nextDown, -v, -v.nextUp] {
                #expect(Self.text(neighbour, &writer) == Self.oracle(neighbour), "\(neighbour)")
                #expect(Self.text(neighbour, &writer) == Self.oracle(neighbour), "\(neighbour), remembered")
                #expect(Self.single(neighbour) == Self.oracle(neighbour), "\(neighbour), single")
            }
        }
    }

    /// More fractions than the table holds, twice over: evicted ones are found again, and the
    /// text is right whichever entry of a set serves it.
    @Test func evictedFractionsAreWrittenAgainCorrectly() {
        var writer = ExactNumberWriter()
        var rng = SplitMix64(seed: 5)
        let values = (0..<20_000).map { _ in Double(Int.random(in: 1_000...90_000, using: &rng)) / 997 }
        for _ in 0..<2 {
            for v in values { #expect(Self.text(v, &writer) == Self.oracle(v), "\(v)") }
        }
    }

    /// Fractions remembered before the table grows are kept (each in its set of the larger table),
    /// and written from it as the stdlib writes them.
    @Test func aGrowingTableKeepsWhatItRemembered() {
        var writer = ExactNumberWriter()
        var rng = SplitMix64(seed: 9)
        let values = (0..<3_000).map { _ in Double(Int.random(in: 1_000...90_000, using: &rng)) / 991 }
        var most = 0
        for v in values {
            let before = writer.rememberedCount
            #expect(Self.text(v, &writer) == Self.oracle(v), "\(v)")
            // A new fraction is added, and a growth loses none: the count never falls.
            #expect(writer.rememberedCount >= before)
            most = max(most, writer.rememberedCount)
        }
        #expect(most > 512)  // past the first table's 64 sets of two, and the second's 256
        for v in values { #expect(Self.text(v, &writer) == Self.oracle(v), "\(v), again") }
    }

    /// Random bit patterns in every binade `ShortestDecimal` answers (2^-10 to 2^53), either
    /// sign, and in the binades just outside it, where the stdlib writes.
    @Test func randomDoublesAroundTheShortestRangeAreTheStdlibsText() {
        var writer = ExactNumberWriter()
        var rng = SplitMix64(seed: 1_013)
        for exponentBits in UInt(1023 - 14)...UInt(1023 + 56) {
            for _ in 0..<3_000 {
                let v = Double(
                    sign: Bool.random(using: &rng) ? .minus : .plus, exponentBitPattern: exponentBits,
                    significandBitPattern: UInt64.random(in: 0..<(1 << 52), using: &rng))
                let written = Self.text(v, &writer)
                guard written == Self.oracle(v) else {
                    Issue.record("\(v.bitPattern): wrote \(written), expected \(Self.oracle(v))")
                    return
                }
            }
        }
    }

    /// A value exactly halfway between the two shortest decimals its interval holds is written
    /// with the even last digit: n + 0.25 between 2^49 and 2^51 (spacing 1/8 or 1/4) lies between
    /// n.2 and n.3, n + 0.75 between n.7 and n.8.
    @Test func aTieBetweenTwoShortestDecimalsGoesToTheEvenDigit() {
        var writer = ExactNumberWriter()
        for base in [0x1p49, 0x1p50] {
            for n in [0.0, 1, 2, 3, 12_345, 999_999] {
                for fraction in [0.25, 0.75] {
                    let v = base + n + fraction
                    let written = Self.text(v, &writer)
                    #expect(written == Self.oracle(v), "\(v)")
                    #expect(written.last.map { "2468".contains($0) } == true, "\(written)")
                }
            }
        }
    }

    /// The digits themselves: `|v| = digits × 10^exponent` read back is `v`, with no trailing zero,
    /// and they are the stdlib's (whole numbers and powers of two included).
    @Test func shortestDecimalDigitsReadBackAsTheDouble() throws {
        var rng = SplitMix64(seed: 17)
        let powersOfTwo = (-10...52).map { Double(sign: .plus, exponent: $0, significand: 1) }
        let random = (0..<20_000).map { _ in
            Double(
                sign: .plus, exponentBitPattern: UInt.random(in: 1013...1075, using: &rng),
                significandBitPattern: UInt64.random(in: 0..<(1 << 52), using: &rng))
        }
        for v in powersOfTwo + random {
            let (digits, exponent) = try #require(ShortestDecimal.digits(of: v))
            #expect(digits % 10 != 0)
            #expect(Double("\(digits)e\(exponent)") == v, "\(v)")
            #expect(Self.digitsWithoutPoint(v.description) == "\(digits)", "\(v)")
        }
        for outside in [0x1p-11, 0x1p53, 0, .nan, .infinity] { #expect(ShortestDecimal.digits(of: outside) == nil) }
    }

    /// Digits after a point: every length from 1 to 24 with zeros first, for the smallest, the
    /// largest and random values, in rows with exactly their room and with plenty.
    @Test func fractionDigitsAreZeroPaddedToTheirLength() {
        var rng = SplitMix64(seed: 24)
        for count in 1...24 {
            let limit: UInt64 = count >= 20 ? .max : ShortestDecimal.powersOfTen[count] - 1
            var values: [UInt64] = [0, 1, limit, limit / 7, min(12_345_678, limit)]
            values += (0..<200).map { _ in UInt64.random(in: 0...limit, using: &rng) }
            for f in values {
                let text = String(f)
                let expected = String(repeating: "0", count: max(0, count - text.count)) + text
                for room in [count, 64] {
                    var bytes: [UInt8] = []
                    RowBytes.append(to: &bytes, capacity: room) { $0.write(fraction: f, digits: count) }
                    #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(f) as \(count) digits")
                }
            }
        }
    }

    /// A row with no room to spare: the text's last bytes are written one by one, not as words
    /// past the row's end.
    @Test func rowsExactlyAsLongAsTheTextHoldIt() {
        var writer = ExactNumberWriter()
        for v in [54.666666666666664, 1.5, 100.25, -7.125, 3.0, 1234.5678] {
            let expected = Self.oracle(v)
            for _ in 0..<2 { #expect(Self.text(v, &writer, room: expected.utf8.count) == expected) }
        }
    }
}
