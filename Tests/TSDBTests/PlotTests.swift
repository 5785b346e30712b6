import Foundation
import XCTest

@testable import TSDB
@testable import TSDBCharts

/// `tsdb plot` and the chart renderer: real files, parsed back as XML and PNG.
final class PlotTests: XCTestCase {
    /// Parses an SVG with Python's XML parser and prints the counts of drawn elements.
    func drawn(_ svg: String) throws -> [String: Int] {
        let folder = TemporaryFolder("svg")
        defer { folder.cleanup() }
        folder.write(svg, to: "chart.svg")
        let script = """
            import sys, collections, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            name = lambda e: e.tag.split('}')[1] + '.' + (e.get('class') or '').replace(' ', '_')
            c = collections.Counter(name(e) for e in root.iter())
            c['paths'] = sum(e.get('d', '').count('M') for e in root.iter() if e.tag.endswith('path'))
            print(' '.join(f'{k}={v}' for k, v in c.items()))
            """
        let r = try runProcess("/usr/bin/env", ["python3", "-c", script, folder.path + "/chart.svg"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var out: [String: Int] = [:]
        for pair in r.stdout.split(whereSeparator: \.isWhitespace) {
            let kv = pair.split(separator: "=")
            out[String(kv[0])] = Int(kv[1])
        }
        return out
    }

    func testEveryKindOfTypeDrawsItsChartAsValidSVG() throws {
        let store = try generatedStore("plot-kinds", days: 20, start: "2025-03-20")
        defer { store.cleanup() }
        let expectations: [(String, String, String)] = [
            ("HeartRate", "2025-03-21..2025-04-05", "path.band"),  // many samples: band and mean line
            ("HeartRate", "2025-03-25T08:00+01:00..2025-03-25T12:00+01:00", "circle.dot"),  // few: points
            ("Steps", "2025-03-21..2025-04-05", "rect.s0"),  // bars of the sum
            ("SleepAnalysis", "2025-03-21..2025-04-05", "rect.s1"),  // stacked stages (core)
            ("Workout", "2025-03-21..2025-04-05", "rect.s0"),  // calendar
            ("BodyMass", "2025-03-20..2025-04-08", "circle.dot"),
        ]
        for (type, range, element) in expectations {
            let r = try tsdbShell([
                "plot", type, "--store", store.path, "--range", range, "--tz", "Europe/Paris",
            ])
            XCTAssertEqual(r.status, 0, "\(type): \(r.stderr)")
            let counts = try drawn(r.stdout)
            XCTAssertGreaterThan(counts[element] ?? 0, 0, "\(type) \(range): no \(element) in \(counts)")
            XCTAssertTrue(r.stdout.contains("Europe/Paris"), type)
        }
    }

    func testStepsBySourceStackEachSourceAndMarkTheTotalCountedOnce() throws {
        let store = try generatedStore("plot-sources", days: 6)
        defer { store.cleanup() }
        let s = try Store(at: store.path)
        let paris = try TimeZoneRules.named("Europe/Paris")
        let chart = try ChartBuilder.chart(
            s, type: "HKQuantityTypeIdentifierStepCount", from: nil, to: nil, bucket: .calendar(.day), zone: paris,
            bySource: true)
        guard case .bars(let bars, let names) = chart.body else { return XCTFail("steps are bars") }
        XCTAssertEqual(names.count, 2, "watch and phone")
        var overlapping = 0
        for bar in bars {
            let total = try XCTUnwrap(bar.total)
            let parts = bar.segments.reduce(0, +)
            XCTAssertLessThanOrEqual(total, parts + 1e-6, "counted once is at most the sources' sum")
            XCTAssertGreaterThanOrEqual(total, (bar.segments.max() ?? 0) - 1e-6, "and at least the larger source")
            if total < parts - 1 { overlapping += 1 }
        }
        XCTAssertGreaterThan(overlapping, 0, "watch and phone overlap on some day")
        let cli = try tsdbShell([
            "query", "Steps", "--store", store.path, "--bucket", "day", "--tz", "Europe/Paris", "--format", "csv",
        ])
        let sums = cli.stdout.split(separator: "\n").dropFirst().compactMap { Double($0.split(separator: ",")[2]) }
        XCTAssertEqual(bars.map { $0.total ?? -1 }, sums, "the marked totals are tsdb query's sums")
        let svg = try drawn(chart.svg())
        XCTAssertEqual(svg["line.total"], bars.count + 1, "one mark a bar, and the legend's")
    }

    func testTheSameDataGivesTheSameBytes() throws {
        let store = try generatedStore("plot-same", days: 5)
        defer { store.cleanup() }
        let args = ["plot", "HeartRate", "--store", store.path, "--tz", "America/New_York", "--bucket", "hour"]
        let a = try tsdbShell(args)
        let b = try tsdbShell(args)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(a.stdout, b.stdout)
        XCTAssertGreaterThan(a.stdout.count, 1000)
    }

    func testAMissingDayIsAGapNotALine() throws {
        let folder = TemporaryFolder("plot-gap")
        defer { folder.cleanup() }
        try generate(folder.path, days: 9, seed: 3, edgeCases: false, start: "2025-05-01")
        try FileManager.default.removeItem(atPath: folder.path + "/raw/2025/05/2025-05-05.json")
        XCTAssertEqual(try tsdbShell(["compact", folder.path]).status, 0)
        let r = try tsdbShell([
            "plot", "HeartRate", "--store", folder.path, "--range", "2025-05-01..2025-05-09", "--bucket", "day",
            "--tz", "Europe/Paris",  // the generated person's zone: day files are local days
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let counts = try drawn(r.stdout)
        // Two runs of days (1-4 and 6-9): the band and the mean line each have two subpaths.
        XCTAssertEqual(counts["paths"], 4, "\(counts)")
    }

    func testHourTicksFollowTheZonesDSTDays() throws {
        let paris = try TimeZoneRules.named("Europe/Paris")
        func day(_ y: Int, _ m: Int, _ d: Int) -> Int64 { paris.startOfDay(ISO8601.days(year: y, month: m, day: d)) }
        let spring = TimeAxis(zone: paris, from: day(2025, 3, 30), to: day(2025, 3, 31)).ticks(maxTicks: 8)
        XCTAssertEqual(spring.map(\.label), ["30 Mar", "03:00", "06:00", "09:00", "12:00", "15:00", "18:00", "21:00"])
        XCTAssertEqual(spring[1].instant - spring[0].instant, 2 * 3_600_000_000, "the 23-hour day skips 02:00")
        let fall = TimeAxis(zone: paris, from: day(2025, 10, 26), to: day(2025, 10, 28)).ticks(maxTicks: 3)
        XCTAssertEqual(fall.map(\.label), ["26 Oct", "27 Oct"])
        XCTAssertEqual(fall[1].instant - fall[0].instant, 25 * 3_600_000_000, "the fall-back day has 25 hours")
        let kathmandu = try TimeZoneRules.named("Asia/Kathmandu")
        let newYear = ISO8601.days(year: 2025, month: 1, day: 1) * 86_400_000_000
        let k = TimeAxis(zone: kathmandu, from: newYear, to: newYear + 86_400_000_000).ticks(maxTicks: 5)
        XCTAssertEqual(k.first?.label, "06:00")
        XCTAssertEqual(k.first.map { ($0.instant - newYear) / 60_000_000 }, 15, "local 06:00 is 00:15 UTC at +05:45")
    }

    func testValueAxisTicksAreRoundAndCoverTheData() {
        let a = ValueAxis(low: 43, high: 187)
        XCTAssertEqual(a.ticks, [0, 50, 100, 150, 200])
        XCTAssertEqual(ValueAxis(low: 61.5, high: 64.2).ticks, [61, 62, 63, 64, 65])
        XCTAssertEqual(ValueAxis(low: 0.12, high: 0.47).label(0.2), "0.2")
        XCTAssertEqual(ValueAxis(low: 0, high: 24_000).label(20_000), "20,000")
        XCTAssertGreaterThan(ValueAxis(low: 5, high: 5).ticks.count, 1, "a flat series still gets an axis")
    }

    func testPNGHasTheSizeAskedForAndReplacesOnlyItsOwnFiles() throws {
        let store = try generatedStore("plot-png", days: 3)
        defer { store.cleanup() }
        let out = store.path + "/hr.png"
        let args = ["plot", "HeartRate", "--store", store.path, "--out", out, "--width", "600", "--height", "300"]
        let r = try tsdbShell(args)
        XCTAssertEqual(r.status, 0, r.stderr)
        let png = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        func be32(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        XCTAssertEqual([be32(16), be32(20)], [1200, 600], "IHDR: twice the CSS size")
        XCTAssertEqual(try tsdbShell(args).status, 0, "a file tsdb plot wrote is replaced")

        store.write("my own picture", to: "mine.png")
        let refused = try tsdbShell(args.dropLast(4) + ["--out", store.path + "/mine.png"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("not written by tsdb plot"), refused.stderr)
        XCTAssertEqual(try String(contentsOfFile: store.path + "/mine.png", encoding: .utf8), "my own picture")
    }

    /// `tsdb-png`, which `tsdb plot` runs for a PNG, says what is wrong with its input and fails.
    func testPNGHelperRefusesWhatIsNotAChart() throws {
        let helper = FileSystem.parentDirectory(CommandLineTests.executable) + "/tsdb-png"
        let notSVG = try runProcess("/bin/bash", ["-c", "printf 'not an svg' | \"$0\" 600 300", helper])
        XCTAssertEqual(notSVG.status, 1)
        XCTAssertTrue(notSVG.stderr.contains("librsvg could not read the chart's SVG"), notSVG.stderr)
        XCTAssertTrue(notSVG.stdout.isEmpty)
        let noSize = try runProcess(helper, ["600"])
        XCTAssertEqual(noSize.status, 1)
        XCTAssertTrue(noSize.stderr.contains("usage: tsdb-png WIDTH HEIGHT"), noSize.stderr)
    }

    func testThemesAndEscapedText() throws {
        let store = try generatedStore("plot-theme", days: 2)
        defer { store.cleanup() }
        let dark = try tsdbShell(["plot", "HeartRate", "--store", store.path, "--theme", "dark"])
        XCTAssertTrue(dark.stdout.contains(ChartStyle.dark.background))
        XCTAssertFalse(dark.stdout.contains("prefers-color-scheme"))
        let auto = try tsdbShell(["plot", "HeartRate", "--store", store.path])
        XCTAssertTrue(auto.stdout.contains("@media (prefers-color-scheme:dark)"))
        XCTAssertEqual(SVGDocument.escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;\u{FFFD}")
        let bad = try tsdbShell(["plot", "HeartRate", "--store", store.path, "--out", store.path + "/x.jpg"])
        XCTAssertEqual(bad.status, 64)
    }
}
