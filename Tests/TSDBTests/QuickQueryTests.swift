import TSDB
import Testing

@testable import tsdb

/// `tsdb query` read by hand (``QuickQuery``) asks for exactly what ArgumentParser reads from the
/// same words, and anything not plain is left to ArgumentParser.
@Suite struct QuickQueryTests {
    @Test(arguments: [
        ["HeartRate"],
        ["HeartRate", "--range", "2025-03", "--bucket", "day"],
        ["--bucket=hour", "HeartRate", "--tz", "Europe/Paris", "--stats", "p50,p95", "--format", "csv", "--timings"],
        ["HKQuantityTypeIdentifierStepCount", "--store", "/tmp/somewhere", "--range=..2025-03", "--format=ndjson"],
        [
            "StepCount", "--week-start", "sunday", "--assign", "start", "--dedupe", "none", "--priority",
            "Watch, iPhone", "--fill", "--source", "Watch", "--verbose", "--bucket", "week",
        ],
        ["Sleep", "--range", "2025-03-01T08:00+01:00..2025-03-02", "--tz", "+05:30", "--format", "json"],
        ["StepCount", "--bucket", "day", "--threads", "1"], ["HeartRate", "--stats", "count", "--threads=02"],
    ])
    func plainArgumentsAskForWhatArgumentParserReads(arguments: [String]) throws {
        let quick = try #require(QuickQuery.parse(arguments), "\(arguments) is plain")
        #expect(quick == (try Query.parse(arguments)).request)
    }

    @Test(arguments: [
        [], ["--help"], ["HeartRate", "-h"], ["HeartRate", "--help"], ["HeartRate", "--bucket"],
        ["HeartRate", "--bucket", "day", "--bucket", "hour"], ["HeartRate", "--tz", "-05:00"],
        ["HeartRate", "--colour", "red"], ["HeartRate", "StepCount"], ["HeartRate", "--fill=yes"],
        ["HeartRate", "--range", ""], ["HeartRate", "--", "--bucket"], ["HeartRate", "--stats", "--fill"],
    ])
    func anythingElseIsLeftToArgumentParser(arguments: [String]) {
        #expect(QuickQuery.parse(arguments) == nil, "\(arguments)")
    }

    /// `--threads` reaches the aggregate's options, and anything but a whole number from 1 up is a
    /// usage error that quotes it.
    @Test func threadsReachTheAggregateAndAreChecked() throws {
        let heartRate = "HKQuantityTypeIdentifierHeartRate"
        let given = try #require(QuickQuery.parse(["HeartRate", "--bucket", "day", "--threads", "1"]))
        #expect(try given.aggregateOptions(heartRate, .utc).threads == 1)
        let unsaid = try #require(QuickQuery.parse(["HeartRate", "--bucket", "day"]))
        #expect(try unsaid.aggregateOptions(heartRate, .utc).threads == AggregateOptions().threads)
        for bad in ["0", "two", "1.5", "99999999999999999999"] {
            let request = try #require(QuickQuery.parse(["HeartRate", "--bucket", "day", "--threads", bad]))
            let error = #expect(throws: (any Error).self) { try request.aggregateOptions(heartRate, .utc) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("at least 1; found \"\(bad)\""), "\(bad)")
        }
    }
}

/// `tsdb compact` read by hand (``QuickCompact``): the same request as ArgumentParser's, or nil.
@Suite struct QuickCompactTests {
    @Test(arguments: [
        [], ["/data/apple-health"], ["--store", "/data"], ["--store=/data", "--rebuild", "--verbose"],
        ["--no-wait", "imports"], ["--rebuild", "x", "--no-wait", "--verbose"], ["--threads", "2"],
        ["--threads=1", "--store", "/data"], ["--threads", "0"], ["--threads", "+3"],
    ])
    func plainArgumentsAskForWhatArgumentParserReads(arguments: [String]) throws {
        let quick = try #require(QuickCompact.parse(arguments), "\(arguments) is plain")
        #expect(quick == (try Compact.parse(arguments)).request)
    }

    @Test(arguments: [
        ["--help"], ["-h"], ["a", "b"], ["--codec", "zstd"], ["--threads", "two"], ["--threads", "1.5"],
        ["--threads", "-1"], ["--threads", "99999999999999999999"], ["--threads", "2", "--threads", "2"],
        ["--rebuild", "--rebuild"], ["--store"], ["--store", "--rebuild"], ["--rebuild=yes"], ["--zstd-level=3"], [""],
    ])
    func anythingElseIsLeftToArgumentParser(arguments: [String]) {
        #expect(QuickCompact.parse(arguments) == nil, "\(arguments)")
    }
}

/// `tsdb types`, `stats` and `latest` read by hand (``QuickLookup``): the same request as
/// ArgumentParser's, or nil.
@Suite struct QuickLookupTests {
    @Test(
        arguments: [
            ("types", []), ("types", ["--store", "/data"]), ("types", ["--tz=Europe/Paris", "--store=x"]),
            ("stats", []), ("stats", ["--format", "csv"]),
            ("stats", ["--tz", "UTC", "--format=table", "--store", "s"]),
            ("latest", []), ("latest", ["HeartRate", "steps"]),
            ("latest", ["--format", "json", "BodyMass", "--tz", "UTC"]),
        ] as [(String, [String])])
    func plainArgumentsAskForWhatArgumentParserReads(command: String, arguments: [String]) throws {
        let quick = try #require(QuickLookup.parse(command, arguments), "\(command) \(arguments) is plain")
        let parsed: LookupRequest =
            switch command {
            case "types": try Types.parse(arguments).request
            case "stats": try Stats.parse(arguments).request
            default: try Latest.parse(arguments).request
            }
        #expect(quick == parsed)
    }

    @Test(
        arguments: [
            ("types", ["--help"]), ("types", ["-h"]), ("types", ["--format", "csv"]), ("types", ["HeartRate"]),
            ("stats", ["x"]), ("stats", ["--format"]), ("stats", ["--tz", "-05:00"]),
            ("stats", ["--store", "a", "--store", "b"]),
            ("latest", ["--help"]), ("latest", ["HeartRate", "--colour", "red"]), ("latest", ["--format="]),
        ] as [(String, [String])])
    func anythingElseIsLeftToArgumentParser(command: String, arguments: [String]) {
        #expect(QuickLookup.parse(command, arguments) == nil, "\(command) \(arguments)")
    }
}

/// `tsdb sleep`, `workouts` and `report` read by hand (``QuickReport``): the same request as
/// ArgumentParser's, or nil.
@Suite struct QuickReportTests {
    @Test(arguments: [
        [], ["--range", "2025-03", "--tz", "Europe/Paris"], ["--format=csv", "--priority", "iPhone, Watch"],
        ["--source", "watch", "--store", "/data", "--verbose"], ["--threads", "1", "--range", "2025"],
    ])
    func sleepAsksForWhatArgumentParserReads(arguments: [String]) throws {
        let quick = try #require(QuickReport.sleep(arguments), "\(arguments) is plain")
        #expect(quick == (try SleepCommand.parse(arguments)).request)
    }

    @Test(arguments: [
        [], ["--with", "HeartRate", "--range", "2025-03"], ["--route=2025-03-01T07:57", "--format", "geojson"],
        ["--verbose", "--with", "steps", "--store", "x", "--tz", "UTC"],
    ])
    func workoutsAskForWhatArgumentParserReads(arguments: [String]) throws {
        let quick = try #require(QuickReport.workouts(arguments), "\(arguments) is plain")
        #expect(quick == (try Workouts.parse(arguments)).request)
    }

    @Test(arguments: [["--help"], ["x"], ["--with"], ["--priority", "watch"], ["--route", "a", "--route", "b"]])
    func workoutsLeaveAnythingElseToArgumentParser(arguments: [String]) {
        #expect(QuickReport.workouts(arguments) == nil, "\(arguments)")
    }

    @Test(arguments: [
        [], ["--period", "month", "--range", "2025"], ["--week-start=sunday", "--format", "json", "--tz", "UTC"],
        ["--verbose", "--store", "x", "--period=week"], ["--threads=2", "--period", "month"],
    ])
    func reportAsksForWhatArgumentParserReads(arguments: [String]) throws {
        let quick = try #require(QuickReport.report(arguments), "\(arguments) is plain")
        #expect(quick == (try Report.parse(arguments)).request)
    }

    @Test(arguments: [
        ["--help"], ["-h"], ["x"], ["--period", "month"], ["--range"], ["--tz", "-05:00"], ["--verbose=1"],
        ["--range", "2025", "--range", "2024"], ["--with", "HeartRate"],
    ])
    func sleepLeavesAnythingElseToArgumentParser(arguments: [String]) {
        #expect(QuickReport.sleep(arguments) == nil, "\(arguments)")
    }

    @Test(arguments: [["--help"], ["x"], ["--priority", "watch"], ["--source", "w"], ["--period"], ["--week-start="]])
    func reportLeavesAnythingElseToArgumentParser(arguments: [String]) {
        #expect(QuickReport.report(arguments) == nil, "\(arguments)")
    }

    /// `--threads` reaches the options of sleep's nights, report's periods and summary's days, and
    /// anything but a whole number from 1 up is a usage error that quotes it.
    @Test func threadsReachSleepReportAndSummary() throws {
        let sleep = try #require(QuickReport.sleep(["--threads", "1"]))
        #expect(try sleep.options(.utc).threads == 1)
        let report = try #require(QuickReport.report(["--threads", "1"]))
        #expect(try report.options(.utc).threads == 1)
        let summary = try #require(QuickSummary.parse(["--threads", "1"]))
        #expect(try summary.options().threads == 1)
        let unsaid = try #require(QuickReport.sleep([]))
        #expect(try unsaid.options(.utc).threads == AggregateOptions().threads)
        for bad in ["0", "many"] {
            let requests: [() throws -> AggregateOptions] = [
                { try #require(QuickReport.sleep(["--threads", bad])).options(.utc) },
                { try #require(QuickReport.report(["--threads", bad])).options(.utc) },
                { try #require(QuickSummary.parse(["--threads", bad])).options() },
            ]
            for options in requests {
                let error = #expect(throws: (any Error).self) { try options() }
                #expect("\(error.map { "\($0)" } ?? "")".contains("at least 1; found \"\(bad)\""), "\(bad)")
            }
        }
    }
}

/// `tsdb summary` read by hand (``QuickSummary``): the same request as ArgumentParser's, or nil.
@Suite struct QuickSummaryTests {
    @Test(arguments: [
        [], ["--range", "2025-03-01"], ["--format=json", "--tz", "Europe/Paris", "--store", "s"],
        ["--out", "notes", "--pattern", "{yyyy}-{MM}-{dd}", "--force"], ["--threads", "1"],
    ])
    func plainArgumentsAskForWhatArgumentParserReads(arguments: [String]) throws {
        let quick = try #require(QuickSummary.parse(arguments), "\(arguments) is plain")
        #expect(quick == (try Summary.parse(arguments)).request)
    }

    @Test(arguments: [
        ["--help"], ["x"], ["--out"], ["--force=yes"], ["--verbose"], ["--range", "2025", "--range", "2024"],
    ])
    func anythingElseIsLeftToArgumentParser(arguments: [String]) {
        #expect(QuickSummary.parse(arguments) == nil, "\(arguments)")
    }
}
