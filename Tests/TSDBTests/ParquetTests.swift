import Foundation
import XCTest

@testable import TSDB
@testable import TSDBParquet

/// `tsdb export --format parquet`, read back by the engines people use: pyarrow and DuckDB.
final class ParquetTests: XCTestCase {
    static let checker = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors/parquet-check.py").path

    /// Runs a check of parquet-check.py, failing with its output.
    func check(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try runProcess("/usr/bin/env", ["python3", Self.checker] + arguments)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr, file: file, line: line)
    }

    /// A store with edge cases (escapes, unicode, nulls, odd offsets, workouts) over a month boundary.
    func edgeCaseStore() throws -> TemporaryFolder {
        let folder = TemporaryFolder("parquet")
        try generate(folder.path, days: 20, seed: 5, edgeCases: true, start: "2025-03-20")
        let r = try tsdbShell(["compact", folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return folder
    }

    func testEverySampleReadsBackWithPyarrowAndDuckDBAsTsdbExportsIt() throws {
        let store = try edgeCaseStore()
        defer { store.cleanup() }
        let out = store.path + "/parquet"
        let r = try tsdbShell(["export", "--store", store.path, "--format", "parquet", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("Parquet files"), r.stderr)
        _ = try tsdbShell(["export", "--store", store.path, "--format", "ndjson"], "> \(store.path)/all.ndjson")
        try check(["samples", out, store.path + "/all.ndjson"])
        try check(["workouts", out, store.path + "/all.ndjson"])
    }

    func testDuckDBDailyAggregatesOverTheExportEqualTsdbs() throws {
        let store = try generatedStore("parquet-daily", days: 40, start: "2025-02-10")
        defer { store.cleanup() }
        let out = store.path + "/parquet"
        XCTAssertEqual(try tsdbShell(["export", "--store", store.path, "--format", "parquet", "--out", out]).status, 0)
        let q = try tsdbShell(
            [
                "query", "HeartRate", "--store", store.path, "--bucket", "day", "--tz", "UTC", "--stats",
                "count,min,max,mean", "--format", "csv",
            ], "> \(store.path)/daily.csv")
        XCTAssertEqual(q.status, 0, q.stderr)
        try check(["daily", out, store.path + "/daily.csv"])
    }

    func testACohortOfFiftyPeopleIsOneDuckDBStatement() throws {
        let cohort = TemporaryFolder("cohort")
        defer { cohort.cleanup() }
        var counts = ""
        for person in 1...50 {
            let id = "p" + (person < 10 ? "0" : "") + String(person)
            let store = cohort.path + "/stores/" + id
            try generate(store, days: 2, seed: UInt64(person), edgeCases: false, start: "2025-06-29")
            XCTAssertEqual(try tsdbShell(["compact", store]).status, 0)
            let e = try tsdbShell([
                "export", "--store", store, "--format", "parquet", "--out", cohort.path + "/out", "--person", id,
            ])
            XCTAssertEqual(e.status, 0, e.stderr)
            let hr = try Store(at: store).types.first { $0.type == "HKQuantityTypeIdentifierHeartRate" }
            counts += id + " " + String(hr?.sampleCount ?? 0) + "\n"
        }
        cohort.write(counts, to: "counts.txt")
        try check(["cohort", cohort.path + "/out", cohort.path + "/counts.txt"])
    }

    func testARerunRewritesOnlyMonthsThatChanged() throws {
        let store = try edgeCaseStore()
        defer { store.cleanup() }
        let out = store.path + "/parquet"
        let export = ["export", "--store", store.path, "--format", "parquet", "--out", out]
        let first = try tsdbShell(export)
        XCTAssertEqual(first.status, 0, first.stderr)
        let before = snapshot(out)

        let again = try tsdbShell(export)
        XCTAssertTrue(again.stderr.contains("wrote 0 Parquet files"), again.stderr)
        XCTAssertEqual(Set(snapshot(out).keys), Set(before.keys), "a re-run changed the files")
        for (path, (bytes, date)) in snapshot(out) {
            XCTAssertEqual(bytes, before[path]?.0, path)
            XCTAssertEqual(date, before[path]?.1, path)
        }

        // A new day in April changes only April's partitions of the types it holds.
        try generate(store.path + "/new", days: 1, seed: 99, edgeCases: false, start: "2025-04-09")
        let day = "raw/2025/04/2025-04-09.json"
        try FileManager.default.copyItem(atPath: store.path + "/new/" + day, toPath: store.path + "/" + day)
        XCTAssertEqual(try tsdbShell(["compact", store.path]).status, 0)
        let third = try tsdbShell(export)
        XCTAssertEqual(third.status, 0, third.stderr)
        let after = snapshot(out)
        let changed = after.keys.filter { after[$0]!.0 != before[$0]?.0 }.sorted()
        XCTAssertFalse(changed.isEmpty)
        for path in changed where path.hasSuffix(".parquet") {
            XCTAssertTrue(path.contains("month=04"), "\(path) rewritten though its month did not change")
        }
        XCTAssertTrue(after.keys.contains { $0.contains("month=03") }, "March must still be there")
        _ = try tsdbShell(["export", "--store", store.path, "--format", "ndjson"], "> \(store.path)/all.ndjson")
        try check(["samples", out, store.path + "/all.ndjson"])
    }

    func testMonthsThatLeaveTheStoreLeaveTheExport() throws {
        let store = try edgeCaseStore()
        defer { store.cleanup() }
        let out = store.path + "/parquet"
        let export = ["export", "--store", store.path, "--format", "parquet", "--out", out]
        XCTAssertEqual(try tsdbShell(export).status, 0)
        XCTAssertTrue(snapshot(out).keys.contains { $0.contains("year=2025/month=04") })
        // (The day files are this test's own, not a user's.)
        try FileManager.default.removeItem(atPath: store.path + "/raw/2025/04")
        XCTAssertEqual(try tsdbShell(["compact", store.path]).status, 0)
        let r = try tsdbShell(export)
        XCTAssertTrue(r.stderr.contains("whose month left the store"), r.stderr)
        XCTAssertFalse(snapshot(out).keys.contains { $0.contains("month=04") })
        _ = try tsdbShell(["export", "--store", store.path, "--format", "ndjson"], "> \(store.path)/all.ndjson")
        try check(["samples", out, store.path + "/all.ndjson"])
    }

    func testRangeAndTypeSelectOnlyTheirPartitions() throws {
        let store = try edgeCaseStore()
        defer { store.cleanup() }
        let out = store.path + "/parquet"
        let r = try tsdbShell([
            "export", "--store", store.path, "--format", "parquet", "--out", out, "--type", "HeartRate", "--range",
            "2025-03-25..2025-03-31", "--tz", "UTC",
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let files = snapshot(out).keys.filter { $0.hasSuffix(".parquet") }
        XCTAssertEqual(files, ["type=HeartRate/year=2025/month=03/part-0.parquet"])
        _ = try tsdbShell(
            [
                "export", "--store", store.path, "--format", "ndjson", "--type", "HeartRate", "--range",
                "2025-03-25..2025-03-31", "--tz", "UTC",
            ], "> \(store.path)/hr.ndjson")
        try check(["samples", out, store.path + "/hr.ndjson"])
    }

    func testRefusesAFolderItDidNotWrite() throws {
        let store = try generatedStore("parquet-refuse", days: 2)
        defer { store.cleanup() }
        let out = store.path + "/theirs"
        store.write("my notes", to: "theirs/notes.txt")
        let r = try tsdbShell(["export", "--store", store.path, "--format", "parquet", "--out", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("already holds files (notes.txt)"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), ["notes.txt"])
        XCTAssertEqual(try String(contentsOfFile: out + "/notes.txt", encoding: .utf8), "my notes")
    }

    func testBadOptionsAreUsageErrors() throws {
        let store = try generatedStore("parquet-usage", days: 2)
        defer { store.cleanup() }
        let noOut = try tsdbShell(["export", "--store", store.path, "--format", "parquet"])
        XCTAssertEqual(noOut.status, 64)
        XCTAssertTrue(noOut.stderr.contains("--out DIR"), noOut.stderr)
        let personAlone = try tsdbShell(["export", "--store", store.path, "--person", "p1"])
        XCTAssertEqual(personAlone.status, 64)
        let badPerson = try tsdbShell([
            "export", "--store", store.path, "--format", "parquet", "--out", store.path + "/o", "--person", "../x",
        ])
        XCTAssertNotEqual(badPerson.status, 0)
        XCTAssertTrue(badPerson.stderr.contains("person id \"../x\""), badPerson.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path + "/x"))
    }

    /// A failure part-way (here: the third file cannot be renamed into place) leaves no partial
    /// file behind, and the next run completes the export exactly.
    func testAFailedExportLeavesNoPartialFileAndTheNextRunCompletesIt() throws {
        let store = try edgeCaseStore()
        defer { store.cleanup() }
        let out = store.path + "/parquet"
        var options = ParquetExportOptions()
        FaultInjection.install(.init(folder: out, operation: .rename, failFrom: 2, errno: EIO))
        XCTAssertNotNil(caught { _ = try ParquetExport.run(try Store(at: store.path), to: out, options: options) })
        FaultInjection.remove(folder: out)
        let leftovers = snapshot(out).keys.filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
        options.createdBy = "test"
        let report = try ParquetExport.run(try Store(at: store.path), to: out, options: options)
        XCTAssertGreaterThan(report.written, 0)
        _ = try tsdbShell(["export", "--store", store.path, "--format", "ndjson"], "> \(store.path)/all.ndjson")
        try check(["samples", out, store.path + "/all.ndjson"])
    }

    func testAFolderSyncThatFailsStopsTheExportAndTheNextRunCompletesIt() throws {
        let store = try edgeCaseStore()
        defer { store.cleanup() }
        // The first type's folder, from an export elsewhere: its first fsync is its first month's
        // file, the second that month's folder (one thread writes the partitions in order).
        let probe = store.path + "/probe"
        _ = try ParquetExport.run(try Store(at: store.path), to: probe, options: ParquetExportOptions())
        let firstFile = try XCTUnwrap(snapshot(probe).keys.filter { $0.hasPrefix("type=") }.min())
        let firstType = String(firstFile.prefix { $0 != "/" })
        let out = store.path + "/parquet"
        var options = ParquetExportOptions()
        options.threads = 1
        FaultInjection.install(.init(folder: out + "/" + firstType, operation: .fsync, failFrom: 1, errno: EIO))
        let error = caught { _ = try ParquetExport.run(try Store(at: store.path), to: out, options: options) }
        FaultInjection.remove(folder: out + "/" + firstType)
        let path = try XCTUnwrap(error?.path, "\(String(describing: error))")
        XCTAssertTrue(path.hasPrefix(out + "/" + firstType + "/year=") && path.hasSuffix("/"), path)
        XCTAssertEqual(snapshot(out).keys.filter { $0.hasSuffix(".tmp") }, [])
        options.threads = ParquetExportOptions().threads
        let report = try ParquetExport.run(try Store(at: store.path), to: out, options: options)
        XCTAssertGreaterThan(report.written, 0)
        _ = try tsdbShell(["export", "--store", store.path, "--format", "ndjson"], "> \(store.path)/all.ndjson")
        try check(["samples", out, store.path + "/all.ndjson"])
    }
}
