import Testing

@testable import TSDB
@testable import TSDBSynthetic
@testable import tsdb

/// Tables and Markdown are written as bytes, the rows held back for the widths too: the same
/// text as the string forms they replace.
@Suite struct AggregateOutputTests {
    func humanBytes(_ v: Double) -> String {
        var bytes: [UInt8] = []
        RowBytes.append(to: &bytes, capacity: 64) { writeHuman(v, to: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text people read, as strings: integers plainly, others to 3 decimals without trailing
    /// zeros (the form `human` had before it was written as bytes).
    static func roundedText(_ v: Double) -> String {
        if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
        var s = fixed(v, 3)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    @Test func humanNumbersWrittenAsBytesEqualTheirStrings() {
        var values: [Double] = [
            0, -0.0, 1, -1, 0.5, 0.0004, 0.0005, -0.0004, 123.4565, 54.601941747572816, 1e15, -1e15, 1e15 + 0.5,
            1e16, 12_345_678_901.2345, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, 0.001, 99.9996,
        ]
        var rng = SplitMix64(seed: 23)
        for _ in 0..<5000 {
            let magnitude = Double.random(in: -6...17, using: &rng)
            values.append((Double.random(in: -1...1, using: &rng) * pow10(magnitude)))
            values.append(Double(Int.random(in: -100_000...100_000, using: &rng)) / 8)
            // Means of whole numbers, as heart-rate buckets make them; and the thousandths' edges.
            values.append(
                Double(Int.random(in: -10_000...10_000, using: &rng)) / Double(Int.random(in: 1...97, using: &rng)))
            values.append((Double(Int.random(in: -9_999_999...9_999_999, using: &rng)) + 0.5) / 1000)
        }
        values += [999_999_999_999.9996, 1e12 - 0.25, 1e12 + 0.25, -0.0005, 0.0005001, 0.9995, -0.9995]
        for v in values { #expect(humanBytes(v) == Self.roundedText(v) && human(v) == humanBytes(v), "\(v)") }
    }

    func pow10(_ x: Double) -> Double {
        var r = 1.0
        for _ in 0..<Int(x.magnitude) { r *= 10 }
        return x < 0 ? 1 / r : r
    }

    /// Table cells padded on the calling thread (`AggregateTableCells.pad`) against
    /// `StreamingTable.line`: seeded random rows of cells, empty ones and ones wider than their
    /// column among them, over several chunks of rows.
    @Test func paddedTableCellsAreTheStreamingTablesLines() {
        var random = SplitMix64(seed: 25)
        for round in 0..<40 {
            let columns = 1 + Int(random.next() % 6)
            let widths = (0..<columns).map { _ in Int(random.next() % 12) }
            let rows = (0..<Int(random.next() % 50)).map { _ in
                (0..<columns).map { _ in String(repeating: "7", count: Int(random.next() % 16)) }
            }
            let text = Array(rows.map { $0.joined(separator: "\t") + "\n" }.joined().utf8)
            var padded: [UInt8] = []
            text.withUnsafeBufferPointer {
                AggregateTableCells.pad($0, longest: 16 * columns + columns, widths: widths, to: &padded)
            }
            #expect(
                String(decoding: padded, as: UTF8.self) == rows.map { StreamingTable.line($0, widths) }.joined(),
                "round \(round)")
        }
    }

    /// Tables and Markdown from the command line, line by line against the library's rows in the
    /// string forms: hours are more rows than ``StreamingTable/sample`` (widths from the first rows
    /// held back, the rest written with them), months fewer (all held back until the end).
    @Test(arguments: ["table", "markdown"], ["hour", "month"])
    func tablesHoldTheLibrarysRowsInTheirStringForms(format: String, bucket: String) throws {
        let (store, folder) = try ParallelAggregationTests().fixture()
        defer { folder.cleanup() }
        let zone = try TimeZoneRules.named("Australia/Lord_Howe")
        var o = AggregateOptions()
        o.zone = zone
        o.bucket = .calendar(bucket == "hour" ? .hour : .month)
        o.statistics = [.count, .min, .mean, .stddev]
        let rows = try store.aggregate(ParallelAggregationTests.type, options: o).rows
        let run = try tsdbShell([
            "query", ParallelAggregationTests.type, "--bucket", bucket, "--tz", zone.identifier, "--stats",
            "count,min,mean,stddev", "--format", format, "--store", folder.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.count == rows.count + 2)
        #expect(bucket == "hour" ? rows.count > StreamingTable.sample * 2 : rows.count < StreamingTable.sample)
        let cells = rows.map { r in
            [localTimestamp(r.start, zone), localTimestamp(r.end, zone)]
                + [Statistic.count, .min, .mean, .stddev].map { r.values[$0].map(human) ?? "" }
        }
        if format == "markdown" {
            #expect(Array(lines.dropFirst(2)) == cells.map { String(markdownLine($0).dropLast()) })
        } else {
            let header = ["start", "end", "count", "min", "mean", "stddev"]
            var widths = header.map(\.count)
            for r in cells.prefix(StreamingTable.sample) {
                for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) }
            }
            #expect(Array(lines.dropFirst(2)) == cells.map { String(StreamingTable.line($0, widths).dropLast()) })
        }
    }
}
