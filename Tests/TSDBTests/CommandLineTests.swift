import Foundation
import Testing

@testable import TSDB

/// Runs the built `tsdb` executable as a user would, over a generated month.
@Suite(.serialized) struct CommandLineTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `tsdb` built beside the tests; `TSDB_EXECUTABLE` points the tests at another build
    /// (to check that a test fails on an earlier version).
    static let executable: String = {
        if let other = ProcessInfo.processInfo.environment["TSDB_EXECUTABLE"] { return other }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("tsdb").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../.build/debug/tsdb"
        ).standardized.path
    }()

    func tsdb(_ arguments: String..., environment: [String: String] = [:]) throws -> Run {
        try runProcess(Self.executable, arguments, environment: environment)
    }

    /// The summary says how many files hold the segments, and their size once earlier runs' files
    /// hold replaced segments: March's, replaced by the second run, stay in the first run's file
    /// beside February's.
    @Test func theSummaryCountsFilesAndTheirReplacedBytes() throws {
        let folder = TemporaryFolder("cli-files")
        defer { folder.cleanup() }
        func day(_ date: String, _ types: [String]) {
            let samples = types.map {
                #"{"type":"\#($0)","start":"\#(date)T10:00:00Z","end":"\#(date)T10:00:00Z","value":7}"#
            }
            folder.write(
                #"{"date":"\#(date)","samples":[\#(samples.joined(separator: ","))]}"#,
                to: "raw/" + date.prefix(7).replacingOccurrences(of: "-", with: "/") + "/\(date).json")
        }
        day("2025-02-27", ["HR", "Steps"])
        day("2025-03-10", ["HR", "Steps"])
        let first = try tsdb("compact", "--store", folder.path)
        #expect(first.status == 0 && first.stdout.contains("4 segments in 1 file, "), "\(first.stdout)")
        #expect(!first.stdout.contains("of files)"))
        day("2025-03-11", ["HR"])
        let second = try tsdb("compact", "--store", folder.path)
        #expect(second.status == 0 && second.stdout.contains("4 segments in 2 files, "), "\(second.stdout)")
        #expect(second.stdout.contains("of files)"), "\(second.stdout)")
        let manifest = try Manifest.read(at: folder.path + "/tsdb/MANIFEST")
        let live = manifest.segments.reduce(0) { $0 + $1.size }
        let files = manifest.files.reduce(0) { $0 + $1.size }
        #expect(manifest.segments.filter { $0.month == 3 }.allSatisfy { $0.path == "segments/pack.g2.seg" })
        #expect(manifest.segments.filter { $0.month == 2 }.allSatisfy { $0.path == "segments/pack.g1.seg" })
        #expect(files - live > live / 100)
    }

    @Test func generateCompactQueryExport() throws {
        let folder = TemporaryFolder("cli")
        defer { folder.cleanup() }
        let imports = folder.path + "/imports"
        let appleHealth = imports + "/fitness/apple-health"
        let gen = try tsdb(
            "generate", appleHealth, "--days", "31", "--start", "2025-03-01", "--seed", "7", "--edge-cases")
        #expect(gen.status == 0 && gen.stdout.contains("wrote 31 day files"))

        let compact = try tsdb("compact", imports)
        #expect(compact.status == 0, "\(compact.stderr)")
        #expect(compact.stdout.contains("compacted 31 day files"))
        #expect(compact.stdout.contains("bytes/sample\n  skipped:   0 files\n  location:  "), "\(compact.stdout)")

        let raw = try rawSampleSet(appleHealth + "/raw")
        let hrInMarch8 = raw.keys.filter {
            $0.type == "HKQuantityTypeIdentifierHeartRate"
                && $0.start.microseconds >= Timestamp("2025-03-08T00:00:00Z")!.microseconds
                && $0.start.microseconds < Timestamp("2025-03-09T00:00:00Z")!.microseconds
        }

        // ndjson: one parseable line per sample, same samples as the raw files.
        let nd = try tsdb("query", "heartrate", "--range", "2025-03-08", "--format", "ndjson", "--store", appleHealth)
        #expect(nd.status == 0)
        let lines = nd.stdout.split(separator: "\n")
        #expect(lines.count == hrInMarch8.count)
        let wrapped = #"{"samples":["# + lines.joined(separator: ",") + "]}"
        #expect(Set(try samples(ofDayFile: Array(wrapped.utf8))) == Set(hrInMarch8))

        // csv with a header; json parses as an array; the store from TSDB_STORE.
        let csv = try tsdb(
            "query", "HeartRate", "--range", "2025-03-08", "--format", "csv", environment: ["TSDB_STORE": imports])
        #expect(csv.stdout.hasPrefix("type,start,end,value,unit,source,device,metadata\n"))
        #expect(csv.stdout.split(separator: "\n").count == hrInMarch8.count + 1)
        let json = try tsdb(
            "query", "HKQuantityTypeIdentifierHeartRate", "--range", "2025-03-08..2025-03-08", "--format", "json",
            "--store", appleHealth)
        let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(array?.count == hrInMarch8.count)
        let table = try tsdb("query", "Steps", "--range", "2025-03-08", "--store", appleHealth)
        #expect(table.status == 0 && table.stdout.hasPrefix("start"))

        // Aggregates through the binary equal the library's.
        let agg = try tsdb(
            "query", "HeartRate", "--range", "2025-03", "--bucket", "day", "--tz", "Europe/Paris",
            "--stats", "count,mean,p95", "--format", "csv", "--store", appleHealth)
        #expect(agg.status == 0, "\(agg.stderr)")
        var o = AggregateOptions()
        o.bucket = .calendar(.day)
        o.zone = try TimeZoneRules.named("Europe/Paris")
        o.statistics = [.count, .mean, .p95]
        let march = try TimeRange.parse("2025-03", zone: .fixed(seconds: 3600))
        let library = try Store(at: appleHealth).aggregate(
            "HKQuantityTypeIdentifierHeartRate", from: march.from, to: march.to, options: o)
        let aggLines = agg.stdout.split(separator: "\n")
        #expect(aggLines.first == "start,end,count,mean,p95" && aggLines.count == library.rows.count + 1)
        for (line, row) in zip(aggLines.dropFirst(), library.rows) {
            let f = line.split(separator: ",")
            #expect(
                Double(f[2]) == row.values[.count] && Double(f[3]) == row.values[.mean]
                    && Double(f[4]) == row.values[.p95])
        }
        let sleep = try tsdb(
            "sleep", "--range", "2025-03-05..2025-03-07", "--tz", "Europe/Paris", "--format", "csv", "--store",
            appleHealth)
        #expect(sleep.status == 0 && sleep.stdout.split(separator: "\n").count == 4, "\(sleep.stdout)\(sleep.stderr)")
        let workouts = try tsdb(
            "workouts", "--range", "2025-03", "--with", "HeartRate", "--format", "json", "--store", appleHealth)
        let list = try JSONSerialization.jsonObject(with: Data(workouts.stdout.utf8)) as? [[String: Any]]
        #expect(workouts.status == 0 && (list?.count ?? 0) > 0 && list?.first?["HeartRate_max"] != nil)

        let types = try tsdb("types", "--store", appleHealth)
        #expect(types.stdout.contains("HeartRate") && types.stdout.contains("SleepAnalysis"))
        let stats = try tsdb("stats", "--store", appleHealth)
        #expect(stats.stdout.contains("bytes/sample") && stats.stdout.contains("total"))

        let verify = try tsdb("verify", "--deep", "--store", appleHealth)
        #expect(verify.status == 0 && verify.stdout.hasPrefix("ok:"), "\(verify.stdout)\(verify.stderr)")
        let again = try tsdb("compact", imports)
        #expect(again.status == 0 && again.stdout.hasPrefix("up to date"))

        let export = try tsdb("export", "--out", folder.path + "/exported", "--store", appleHealth)
        #expect(export.status == 0)
        #expect(Set(try rawSampleSet(folder.path + "/exported").keys) == Set(raw.keys))
    }

    @Test func errorsGoToStderrWithNonZeroExit() throws {
        let folder = TemporaryFolder("cli")
        defer { folder.cleanup() }
        _ = try tsdb("generate", folder.path, "--days", "3", "--start", "2025-03-01")
        folder.write(
            #"{"date":"2025-03-04","samples":[{"type":"HR","start":"2025-03-04T10:00:00Z","#
                + #""end":"2025-03-04T10:00:00Z","value":"high"}]}"#,
            to: "raw/2025/03/2025-03-04.json")
        let compact = try tsdb("compact", folder.path)
        #expect(compact.status == 2)
        #expect(
            compact.stderr.contains("2025-03-04.json:1 (offset")
                && compact.stderr.contains("value must be a number or null"))
        #expect(compact.stdout.contains("compacted 3 day files"))

        let typo = try tsdb("query", "HartRate", "--range", "2025-03", "--store", folder.path)
        #expect(typo.status != 0 && typo.stdout.isEmpty)
        #expect(typo.stderr.contains("did you mean HeartRate"))

        let badRange = try tsdb("query", "HeartRate", "--range", "March", "--store", folder.path)
        #expect(badRange.status != 0 && badRange.stderr.contains("cannot read \"March\""))
        let threadsAlone = try tsdb("query", "HeartRate", "--threads", "1", "--store", folder.path)
        #expect(threadsAlone.status != 0 && threadsAlone.stderr.contains("--threads applies to aggregates"))
        let noThreads = try tsdb("query", "HeartRate", "--bucket", "day", "--threads", "0", "--store", folder.path)
        #expect(noThreads.status != 0 && noThreads.stderr.contains("at least 1; found \"0\""), "\(noThreads.stderr)")

        // A damaged segment: verify says which and exits 1; --repair fixes it.
        let store = folder.path + "/tsdb"
        let entry = try #require(
            try Manifest.read(at: store + "/MANIFEST").segments.first { $0.type == "HKQuantityTypeIdentifierHeartRate" }
        )
        let file = store + "/" + entry.path
        try flipByte(entry.size / 2, of: entry, in: store, mask: 0x20)
        let damaged = try tsdb("verify", "--store", folder.path)
        #expect(damaged.status == 1 && damaged.stderr.contains("damaged segment") && damaged.stderr.contains(file))
        let repaired = try tsdb("verify", "--repair", "--store", folder.path)
        // The damaged month is rebuilt; the bad day file written above stays a problem (exit 1).
        let lastLine = repaired.stdout.split(separator: "\n").last ?? ""
        #expect(
            repaired.status == 1 && repaired.stdout.contains("repaired: rebuilt 1 month "),
            "\(repaired.stdout)\(repaired.stderr)")
        #expect(lastLine.hasPrefix("1 problem:") && repaired.stderr.contains("raw file not compacted"))

        let noStore = try tsdb("types", "--store", folder.path + "/raw/2025")
        #expect(noStore.status != 0 && !noStore.stderr.isEmpty)
    }
}

/// Runs `tsdb compact` and returns its exit status and the peak resident memory it reports
/// (its own VmHWM: wait4's ru_maxrss would include this test process's memory from before exec).
func compactMeasuringMemory(_ directory: String) throws -> (status: Int32, peakBytes: Int) {
    let run = try CommandLineTests().tsdb("compact", directory)
    let line = run.stdout.split(separator: "\n").first { $0.contains("memory:") } ?? ""
    let words = line.split(separator: " ")
    guard let i = words.firstIndex(of: "peak"), i + 2 < words.count, let value = Double(words[i + 1]) else {
        return (run.status, -1)
    }
    let scales: [String: Double] = ["B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9]
    let scale = scales[String(words[i + 2])] ?? 0
    return (run.status, Int(value * scale))
}

@Suite(.serialized) struct LargeInputTests {
    /// 200 MB day files on one line, compacted by the real binary, one per run so each peak is
    /// its own: memory is the mapped file (page cache, not a copy) plus what its samples need.
    @Test func twoHundredMegabyteSingleLineFiles() throws {
        let folder = TemporaryFolder("large")
        defer { folder.cleanup() }
        let sample = Array(
            (#"{"type":"HKQuantityTypeIdentifierHeartRate","start":"2025-01-01T10:00:00Z","#
                + #""end":"2025-01-01T10:00:00Z","value":61,"unit":"count/min","source":"com.apple.health.A","#
                + #""device":"Apple Watch","metadata":{"HKMetadataKeyHeartRateMotionContext":0}}"#).utf8)
        var big = Array(#"{"date":"2025-01-01","samples":["#.utf8)
        big.reserveCapacity(200_000_100)
        var count = 0
        while big.count < 200_000_000 {
            if count > 0 { big.append(UInt8(ascii: ",")) }
            big += sample
            count += 1
        }
        big += Array("]}".utf8)
        folder.write(bytes: big, to: "samples/raw/2025/01/2025-01-01.json")
        big = []
        var blob = Array(
            (#"{"date":"2025-01-02","samples":[{"type":"T","start":"2025-01-02T10:00:00Z","#
                + #""end":"2025-01-02T10:00:00Z","metadata":{"blob":""#).utf8)
        blob += [UInt8](repeating: UInt8(ascii: "x"), count: 200_000_000)
        blob += Array(#""}}]}"#.utf8)
        folder.write(bytes: blob, to: "string/raw/2025/01/2025-01-02.json")
        blob = []

        // ~880,000 samples: 200 MB mapped + a few hundred bytes of working memory per sample.
        let samples = try compactMeasuringMemory(folder.path + "/samples")
        #expect(samples.status == 0)
        #expect(
            samples.peakBytes > 0 && samples.peakBytes < 200_000_000 + count * 300,
            "peak \(samples.peakBytes / 1_000_000) MB for \(count) samples")
        #expect(
            try Store(at: folder.path + "/samples").types.first?.sampleCount == 1, "identical samples are stored once")

        // One 200 MB string: refused with a clear error, never copied.
        let string = try compactMeasuringMemory(folder.path + "/string")
        #expect(string.status == 2, "partial: the file is skipped")
        #expect(
            string.peakBytes > 0 && string.peakBytes < 200_000_000 + 40_000_000,
            "peak \(string.peakBytes / 1_000_000) MB")
        let report = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path + "/string")).run()
        #expect(
            report.skipped.contains {
                $0.path?.hasSuffix("2025-01-02.json") == true && $0.message.contains("longer than the 1 MiB limit")
                    && $0.line == 1
            })
    }
}

/// A FIFO named like a day file is reported and passed over; the run ends and the other days are
/// compacted (opening it for reading waited for a writer forever).
@Suite struct SpecialFileTests {
    @Test func aFIFONamedLikeADayFileIsSkippedNotWaitedFor() throws {
        let folder = TemporaryFolder("cli-fifo")
        defer { folder.cleanup() }
        let sample = #"{"type":"HR","start":"2025-03-01T10:00:00Z","end":"2025-03-01T10:00:00Z","value":7}"#
        folder.write(#"{"date":"2025-03-01","samples":[\#(sample)]}"#, to: "raw/2025/03/2025-03-01.json")
        let fifo = folder.path + "/raw/2025/03/2025-03-02.json"
        #expect(mkfifo(fifo, 0o644) == 0)
        // Through timeout(1), so that a run that waits fails here instead of hanging the tests.
        let run = try runProcess(
            "/usr/bin/timeout", ["-s", "KILL", "20", CommandLineTests.executable, "compact", "--store", folder.path])
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains(fifo) && run.stderr.contains("not a regular file"), "\(run.stderr)")
        #expect(run.stdout.contains("1 sample"), "\(run.stdout)")
    }
}
