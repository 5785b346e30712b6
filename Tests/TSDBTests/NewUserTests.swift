import Foundation
import Testing

@testable import TSDB

/// What a new user hit on the first release (issue 9), one test per failure, through the real
/// `tsdb` binary.
@Suite struct NewUserTests {
    // MARK: Data loss and crashes

    @Test func generateAndDemoNeverWriteIntoARawFolderThatHoldsFiles() throws {
        let folder = TemporaryFolder("own")
        defer { folder.cleanup() }
        folder.write(#"{"date":"2025-01-01","samples":[]}"#, to: "raw/2025/01/2025-01-01.json")
        folder.write("my notes", to: "raw/README.md")
        let before = snapshot(folder.path)
        let gen = try tsdbShell(["generate", folder.path, "--days", "3", "--start", "2025-01-01"])
        #expect(
            gen.status == 1 && gen.stderr.contains("already holds files") && gen.stderr.contains(folder.path + "/raw"))
        let demo = try tsdbShell(["demo", "--dir", folder.path, "--days", "3"])
        #expect(demo.status == 1 && demo.stderr.contains("already holds files"))
        let after = snapshot(folder.path)
        #expect(Set(after.keys) == Set(before.keys))
        for (path, (data, date)) in before { #expect(after[path]?.0 == data && after[path]?.1 == date, "\(path)") }
        // A new or empty folder is fine.
        let fresh = try tsdbShell(["generate", folder.path + "/other", "--days", "2"])
        #expect(fresh.status == 0)
    }

    @Test func exportToAFolderThatHoldsFilesIsRefused() throws {
        let store = try generatedStore("export-target", days: 2)
        defer { store.cleanup() }
        let target = TemporaryFolder("target")
        defer { target.cleanup() }
        target.write("keep me", to: "2025/03/2025-03-01.json")
        let r = try tsdbShell(["export", "--out", target.path, "--store", store.path])
        #expect(r.status == 1 && r.stderr.contains("already holds files"))
        #expect(String(decoding: sha(target.path + "/2025/03/2025-03-01.json"), as: UTF8.self) == "keep me")
    }

    static let rangeForms = [
        "..", "..2025-03", "2025-03-04..", "2025-03", "2025-03-04", "2025", "2025-03-04..2025-03-05",
        "2025-03-04T08:00..2025-03-04T12:00", "2025-03-04T08:00+01:00..2025-03-04T12:00Z",
        "2025-03-04T08:00Z..", "2030", "..1999",
    ]
    static let commands: [[String]] = [
        ["query", "HeartRate"], ["query", "HeartRate", "--bucket", "day"], ["query", "Steps", "--bucket", "week"],
        ["query", "Sleep", "--bucket", "day"], ["query", "HeartRate", "--stats", "p50"], ["sleep"], ["workouts"],
        ["workouts", "--with", "Steps"], ["export", "--type", "HeartRate", "--format", "csv"],
        ["summary"], ["summary", "--format", "csv"], ["report", "--period", "week"], ["report", "--period", "month"],
    ]

    @Test func everyCommandAcceptsEveryRangeForm() throws {
        let store = try generatedStore("ranges", days: 6)
        defer { store.cleanup() }
        let empty = TemporaryFolder("empty")
        defer { empty.cleanup() }
        try FileManager.default.createDirectory(atPath: empty.path + "/raw", withIntermediateDirectories: true)
        #expect(try tsdbShell(["compact", empty.path]).status == 0)
        for command in Self.commands {
            for range in Self.rangeForms {
                let r = try tsdbShell(command + ["--range", range, "--tz", "Europe/Paris", "--store", store.path])
                #expect(r.status == 0, "\(command) --range \(range): \(r.stderr)")
                // The empty store: no crash; a type it does not have is a plain error.
                let e = try tsdbShell(command + ["--range", range, "--store", empty.path])
                #expect(
                    e.status == 0 || (e.status == 1 && e.stderr.contains("no samples yet")),
                    "\(command) \(range): \(e.stderr)")
            }
        }
    }

    @Test(arguments: [
        ["export"], ["query", "HeartRate"], ["query", "HeartRate", "--format", "csv"],
        ["query", "HeartRate", "--bucket", "hour"], ["types"], ["stats"], ["sleep"], ["workouts"],
    ])
    func failedWritesToStdoutAreErrors(command: [String]) throws {
        let store = try generatedStore("full", days: 2)
        defer { store.cleanup() }
        let args = command + ["--store", store.path]
        let full = try tsdbShell(args, "> /dev/full")
        #expect(
            full.status == 1 && full.stderr.contains("cannot write the output: No space left on device"),
            "\(full.stderr)")
        let closed = try tsdbShell(args, ">&-")
        #expect(closed.status == 1 && closed.stderr.contains("cannot write the output"), "\(closed.stderr)")
        // A reader that goes away ends the command quietly.
        let head = try tsdbShell(args, "| head -c 1 > /dev/null")
        #expect(head.status == 0 && head.stderr.isEmpty, "\(head.status) \(head.stderr)")
    }

    /// `tsdb --version` goes through the same output as every command: a failed write is an error.
    @Test func versionIsWrittenLikeAnyOutput() throws {
        let plain = try tsdbShell(["--version"])
        let parts = plain.stdout.dropLast().split(separator: ".", omittingEmptySubsequences: false)
        #expect(plain.status == 0 && plain.stdout.hasSuffix("\n") && parts.count == 3, "\(plain.stdout)")
        #expect(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, "\(plain.stdout)")
        let full = try tsdbShell(["--version"], "> /dev/full")
        #expect(
            full.status == 1 && full.stderr.contains("cannot write the output: No space left on device"),
            "\(full.status) \(full.stderr)")
    }

    @Test func demoWritesItsStepsInOrderAndNoticesAFullDisk() throws {
        let folder = TemporaryFolder("demo-order")
        defer { folder.cleanup() }
        let r = try tsdbShell(["demo", "--dir", folder.path + "/a", "--days", "3"])
        let steps = ["1. generating", "2. compacting", "3. what is stored", "type ", "4. queries", "5. tsdb verify"]
        let positions = steps.map { r.stdout.range(of: $0)?.lowerBound }
        #expect(r.status == 0 && positions.allSatisfy { $0 != nil }, "\(r.stdout)")
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $0! < $1! }, "\(r.stdout)")
        let full = try tsdbShell(["demo", "--dir", folder.path + "/b", "--days", "3"], "> /dev/full")
        #expect(full.status == 1 && full.stderr.contains("cannot write the output"))
    }

    @Test func secondBucketsOverWeeksStreamInBoundedMemory() throws {
        let store = try generatedStore("stream", days: 12)
        defer { store.cleanup() }
        // 1,036,800 one-second rows: the previous engine held every bucket's accumulator (~200 MB).
        let r = try tsdbShell(
            [
                "query", "HeartRate", "--range", "2025-03-01..2025-03-12", "--bucket", "1s", "--fill",
                "--format", "csv", "--timings", "--tz", "UTC", "--store", store.path,
            ], "| wc -l")
        #expect(r.status == 0 && r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1036801", "\(r.stderr)")
        let peak = r.stderr.split(separator: " ").firstIndex(of: "peak").map {
            Double(r.stderr.split(separator: " ")[$0 + 1]) ?? 0
        }
        #expect(peak != nil && peak! <= 64, "peak memory \(peak ?? -1) MB")
    }

    // MARK: Silent or misleading

    @Test func tablesShowControlCharactersEscaped() throws {
        let folder = TemporaryFolder("escape")
        defer { folder.cleanup() }
        folder.write(
            #"{"samples":[{"type":"HKQuantityTypeIdentifierBodyMass","start":"2025-03-01T08:00:00Z","#
                + #""end":"2025-03-01T08:00:00Z","value":70,"unit":"kg","source":"Scale\u001b]0;pwned\u0007 | x"}]}"#,
            to: "raw/2025/03/2025-03-01.json")
        _ = try tsdbShell(["compact", folder.path])
        for format in ["table", "markdown"] {
            let r = try tsdbShell(
                ["query", "BodyMass", "--store", folder.path] + (format == "table" ? [] : ["--stats", "count"]))
            #expect(r.status == 0 && !r.stdout.contains("\u{1B}") && !r.stdout.contains("\u{07}"))
            if format == "table" { #expect(r.stdout.contains(#"Scale\u{1B}]0;pwned\u{7} | x"#)) }
        }
        let json = try tsdbShell(["workouts", "--format", "json", "--store", folder.path])
        #expect(json.status == 0)
    }

    /// `tsdb query` is parsed by its command alone when it can be; whatever that parse refuses
    /// (unknown options, a missing type, help) must read exactly as from the whole command tree.
    @Test func queryParsedAloneStillExplainsItsMistakesAsTheCommandTreeDoes() throws {
        let store = try generatedStore("quick-query", days: 2)
        defer { store.cleanup() }
        let bogus = try tsdbShell(["query", "HeartRate", "--bogus", "--store", store.path])
        #expect(bogus.status == 64 && bogus.stderr.hasPrefix("Error: Unknown option '--bogus'\nUsage: tsdb query"))
        let missing = try tsdbShell(["query", "--store", store.path])
        #expect(missing.status == 64 && missing.stderr.hasPrefix("Error: Missing expected argument '<type>'"))
        let help = try tsdbShell(["query", "--help"])
        #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: Samples of one type"))
        #expect(help.stdout.contains("USAGE: tsdb query"))
        let good = try tsdbShell(["query", "HeartRate", "--bucket", "day", "--format", "csv", "--store", store.path])
        #expect(good.status == 0 && good.stdout.hasPrefix("start,end,count,min,max,mean\n"))
    }

    @Test func optionsThatWouldDoNothingAreUsageErrors() throws {
        let store = try generatedStore("options", days: 2)
        defer { store.cleanup() }
        let cases: [([String], String)] = [
            (["query", "HeartRate", "--fill"], "--fill applies to aggregates"),
            (["query", "Steps", "--dedupe", "none"], "--dedupe applies to aggregates"),
            (["query", "Sleep", "--bucket", "day", "--stats", "mean"], "category type"),
            (["compact", "--codec", "zstd"], "add --rebuild"),
            (["export", "--out", store.path + "/out", "--format", "csv"], "does not apply with --out"),
        ]
        for (args, message) in cases {
            let r = try tsdbShell(args + ["--store", store.path])
            #expect(
                r.status == 64 && r.stderr.contains(message) && r.stderr.contains("Usage: tsdb \(args[0])"),
                "\(args): \(r.stderr)")
        }
        // The rebuild makes the codec apply; count works on category types.
        #expect(try tsdbShell(["compact", "--codec", "zstd", "--rebuild", "--store", store.path]).status == 0)
        #expect(
            try tsdbShell(["query", "Sleep", "--bucket", "day", "--stats", "count", "--store", store.path]).status == 0)
    }

    @Test func plainVerifyReportsABadDayFileAsBad() throws {
        let store = try generatedStore("verify-bad", days: 2)
        defer { store.cleanup() }
        store.write(
            #"{"samples":[{"type":"T","start":"2025-03-05T10:00:00Z","end":"2025-03-05T09:00:00Z"}]}"#,
            to: "raw/2025/03/2025-03-05.json")
        #expect(try tsdbShell(["compact", store.path]).status == 2)
        let r = try tsdbShell(["verify", "--store", store.path])
        #expect(r.status == 1 && r.stderr.contains("raw file not compacted") && r.stderr.contains("2025-03-05.json"))
        #expect(!r.stdout.contains("added"))
    }

    @Test func messagesPointTheRightWay() throws {
        let store = try generatedStore("messages", days: 2)
        defer { store.cleanup() }
        store.write("PK", to: "export.zip")
        let zip = try tsdbShell(["compact", store.path + "/export.zip"])
        #expect(zip.status == 1 && zip.stderr.contains("is a file, not a folder") && zip.stderr.contains("export.zip"))
        try FileManager.default.createDirectory(
            atPath: store.path + "/raw/2025/03/2025-03-09.json", withIntermediateDirectories: true)
        let folderLikeFile = try tsdbShell(["compact", store.path])
        #expect(folderLikeFile.status == 2 && folderLikeFile.stderr.contains("is a folder named like a day file"))
        let region = try tsdbShell(["types", "--tz", "Europe", "--store", store.path])
        #expect(
            region.status == 1 && region.stderr.contains("Europe is a region") && region.stderr.contains("Europe/Paris")
        )
        let one = TemporaryFolder("one")
        defer { one.cleanup() }
        one.write(
            #"{"samples":[{"type":"HKQuantityTypeIdentifierBodyMass","start":"2025-03-01T08:00:00Z","#
                + #""end":"2025-03-01T08:00:00Z","value":70}]}"#,
            to: "raw/2025/03/2025-03-01.json")
        let single = try tsdbShell(["compact", one.path])
        #expect(
            single.stdout.contains("1 sample, 1 type, 1 segment in 1 file,")
                && single.stdout.contains("compacted 1 day file "))
        #expect(!single.stdout.contains("across day files stored once"))
        let empty = TemporaryFolder("empty-store")
        defer { empty.cleanup() }
        try FileManager.default.createDirectory(atPath: empty.path + "/raw", withIntermediateDirectories: true)
        _ = try tsdbShell(["compact", empty.path])
        let none = try tsdbShell(["query", "HeartRate", "--store", empty.path])
        #expect(none.status == 1 && none.stderr.contains("the store holds no samples yet"))
    }

    @Test func suggestionsCoverShortNamesSubcommandsAndTypesNotStored() throws {
        let store = try generatedStore("names", days: 2)
        defer { store.cleanup() }
        let sub = try tsdbShell(["qurey"])
        #expect(sub.status == 64 && sub.stderr.contains("did you mean query?"))
        let short = try tsdbShell(["query", "Step", "--store", store.path])
        #expect(
            short.status == 1 && short.stderr.contains("did you mean") && short.stderr.contains("StepCount"),
            "\(short.stderr)")
        let known = try tsdbShell(["query", "BloodGlucose", "--store", store.path])
        #expect(
            known.status == 1 && known.stderr.contains("this store has no BloodGlucose samples")
                && known.stderr.contains("HeartRate"), "\(known.stderr)")
    }

    @Test func namesThatAreNotDayFilesAreIgnored() throws {
        let store = try generatedStore("ignored", days: 2)
        defer { store.cleanup() }
        store.write("notes", to: "raw/README.md")
        store.write("x", to: "raw/.DS_Store")
        store.write("{}", to: "raw/2025/03/2025-03-01.json.bak")
        let r = try tsdbShell(["compact", store.path])
        #expect(r.status == 0 && r.stderr.contains("3 names under raw/ ignored"), "\(r.stderr)")
        let verbose = try tsdbShell(["compact", store.path, "--verbose"])
        #expect(verbose.stderr.contains("ignored (not a day file): \(store.path)/raw/README.md"))
    }

    // MARK: Friction

    @Test func typesAndStatsFollowTheZone() throws {
        let folder = TemporaryFolder("tz-types")
        defer { folder.cleanup() }
        folder.write(
            #"{"samples":[{"type":"HKQuantityTypeIdentifierBodyMass","start":"2025-03-01T23:30:00Z","#
                + #""end":"2025-03-01T23:30:00Z","value":70}]}"#,
            to: "raw/2025/03/2025-03-01.json")
        _ = try tsdbShell(["compact", folder.path])
        for command in ["types", "stats"] {
            let utc = try tsdbShell([command, "--tz", "UTC", "--store", folder.path])
            let paris = try tsdbShell([command, "--tz", "Europe/Paris", "--store", folder.path])
            #expect(utc.stdout.contains("2025-03-01") && !utc.stdout.contains("2025-03-02"))
            #expect(paris.stdout.contains("2025-03-02") && !paris.stdout.contains("2025-03-01 "), "\(paris.stdout)")
        }
    }

    @Test func calendarRangeEndsAreInclusiveAndVerboseShowsTheInstants() throws {
        let store = try generatedStore("inclusive", days: 10)
        defer { store.cleanup() }
        let r = try tsdbShell([
            "query", "HeartRate", "--range", "2025-03-02..2025-03-04", "--bucket", "day", "--tz", "UTC",
            "--format", "csv", "--verbose", "--store", store.path,
        ])
        let days = r.stdout.split(separator: "\n").dropFirst().map { String($0.prefix(10)) }
        #expect(days == ["2025-03-02", "2025-03-03", "2025-03-04"])
        #expect(r.stderr.contains("range: [2025-03-02T00:00:00+00:00, 2025-03-05T00:00:00+00:00) in UTC"))
        let instants = try tsdbShell([
            "query", "HeartRate", "--range", "2025-03-02T00:00Z..2025-03-04T00:00Z", "--bucket", "day",
            "--tz", "UTC", "--format", "csv", "--store", store.path,
        ])
        #expect(instants.stdout.split(separator: "\n").count == 3)
    }

    @Test func invalidTZInTheEnvironmentIsReported() throws {
        let store = try generatedStore("tz-env", days: 2)
        defer { store.cleanup() }
        let r = try tsdbShell(
            ["query", "HeartRate", "--bucket", "day", "--store", store.path], environment: ["TZ": "Mars/Olympus"])
        #expect(
            r.status == 0 && r.stderr.contains("TZ=Mars/Olympus is not a time zone") && r.stderr.contains("using UTC"))
    }

    @Test func smallFrictions() throws {
        let store = try generatedStore("friction", days: 3)
        defer { store.cleanup() }
        // compact with no argument: --store, $TSDB_STORE, then the current folder.
        #expect(try tsdbShell(["compact"], environment: ["TSDB_STORE": store.path]).stdout.contains("up to date"))
        #expect(try tsdbShell(["compact", "--store", store.path]).stdout.contains("up to date"))
        // --version; a usage error shows that subcommand's usage.
        #expect(
            try tsdbShell(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
                .count == 3)
        let usage = try tsdbShell(["sleep", "--format", "yaml", "--store", store.path])
        #expect(usage.status == 64 && usage.stderr.contains("Usage: tsdb sleep"))
        // Tables show whole source names.
        let table = try tsdbShell(["query", "HeartRate", "--range", "2025-03-02", "--store", store.path])
        #expect(table.stdout.contains("com.apple.health.81C3F6A2-5B1E-4C7A-9D2E-3F4A5B6C7D8E / Apple Watch"))
        // Workouts with a cumulative type: the prorated, de-duplicated sum during each.
        let w = try tsdbShell(["workouts", "--with", "Steps", "--format", "csv", "--store", store.path])
        #expect(
            w.status == 0 && w.stdout.hasPrefix("workout,start,duration_min,distance,energy,StepCount_sum\n"),
            "\(w.stdout)")
    }

    @Test func unnamedCategoryValuesAreShownAsValues() throws {
        let folder = TemporaryFolder("category")
        defer { folder.cleanup() }
        folder.write(
            #"{"samples":[{"type":"HKCategoryTypeIdentifierHeadache","start":"2025-03-01T08:00:00Z","#
                + #""end":"2025-03-01T09:00:00Z","value":3}]}"#,
            to: "raw/2025/03/2025-03-01.json")
        _ = try tsdbShell(["compact", folder.path])
        let table = try tsdbShell(["query", "Headache", "--bucket", "day", "--tz", "UTC", "--store", folder.path])
        #expect(table.stdout.contains("value 3 (min)") && table.stdout.contains("60"))
        let csv = try tsdbShell([
            "query", "Headache", "--bucket", "day", "--tz", "UTC", "--format", "csv", "--store", folder.path,
        ])
        #expect(csv.stdout.hasPrefix("start,end,value_3_min\n"))
    }
}
