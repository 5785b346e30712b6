import Testing

@testable import TSDB
@testable import TSDBSynthetic
@testable import tsdb

/// Samples as text people read or tools take: tables are written from decoded columns, each text's
/// cell made once per segment; JSON arrays are the columnar NDJSON lines. Both the same text as each
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

    /// Metadata is a JSON object: with text of several bytes a character, and a control character escaped.
    static let metadataTexts: [OptionalText] = [
        .absent, .null, .text("{}"), .text("{\"HKMetadataKeyHeartRateMotionContext\":1}"),
        .text("{\"note\":\"Jane’s 🫀 e\u{301}\",\"tab\":\"a\\tb\"}"),
    ]

    /// Seeded random samples over a few months (several segments and blocks), with every kind of
    /// text, form and value, and some metadata unique to its sample.
    static func randomSamples(seed: UInt64) -> [Sample] {
        var rng = SplitMix64(seed: seed)
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
        return (0..<4000).map { k in
            var start = Int64.random(in: 1_740_000_000_000_000...1_750_000_000_000_000, using: &rng)
            var startStamp = Timestamp(microseconds: start, form: forms.randomElement(using: &rng)!)
            if k % 3 == 1 {
                // The same whole second written in two forms without fractions: the end is shown.
                start -= start % 1_000_000
                startStamp = Timestamp(microseconds: start, form: forms[0])
            }
            let endStamp = [
                startStamp, Timestamp(microseconds: start, form: forms[2]),
                Timestamp(
                    microseconds: start + Int64.random(in: 0...90_000_000_000, using: &rng),
                    form: forms.randomElement(using: &rng)!),
            ][k % 3]
            let metadata = k % 50 == 0 ? .text("{\"n\":\(k)}") : Self.metadataTexts.randomElement(using: &rng)!
            return Sample(
                type: "HKQuantityTypeIdentifierHeartRate", start: startStamp, end: endStamp,
                value: values.randomElement(using: &rng)!, unit: Self.texts.randomElement(using: &rng)!,
                source: Self.texts.randomElement(using: &rng)!, device: Self.texts.randomElement(using: &rng)!,
                metadata: metadata)
        }
    }

    /// The table the engine writes from columns, against each stored sample's row made from its
    /// strings, in more than one 64 KiB chunk; as recorded and in a zone; all sources and one.
    @Test(arguments: [nil, "Australia/Lord_Howe"], [nil, "watch"])
    func tableRowsFromColumnsEqualTheirStringForms(zoneName: String?, source: String?) throws {
        let zone = try zoneName.map { try TimeZoneRules.named($0) }
        let (store, folder) = try SlotSummaryTests().store(Self.randomSamples(seed: 41))
        defer { folder.cleanup() }
        let report = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        #expect(report.skipped.isEmpty, "\(report.skipped.first.map { "\($0)" } ?? "")")
        let type = "HKQuantityTypeIdentifierHeartRate"
        var expected = ""
        var cursor = try store.samples(of: type, source: source)
        while let s = try cursor.next() { expected += Self.stringRow(s, zone: zone) }
        var chunks = 0
        var written: [UInt8] = []
        try store.writeSampleTable(of: type, style: SampleTable.style(zone: zone), source: source) {
            written += $0
            chunks += 1
        }
        #expect(expected.utf8.count > 1 << 16 || source != nil, "\(expected.utf8.count) bytes, \(expected.prefix(600))")
        #expect(chunks > 1 || source != nil)
        #expect(expected.utf8.count > 10_000)
        #expect(String(decoding: written, as: UTF8.self) == expected)
    }

    /// A row longer than a chunk (metadata of 100 KB) is written whole, between rows of the usual size.
    @Test func aRowLongerThanAChunkIsWrittenWhole() throws {
        let start = Int64(1_740_000_000_000_000)
        let samples = (0..<3).map { k in
            Sample(
                type: "HKQuantityTypeIdentifierHeartRate",
                start: Timestamp(microseconds: start + Int64(k) * 60_000_000),
                end: Timestamp(microseconds: start + Int64(k) * 60_000_000),
                value: .decimal(ExactDecimal(mantissa: 60 + Int64(k), scale: 0)), unit: .text("count/min"),
                source: .text("Watch"), device: .absent,
                metadata: k == 1 ? .text("{\"note\":\"" + String(repeating: "x", count: 100_000) + "\"}") : .absent)
        }
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        var written: [UInt8] = []
        try store.writeSampleTable(of: samples[0].type, style: SampleTable.style(zone: nil)) { written += $0 }
        var cursor = try store.samples(of: samples[0].type)
        var expected = ""
        while let s = try cursor.next() { expected += Self.stringRow(s, zone: nil) }
        #expect(written.count > 100_000 && String(decoding: written, as: UTF8.self) == expected)
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
