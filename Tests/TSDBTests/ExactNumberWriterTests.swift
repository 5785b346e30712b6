import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// `ExactNumberWriter` remembers the digits after the point of a fraction and reuses them for
/// every number with the same fraction bits and exponent: each text must still be the one
/// the stdlib writes (whole numbers below 10^15 without a point).
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
    /// (the key the writer remembers), in every exponent it remembers and a few around them.
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
        for k in 0...54 { values.append(Double(sign: .plus, exponent: k, significand: 1)) }
        var power = 1.0
        for _ in 0...16 {
            values.append(power)
            power *= 10
        }
        for v in values {
            for neighbour in [v, v.nextUp, v.nextDown, -v, -v.nextUp] {
                var writer = ExactNumberWriter()
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
