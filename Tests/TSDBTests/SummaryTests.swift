import Foundation
import Testing

@testable import TSDB

/// `tsdb summary` (issue 12): daily figures equal those of the other commands and an independent
/// calculation; every output format carries the same figures; --out never replaces a stranger's file.
@Suite(.serialized) struct SummaryTests {
    static let paris = "Europe/Paris"

    @Test func dailyFiguresEqualQuerySleepWorkoutsAndABruteForceReference() throws {
        let folder = TemporaryFolder("summary")
        defer { folder.cleanup() }
        try generate(folder.path, days: 12, seed: 21, edgeCases: false, start: "2025-03-20")  // across the DST change
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let store = try Store(at: folder.path)
        var o = AggregateOptions()
        o.zone = try TimeZoneRules.named(Self.paris)
        let days = try store.dailySummaries(options: o)
        #expect(days.count >= 12)
        // Heart rate per local day, computed with Foundation's calendar from the raw files.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: Self.paris)!
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "yyyy-MM-dd"
        var heart: [String: [Double]] = [:]
        var workouts: [String: Int] = [:]
        for s in try rawSampleSet(folder.path + "/raw").keys {
            let day = formatter.string(from: Date(timeIntervalSince1970: Double(s.start.microseconds) / 1e6))
            if s.type == "HKQuantityTypeIdentifierHeartRate", let v = s.value.doubleValue {
                heart[day, default: []].append(v)
            }
            if s.type == "HKWorkoutTypeIdentifier" { workouts[day, default: 0] += 1 }
        }
        var steps = o
        steps.bucket = .calendar(.day)
        let stepRows = try store.aggregate("HKQuantityTypeIdentifierStepCount", options: steps).rows
        let nights = try store.sleepNights(options: o)
        for day in days {
            if case .group(let hr)? = day["heart_rate"], let values = heart[day.date] {
                let g = Dictionary(uniqueKeysWithValues: hr.map { ($0.key, $0.value) })
                #expect(g["min"] == .number(values.min()!) && g["max"] == .number(values.max()!), "\(day.date)")
                if case .number(let mean)? = g["mean"] {
                    #expect(abs(mean - values.reduce(0, +) / Double(values.count)) < 1e-9, "\(day.date)")
                }
            } else {
                #expect(heart[day.date] == nil && day["heart_rate"] == nil, "\(day.date)")
            }
            let row = stepRows.first { localTimestamp($0.start, o.zone).hasPrefix(day.date) }
            #expect(day["steps"] == row.flatMap { $0.values[.sum] }.map { .number($0) }, "\(day.date)")
            let night = nights.first { $0.date == day.date }
            if case .group(let s)? = day["sleep"], let night {
                #expect(s.first { $0.key == "asleep_min" }?.value == .number(night.asleepSeconds / 60))
            } else {
                #expect(night == nil && day["sleep"] == nil, "\(day.date)")
            }
            if case .list(let list)? = day["workouts"] {
                #expect(list.count == workouts[day.date], "\(day.date)")
            } else {
                #expect(workouts[day.date] == nil, "\(day.date)")
            }
        }
    }

    @Test func markdownFrontMatterIsYAMLWithTheJSONFigures() throws {
        let store = try generatedStore("summary-yaml", days: 5)
        defer { store.cleanup() }
        let args = ["summary", "--range", "2025-03-02..2025-03-04", "--tz", Self.paris, "--store", store.path]
        let markdown = try tsdbShell(args)
        let json = try tsdbShell(args + ["--format", "json"])
        #expect(markdown.status == 0 && json.status == 0)
        // PyYAML reads each note's front matter; it must hold exactly the JSON figures.
        let script = """
            import sys, json, yaml
            docs = sys.stdin.read().split("---\\n")[1::2]
            out = []
            for d in docs:
                y = yaml.safe_load(d)
                assert y.pop("generator") == "tsdb summary"
                y["date"] = str(y["date"])
                out.append(y)
            print(json.dumps(out))
            """
        let folder = TemporaryFolder("yaml")
        defer { folder.cleanup() }
        folder.write(markdown.stdout, to: "notes.md")
        let parsed = try runProcess("/bin/sh", ["-c", "python3 -c '\(script)' < \(folder.path)/notes.md"])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let fromYAML = try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? NSArray
        let fromJSON = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? NSArray
        #expect(fromYAML != nil && fromYAML == fromJSON && fromJSON?.count == 3)
        let csv = try tsdbShell(args + ["--format", "csv"])
        #expect(csv.stdout.split(separator: "\n").count == 4 && csv.stdout.hasPrefix("date,steps,"))
    }

    @Test func outWritesChangedDaysOnlyAndNeverAStrangersFile() throws {
        let store = try generatedStore("summary-out", days: 4)
        defer { store.cleanup() }
        let notes = TemporaryFolder("notes")
        defer { notes.cleanup() }
        let args = ["summary", "--tz", Self.paris, "--out", notes.path, "--store", store.path]
        let first = try tsdbShell(args)
        let count = Int(first.stdout.prefix { $0.isNumber }) ?? 0
        #expect(
            first.status == 0 && count >= 4 && first.stdout.hasPrefix("\(count) days written, 0 unchanged, 0 skipped"))
        let path = notes.path + "/2025/03/2025-03-02.md"
        let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let again = try tsdbShell(args)
        #expect(again.stdout.hasPrefix("0 days written, \(count) unchanged"))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == before)
        // The person's own note at a day's path is never replaced without --force.
        notes.write("my own note", to: "2025/03/2025-03-02.md")
        let skipped = try tsdbShell(args)
        #expect(skipped.status == 2 && skipped.stderr.contains("2025-03-02.md was not written by tsdb summary"))
        #expect(String(decoding: sha(path), as: UTF8.self) == "my own note")
        #expect(try tsdbShell(args + ["--force"]).stdout.hasPrefix("1 day written, \(count - 1) unchanged"))
        // New data changes only the days it touches.
        try generate(store.path + "/more", days: 1, seed: 11, edgeCases: false, start: "2025-03-05")
        try FileManager.default.moveItem(
            atPath: store.path + "/more/raw/2025/03/2025-03-05.json",
            toPath: store.path + "/raw/2025/03/2025-03-05.json")
        _ = try tsdbShell(["compact", store.path])
        let update = try tsdbShell(args)
        #expect(update.status == 0 && !update.stdout.hasPrefix("0 days written"), "\(update.stdout)")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date != before)
        #expect(FileManager.default.fileExists(atPath: notes.path + "/2025/03/2025-03-05.md"))
    }
}

@Suite struct ReportTests {
    @Test(arguments: [BucketSpec.CalendarUnit.week, .month])
    func periodFiguresAndChangesEqualTheQueryPaths(unit: BucketSpec.CalendarUnit) throws {
        let folder = TemporaryFolder("report")
        defer { folder.cleanup() }
        try generate(folder.path, days: 70, seed: 4, edgeCases: false, start: "2025-02-10")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let store = try Store(at: folder.path)
        var o = AggregateOptions()
        o.zone = try TimeZoneRules.named("Europe/Paris")
        let lines = try store.periodReport(unit, options: o)
        var q = o
        q.bucket = .calendar(unit)
        q.statistics = [.sum]
        let steps = try store.aggregate("HKQuantityTypeIdentifierStepCount", options: q).rows
        q.statistics = [.mean, .min, .max]
        let heart = try store.aggregate("HKQuantityTypeIdentifierHeartRate", options: q).rows
        let nights = try store.sleepNights(options: o)
        let workouts = try store.workouts(from: .min, to: .max)
        let walker = BucketWalker(spec: q.bucket, zone: o.zone, from: 0, to: 1)
        var previous: [String: Double] = [:]
        for line in lines {
            switch TypeNames.shortName(line.type) {
            case "StepCount":
                #expect(line.statistic == "sum" && line.value == steps.first { $0.start == line.start }?.values[.sum])
            case "HeartRate":
                let row = heart.first { $0.start == line.start }
                #expect(
                    line.value == row?.values[.mean] && line.minimum == row?.values[.min]
                        && line.maximum == row?.values[.max])
            case "SleepAnalysis":
                let asleep = nights.filter { walker.bucket(containing: $0.wakeTime).start == line.start }.map {
                    $0.asleepSeconds / 60
                }
                #expect(
                    abs(line.value - asleep.reduce(0, +) / Double(asleep.count)) < 1e-9
                        && line.detail == Double(asleep.count))
            case "Workout":
                #expect(
                    line.value
                        == Double(workouts.filter { walker.bucket(containing: $0.start).start == line.start }.count))
            default: break
            }
            // The change is against the period right before, when it had data.
            if let p = line.previous { #expect(p == previous[line.type] && line.change == line.value - p) }
            previous[line.type] = line.value
        }
        #expect(Set(lines.map(\.start)).count >= (unit == .week ? 10 : 3))
        let cli = try tsdbShell([
            "report", "--period", unit.rawValue, "--tz", "Europe/Paris", "--format", "csv",
            "--store", folder.path,
        ])
        #expect(cli.status == 0 && cli.stdout.split(separator: "\n").count == lines.count + 1)
    }
}
