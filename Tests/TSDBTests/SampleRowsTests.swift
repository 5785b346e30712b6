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

    /// A sample as a row in `format`, field by field.
    static func oracleRow(_ s: Sample, _ format: Store.TextFormat) -> [UInt8] {
        guard format == .ndjson else { return csvRow(s) }
        var row: [UInt8] = []
        DayFileWriter.appendSample(s, to: &row)
        return row + [0x0A]
    }

    /// Every stored sample of the test type, in order.
    static func stored(_ store: Store) throws -> [Sample] {
        var cursor = try store.samples(of: SlotSummaryTests.type)
        var stored: [Sample] = []
        while let s = try cursor.next() { stored.append(s) }
        return stored
    }

    @Test(arguments: [Store.TextFormat.csv, .ndjson])
    func rowsEqualTheSamplesWrittenFieldByField(format: Store.TextFormat) throws {
        let (store, folder) = try SlotSummaryTests().store(Self.samples(3_000, seed: 9))
        defer { folder.cleanup() }
        let stored = try Self.stored(store)
        #expect(stored.count == 3_000)
        let expected = stored.flatMap { Self.oracleRow($0, format) }
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

    /// Timestamps from the template of their date against ISO8601.write, in order (days go by,
    /// forms change, instants repeat) and out of order, around midnights, in years 0001 and 9999.
    @Test func recordedStampsEqualTheTextWrittenInFull() {
        var rng = SplitMix64(seed: 77)
        let forms = [
            TimeForm.zulu, TimeForm(offsetMinutes: 60), TimeForm(offsetMinutes: -210), TimeForm(offsetMinutes: 345),
            TimeForm(offsetMinutes: 0, isNegativeZero: true), TimeForm(offsetMinutes: -720, fractionDigits: 3),
            TimeForm(offsetMinutes: 840, fractionDigits: 9), TimeForm(offsetMinutes: 0),
        ]
        let day = ISO8601.microsPerDay
        var instants: [(Int64, TimeForm)] = []
        var t: Int64 = 1_742_428_800_000_000
        for i in 0..<40_000 {
            t += Int64.random(in: 0...(i % 500 == 0 ? 3 * day : 90_000_000), using: &rng)
            instants.append((t, i % 1000 < 900 ? forms[1] : forms.randomElement(using: &rng)!))
            // An instant again (a point sample's end), at times in another form.
            if i % 7 == 0 { instants.append((t, i % 3 == 0 ? forms.randomElement(using: &rng)! : instants.last!.1)) }
        }
        for edge in [Int64(0), -62_135_596_800_000_000, 253_402_214_400_000_000 - day, 1_742_428_800_000_000] {
            for f in forms {
                let midnight = edge - Int64(f.offsetMinutes) * 60_000_000
                for d in [-day, -1, 0, 1, 999_999, 1_000_000, day - 1_000_000, day - 1, day] {
                    instants.append((midnight + d, f))
                }
            }
        }
        for _ in 0..<5_000 {
            let random = Int64.random(in: -62_135_596_800_000_000...253_402_214_399_000_000, using: &rng)
            instants.append((random, forms.randomElement(using: &rng)!))
        }
        var writer = RecordedStampWriter()
        for (micros, form) in instants {
            var written: [UInt8] = []
            RowBytes.append(to: &written, capacity: ISO8601.longestText + (micros % 2 == 0 ? 32 : 0)) {
                writer.write(micros, form, to: &$0)
            }
            let expected = ISO8601.format(micros, form)
            let text = String(decoding: written, as: UTF8.self)
            if text != expected {
                Issue.record("\(micros) in \(form): \(text) is not \(expected)")
                return
            }
        }
    }

    /// A range inside the blocks and a source filter: the rows are the oracle's rows of the
    /// samples in the range whose source or device contains the filter.
    @Test(arguments: [Store.TextFormat.csv, .ndjson])
    func rowsOfARangeAndASourceAreTheOraclesSamplesThere(format: Store.TextFormat) throws {
        let samples = Self.samples(3_000, seed: 12)
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let stored = try Self.stored(store)
        let from = stored[700].start.microseconds + 1
        let to = stored[2_300].start.microseconds
        func matches(_ t: OptionalText) -> Bool { t.string?.lowercased().contains("quoted") ?? false }
        let expected = stored.filter { s in
            s.start.microseconds >= from && s.start.microseconds < to && (matches(s.source) || matches(s.device))
        }.flatMap { Self.oracleRow($0, format) }
        var written: [UInt8] = []
        try store.writeSamples(of: SlotSummaryTests.type, from: from, to: to, format: format, source: "QUOTED") {
            written += $0
        }
        #expect(!expected.isEmpty)
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    /// A dictionary with more than 65,535 metadata texts: ids too large for a kept tail's key
    /// are composed row by row. Dictionary ids are given in order of first use, so a new text
    /// (id k + 65,536) followed by the old text of id k would share a key cut to 16 bits a field.
    @Test func rowsWithMetadataIdsBeyondSixteenBitsAreComposedEachTime() throws {
        var samples: [Sample] = []
        func add(_ metadata: String) {
            // One segment: a sample a second from 2025-03-20.
            let start = Timestamp(microseconds: 1_742_428_800_000_000 + Int64(samples.count) * 1_000_000)
            samples.append(
                Sample(
                    type: SlotSummaryTests.type, start: start, end: start,
                    value: .decimal(ExactDecimal(mantissa: 60, scale: 0)), unit: .text("count/min"),
                    source: .text("Watch"), device: .text("Apple Watch"), metadata: .text(metadata)))
        }
        for i in 0..<65_536 { add("{\"n\":\(i)}") }
        for j in 0..<2_000 {
            add("{\"new\":\(j)}")
            add("{\"n\":\(j)}")
        }
        try expectRowsEqualTheOracle(samples)
    }

    /// Texts too long to keep 64 composed tails of are composed row by row.
    @Test func rowsWithLongTextsAreComposedEachTime() throws {
        var samples = Self.samples(2_000, seed: 5)
        let long = String(repeating: "a long device name, ", count: 300)
        for i in samples.indices where i % 10 == 0 { samples[i].device = .text(long) }
        try expectRowsEqualTheOracle(samples)
    }

    private func expectRowsEqualTheOracle(_ samples: [Sample]) throws {
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let expected = try Self.stored(store).flatMap { Self.csvRow($0) }
        var written: [UInt8] = []
        try store.writeSamples(of: SlotSummaryTests.type, format: .csv) { written += $0 }
        #expect(written.count == expected.count)
        let same = written == expected
        #expect(same, "the rows differ")
    }
}
