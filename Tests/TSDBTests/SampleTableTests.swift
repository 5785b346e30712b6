import Testing

@testable import TSDB
@testable import TSDBSynthetic
@testable import tsdb

/// Samples as text people read or tools take: tables are written as bytes, the strings samples
/// repeat made once each; JSON arrays are the columnar NDJSON lines. Both the same text as each
/// sample's own (cells of strings padded to their width in characters; `DayFileWriter`'s object).
@Suite struct SampleTableTests {
    /// The row as strings (how tables were written before): the oracle.
    static func stringRow(_ s: Sample, zone: TimeZoneRules?) -> String {
        let who = [s.source.string, s.device.string.map(DeviceName.display)].compactMap { $0 }.joined(separator: " / ")
        var value: [UInt8] = []
        DayFileWriter.appendValue(s.value, to: &value)
        let start = zone.map { localTimestamp(s.start.microseconds, $0) } ?? s.start.description
        let end = zone.map { localTimestamp(s.end.microseconds, $0) } ?? s.end.description
        return pad(start, 26) + pad(s.end == s.start ? "" : end, 26) + pad(String(decoding: value, as: UTF8.self), 10)
            + pad(displaySafe(s.unit.string ?? ""), 10) + pad(displaySafe(who), 28)
            + displaySafe(s.metadata.string ?? "") + "\n"
    }

    /// Texts of every kind a cell meets: empty, ASCII, wider than the column, characters of
    /// several bytes (`·`, `’`, an emoji, a combining accent), control characters.
    static let texts: [OptionalText] = [
        .absent, .null, .text(""), .text("count/min"), .text("mL/min·kg"), .text("Jane’s Apple Watch"),
        .text("com.apple.health.81C3F6A2-5B1E-4C7A-9D2E-3F4A5B6C7D8E"), .text("Watch\u{1B}[31m"),
        .text("🫀 e\u{301}"), .text("Apple Watch Series 9"), .text("{\"HKMetadataKeyHeartRateMotionContext\":1}"),
    ]

    @Test(arguments: [nil, "Australia/Lord_Howe"])
    func rowsWrittenAsBytesEqualTheirStringForms(zoneName: String?) throws {
        let zone = try zoneName.map { try TimeZoneRules.named($0) }
        var writer = SampleTableWriter(zone: zone)
        var rng = SplitMix64(seed: 41)
        let forms = [
            TimeForm.zulu, TimeForm(offsetMinutes: 120, fractionDigits: 3), TimeForm(offsetMinutes: -570),
            TimeForm(isNegativeZero: true), TimeForm(fractionDigits: 5, isZulu: true),  // 26 characters: the width
        ]
        let values: [SampleValue] = [
            .absent, .null, .decimal(ExactDecimal(mantissa: 72, scale: 0)),
            .decimal(ExactDecimal(mantissa: -1596, scale: 3)), .numberText("3.65e1"),
            .decimal(ExactDecimal(mantissa: 123_456_789_012_345, scale: 2)),
            .decimal(ExactDecimal(mantissa: 1_234_567_890, scale: 0)),  // 10 characters: the width
        ]
        for _ in 0..<4000 {
            let start = Int64.random(in: 1_500_000_000_000_000...1_800_000_000_000_000, using: &rng)
            let startStamp = Timestamp(microseconds: start, form: forms.randomElement(using: &rng)!)
            let endStamp =
                Bool.random(using: &rng)
                ? startStamp
                : Timestamp(
                    microseconds: start + Int64.random(in: 0...90_000_000_000, using: &rng),
                    form: forms.randomElement(using: &rng)!)
            let sample = Sample(
                type: "HKQuantityTypeIdentifierHeartRate", start: startStamp, end: endStamp,
                value: values.randomElement(using: &rng)!, unit: Self.texts.randomElement(using: &rng)!,
                source: Self.texts.randomElement(using: &rng)!, device: Self.texts.randomElement(using: &rng)!,
                metadata: Self.texts.randomElement(using: &rng)!)
            let bytes = writer.tableRow(sample)
            #expect(String(decoding: bytes, as: UTF8.self) == Self.stringRow(sample, zone: zone), "\(sample)")
        }
    }

    /// Metadata unique to each sample (a route's, say) does not grow the cells kept without bound.
    @Test func distinctCellsAreKeptUpToALimit() {
        var cells = TableCells()
        for i in 0..<(TableCells.limit * 3) {
            #expect(cells.metadata("{\"n\":\(i)}") == Array("{\"n\":\(i)}".utf8))
            #expect(cells.kept <= TableCells.limit)
        }
    }

    /// A JSON array from `tsdb query` and `tsdb export` (more than one 64 KiB chunk of lines, two
    /// types in one array) against each sample's object written one by one.
    @Test func jsonArraysHoldEachSamplesObjectInOrder() throws {
        let heartRate = SlotSummaryTests.series(3000, seed: 5)
        let steps = (0..<40).map { i in
            let start = SlotSummaryTests.march2025 + Int64(i) * 3_600_000_000
            return Sample(
                type: "HKQuantityTypeIdentifierStepCount", start: Timestamp(microseconds: start),
                end: Timestamp(microseconds: start + 600_000_000, form: TimeForm(offsetMinutes: 120)),
                value: i % 7 == 0 ? .absent : .decimal(ExactDecimal(mantissa: Int64(i * 37), scale: 0)),
                unit: i % 5 == 0 ? .null : .text("count"), source: .text("Jane’s iPhone"),
                device: .text("iPhone\u{1B}"), metadata: i % 3 == 0 ? .text("{\"note\":\"é\\n\"}") : .absent)
        }
        let (store, folder) = try SlotSummaryTests().store(heartRate + steps)
        defer { folder.cleanup() }
        func expected(_ types: [String]) throws -> String {
            var objects: [String] = []
            for type in types {
                var cursor = try store.samples(of: type)
                while let s = try cursor.next() {
                    var bytes: [UInt8] = []
                    DayFileWriter.appendSample(s, to: &bytes)
                    objects.append(String(decoding: bytes, as: UTF8.self))
                }
            }
            return objects.isEmpty ? "[]\n" : "[\n  " + objects.joined(separator: ",\n  ") + "\n]\n"
        }
        let hr = SlotSummaryTests.type
        let query = try tsdbShell(["query", hr, "--range", "..", "--format", "json", "--store", folder.path])
        #expect(query.status == 0 && query.stdout.utf8.count > 1 << 16, "\(query.stderr)")
        #expect(query.stdout == (try expected([hr])))
        let both = try tsdbShell(["export", "--format", "json", "--store", folder.path])
        #expect(both.stdout == (try expected([hr, "HKQuantityTypeIdentifierStepCount"].sorted())))
        let none = try tsdbShell(["query", hr, "--range", "1999", "--format", "json", "--store", folder.path])
        #expect(none.status == 0 && none.stdout == "[]\n")
    }
}
