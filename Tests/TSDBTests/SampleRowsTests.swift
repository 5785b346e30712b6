import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Raw samples written as rows (`tsdb query TYPE`, `tsdb export`): each row made in one buffer,
/// timestamps copied when repeated. Against the same samples written one field at a time.
@Suite struct SampleRowsTests {
    @Test func decimalsAreWrittenAsTheirDescription() {
        var rng = SplitMix64(seed: 31)
        var cases: [(Int64, UInt8)] = [(0, 0), (0, 3), (-5, 1), (5, 18), (.max, 18), (.min, 18), (.min, 0), (-1, 18)]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 0...18, using: &rng)
            var bound: Int64 = 1
            for _ in 0..<digits { bound *= 10 }
            cases.append((Int64.random(in: -bound...bound, using: &rng), UInt8.random(in: 0...18, using: &rng)))
        }
        for (mantissa, scale) in cases {
            var bytes: [UInt8] = []
            RowBytes.append(to: &bytes, capacity: 32) { $0.write(mantissa: mantissa, scale: scale) }
            let expected = ExactDecimal(mantissa: mantissa, scale: scale).description
            #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(mantissa) at scale \(scale)")
        }
    }

    /// Samples that share instants in different forms, points and intervals, every kind of value
    /// and fields that need quoting or escaping.
    static func samples(_ n: Int, seed: UInt64) -> [Sample] {
        var rng = SplitMix64(seed: seed)
        let forms = [
            TimeForm.zulu, TimeForm(offsetMinutes: 60), TimeForm(offsetMinutes: -210, fractionDigits: 3),
            TimeForm(offsetMinutes: 345, fractionDigits: 9), TimeForm(offsetMinutes: 0, isNegativeZero: true),
        ]
        let texts: [OptionalText] = [.absent, .null, .text("Apple Watch"), .text("a, \"quoted\" one"), .text("é\n")]
        let metadata: [OptionalText] = [.absent, .null, .text("{\"HKMetadataKeyHeartRateMotionContext\":1}")]
        var t: Int64 = 1_742_428_800_000_000
        return (0..<n).map { i in
            if Int.random(in: 0...2, using: &rng) > 0 { t += Int64.random(in: 0...90_000_000, using: &rng) + 123 }
            let start = Timestamp(microseconds: t, form: forms.randomElement(using: &rng)!)
            let end =
                i % 3 == 0
                ? start
                : Timestamp(
                    microseconds: t + Int64.random(in: 0...600_000_000, using: &rng),
                    form: forms.randomElement(using: &rng)!)
            let value: SampleValue =
                switch i % 7 {
                case 0: .null
                case 1: .absent
                case 2: .numberText("1.5e3")
                default:
                    .decimal(
                        ExactDecimal(
                            mantissa: Int64.random(in: -99_999...99_999, using: &rng),
                            scale: UInt8.random(in: 0...4, using: &rng)))
                }
            return Sample(
                type: SlotSummaryTests.type, start: start, end: end, value: value,
                unit: texts.randomElement(using: &rng)!, source: texts.randomElement(using: &rng)!,
                device: texts.randomElement(using: &rng)!, metadata: metadata.randomElement(using: &rng)!)
        }
    }

    /// A sample as a CSV row, field by field.
    static func csvRow(_ s: Sample) -> [UInt8] {
        var row: [UInt8] = []
        DayFileWriter.appendCSVField(s.type, to: &row)
        for stamp in [s.start, s.end] {
            row.append(UInt8(ascii: ","))
            ISO8601.append(stamp.microseconds, stamp.form, to: &row)
        }
        row.append(UInt8(ascii: ","))
        DayFileWriter.appendValue(s.value, to: &row)
        for field in [s.unit, s.source, s.device, s.metadata] {
            row.append(UInt8(ascii: ","))
            if case .text(let text) = field { DayFileWriter.appendCSVField(text, to: &row) }
        }
        return row + [0x0A]
    }

    @Test(arguments: [Store.TextFormat.csv, .ndjson])
    func rowsEqualTheSamplesWrittenFieldByField(format: Store.TextFormat) throws {
        let (store, folder) = try SlotSummaryTests().store(Self.samples(3_000, seed: 9))
        defer { folder.cleanup() }
        var cursor = try store.samples(of: SlotSummaryTests.type)
        var stored: [Sample] = []
        while let s = try cursor.next() { stored.append(s) }
        #expect(stored.count == 3_000)
        var expected: [UInt8] = []
        for s in stored {
            if format == .csv {
                expected += Self.csvRow(s)
            } else {
                DayFileWriter.appendSample(s, to: &expected)
                expected.append(0x0A)
            }
        }
        var written: [UInt8] = []
        try store.writeSamples(of: SlotSummaryTests.type, format: format) { written += $0 }
        // The first row that differs, not megabytes of bytes, when they do.
        let rows = String(decoding: written, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let oracle = String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(rows.count == oracle.count)
        if let k = rows.indices.first(where: { $0 < oracle.count && rows[$0] != oracle[$0] }) {
            Issue.record("row \(k): \(rows[k]) is not \(oracle[k])")
        }
        let same = written == expected
        #expect(same, "the bytes differ")
    }
}
