import Foundation
import XCTest

@testable import TSDB
@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// The export is streamed through compaction in bounded memory: written a (type, month) at a
/// time as it moves on, merged with the day files' months, its string table compacted as it
/// grows. Tiny chunks and budgets must give exactly the store the defaults give.
final class ExportCompactionTests: XCTestCase {
    func store(_ folder: TemporaryFolder, _ name: String, chunk: Int?, budget: Int?) throws -> [String: [Sample]] {
        var o = HealthDataGenerator.Options()
        o.days = 75
        o.startDate = "2025-01-20"
        o.heartRateDensity = 0.3
        let layout = StoreLayout(appleHealthDirectory: folder.path + "/" + name)
        // The same person's day files for the last 30 days, and the export of all 75.
        var recent = o
        recent.startDate = "2025-03-05"
        recent.days = 30
        try HealthDataGenerator(options: recent).write(rawDirectory: layout.rawDirectory)
        let zip = folder.path + "/export.zip"
        if !FileManager.default.fileExists(atPath: zip) { try AppleExportGenerator(options: o).write(to: zip) }
        _ = try ExportImport.keep(zip, in: layout)
        var options = CompactionOptions()
        options.exportReader =
            chunk.map { ExportImport.exportReader(chunkSamples: $0) } ?? ExportImport.exportReader
        if let budget { options.stringBudget = budget }
        let report = try Compactor(layout: layout, options: options).run()
        XCTAssertTrue(report.skipped.isEmpty, "\(report.skipped)")
        var verifier = StoreVerifier(layout: layout)
        verifier.exportReader = ExportImport.exportReader
        let check = try verifier.verify(deep: true)
        XCTAssertTrue(check.findings.isEmpty, "\(check.findings)")
        let s = try Store(at: layout.appleHealthDirectory)
        var out: [String: [Sample]] = [:]
        for t in s.types {
            var cursor = try s.samples(of: t.type)
            while let x = try cursor.next() { out[t.type, default: []].append(x) }
        }
        return out
    }

    func testTinyChunksAndStringBudgetsGiveTheSameStore() throws {
        let folder = TemporaryFolder("export-compaction")
        defer { folder.cleanup() }
        let reference = try store(folder, "defaults", chunk: nil, budget: nil)
        let bounded = try store(folder, "bounded", chunk: 500, budget: 16 << 10)
        XCTAssertEqual(Set(bounded.keys), Set(reference.keys))
        for (type, samples) in reference {
            XCTAssertEqual(bounded[type]?.count, samples.count, type)
            if let b = bounded[type], let i = b.indices.first(where: { b[$0] != samples[$0] }) {
                XCTFail("\(type) #\(i): \(b[i]) vs \(samples[i]); next \(b[i + 1]) vs \(samples[i + 1])")
            }
        }
        XCTAssertGreaterThan(reference["HKQuantityTypeIdentifierHeartRate"]?.count ?? 0, 5_000)
        XCTAssertNotNil(reference["HKWorkoutRouteTypeIdentifier"])
    }

    /// A generated export of `days` imported with `tsdb import` into `folder/store`; returns the
    /// store and the path of its kept copy of the export.
    func importedExport(_ folder: TemporaryFolder, days: Int) throws -> (store: String, kept: String) {
        var o = HealthDataGenerator.Options()
        o.days = days
        try AppleExportGenerator(options: o).write(to: folder.path + "/export.zip")
        let store = folder.path + "/store"
        XCTAssertEqual(try tsdbShell(["import", folder.path + "/export.zip", "--store", store]).status, 0)
        let kept = try FileManager.default.contentsOfDirectory(atPath: store + "/exports")
        return (store, store + "/exports/" + kept[0])
    }

    /// Each segment's path and bytes, by type and month.
    /// Each segment's place (file and offset) and bytes, by type and month.
    func segments(_ store: String) throws -> [String: (place: String, bytes: [UInt8])] {
        var out: [String: (place: String, bytes: [UInt8])] = [:]
        for s in try Store(at: store).manifest.segments {
            out["\(s.type) \(s.year)-\(s.month)"] = (s.place, try segmentBytes(s, in: store + "/tsdb"))
        }
        return out
    }

    /// A newer export (the same history and one more day) rewrites only the segments whose bytes
    /// change; the others keep their files, and every segment is what importing the newer export
    /// alone writes.
    func testANewerExportRewritesOnlyTheSegmentsItChanges() throws {
        let folder = TemporaryFolder("export-newer")
        defer { folder.cleanup() }
        try writeGeneratedExport(days: 45, to: folder.path + "/older.zip")
        try writeGeneratedExport(days: 46, to: folder.path + "/newer.zip")
        let store = folder.path + "/store"
        XCTAssertEqual(try tsdbShell(["import", folder.path + "/older.zip", "--store", store]).status, 0)
        let before = try segments(store)
        let r = try tsdbShell(["import", folder.path + "/newer.zip", "--store", store])
        XCTAssertEqual(r.status, 0, r.stderr)
        let after = try segments(store)
        let kept = after.filter { before[$0.key]?.place == $0.value.place }
        XCTAssertGreaterThan(kept.count, after.count / 2, "most months are the same: \(r.stdout)")
        XCTAssertLessThan(kept.count, after.count)
        XCTAssertTrue(r.stdout.contains("\(kept.count) unchanged (same bytes, files kept)"), r.stdout)
        for (key, old) in before where kept[key] == nil && after[key] != nil {
            XCTAssertNotEqual(after[key]!.bytes, old.bytes, "\(key) was written again with the same bytes")
        }

        let alone = folder.path + "/alone"
        XCTAssertEqual(try tsdbShell(["import", folder.path + "/newer.zip", "--store", alone]).status, 0)
        let expected = try segments(alone)
        XCTAssertEqual(Set(after.keys), Set(expected.keys))
        for (key, segment) in expected { XCTAssertEqual(after[key]?.bytes, segment.bytes, key) }
    }

    /// A kept export whose bytes are the same but whose mtime moved (a `touch`, a restore from a
    /// backup) is recognised by its hash: the next compaction rewrites no segment, records the
    /// new mtime, and the one after is up to date.
    func testATouchedExportIsRecognisedByItsHash() throws {
        let folder = TemporaryFolder("export-touched")
        defer { folder.cleanup() }
        let (store, kept) = try importedExport(folder, days: 20)
        let layout = StoreLayout(appleHealthDirectory: store)
        func segmentFiles() -> Set<String> {
            Set(FileManager.default.enumerator(atPath: layout.segmentsDirectory)!.compactMap { $0 as? String })
        }
        let before = segmentFiles()
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: kept)
        var options = CompactionOptions()
        options.exportReader = ExportImport.exportReader
        let touched = try Compactor(layout: layout, options: options).run()
        XCTAssertEqual(touched.exportsRead, 0)
        XCTAssertEqual(touched.filesTouched, 1)
        XCTAssertEqual(segmentFiles().subtracting(before), [], "segments written again")
        XCTAssertTrue(try Compactor(layout: layout, options: options).run().upToDate)
    }

    func testAKeptExportDamagedLaterStopsTheCompactionAndTheStoreStillAnswers() throws {
        let folder = TemporaryFolder("export-damaged-later")
        defer { folder.cleanup() }
        let (store, kept) = try importedExport(folder, days: 30)
        let before = try tsdbShell(["query", "HeartRate", "--bucket", "day", "--store", store, "--format", "csv"])
        XCTAssertEqual(before.status, 0, before.stderr)
        // The disk damages the kept copy: the deflate stream's middle is overwritten.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: kept)))
        for k in bytes.count / 3..<bytes.count / 3 + 64 { bytes[k] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: kept))
        let r = try tsdbShell(["compact", "--rebuild", store])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("export.xml"), r.stderr)
        let after = try tsdbShell(["query", "HeartRate", "--bucket", "day", "--store", store, "--format", "csv"])
        XCTAssertEqual(after.stdout, before.stdout, "the published generation still answers")
    }
}
