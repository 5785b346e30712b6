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

    static let executable: String = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("tsdb").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/tsdb").standardized.path
    }()

    func tsdb(_ arguments: String..., environment: [String: String] = [:]) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.executable)
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    @Test func generateCompactQueryExport() throws {
        let folder = TemporaryFolder("cli")
        defer { folder.cleanup() }
        let imports = folder.path + "/imports"
        let appleHealth = imports + "/fitness/apple-health"
        let gen = try tsdb("generate", appleHealth, "--days", "31", "--start", "2025-03-01", "--seed", "7", "--edge-cases")
        #expect(gen.status == 0 && gen.stdout.contains("wrote 31 day files"))

        let compact = try tsdb("compact", imports)
        #expect(compact.status == 0, "\(compact.stderr)")
        #expect(compact.stdout.contains("compacted 31 day files"))
        #expect(compact.stdout.contains("bytes/sample"))

        let raw = try rawSampleSet(appleHealth + "/raw")
        let hrInMarch8 = raw.keys.filter {
            $0.type == "HKQuantityTypeIdentifierHeartRate" && $0.start.microseconds >= Timestamp("2025-03-08T00:00:00Z")!.microseconds
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
        let csv = try tsdb("query", "HeartRate", "--range", "2025-03-08", "--format", "csv", environment: ["TSDB_STORE": imports])
        #expect(csv.stdout.hasPrefix("type,start,end,value,unit,source,device,metadata\n"))
        #expect(csv.stdout.split(separator: "\n").count == hrInMarch8.count + 1)
        let json = try tsdb("query", "HKQuantityTypeIdentifierHeartRate", "--range", "2025-03-08..2025-03-09", "--format", "json", "--store", appleHealth)
        let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(array?.count == hrInMarch8.count)
        let table = try tsdb("query", "Steps", "--range", "2025-03-08", "--store", appleHealth)
        #expect(table.status == 0 && table.stdout.hasPrefix("start"))

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
        folder.write(#"{"date":"2025-03-04","samples":[{"type":"HR","start":"2025-03-04T10:00:00Z","end":"2025-03-04T10:00:00Z","value":"high"}]}"#,
                     to: "raw/2025/03/2025-03-04.json")
        let compact = try tsdb("compact", folder.path)
        #expect(compact.status == 2)
        #expect(compact.stderr.contains("2025-03-04.json:1 (offset") && compact.stderr.contains("value must be a number or null"))
        #expect(compact.stdout.contains("compacted 3 day files"))

        let typo = try tsdb("query", "HartRate", "--range", "2025-03", "--store", folder.path)
        #expect(typo.status != 0 && typo.stdout.isEmpty)
        #expect(typo.stderr.contains("did you mean HeartRate"))

        let badRange = try tsdb("query", "HeartRate", "--range", "March", "--store", folder.path)
        #expect(badRange.status != 0 && badRange.stderr.contains("cannot read \"March\""))

        // A damaged segment: verify says which and exits 1; --repair fixes it.
        let segments = folder.path + "/tsdb/segments/HKQuantityTypeIdentifierHeartRate"
        let file = segments + "/" + (try FileManager.default.contentsOfDirectory(atPath: segments).sorted().first!)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[bytes.count / 2] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let damaged = try tsdb("verify", "--store", folder.path)
        #expect(damaged.status == 1 && damaged.stderr.contains("damaged segment") && damaged.stderr.contains(file))
        let repaired = try tsdb("verify", "--repair", "--store", folder.path)
        #expect(repaired.status == 0 && repaired.stdout.contains("repaired"))

        let noStore = try tsdb("types", "--store", folder.path + "/raw/2025")
        #expect(noStore.status != 0 && !noStore.stderr.isEmpty)
    }
}
