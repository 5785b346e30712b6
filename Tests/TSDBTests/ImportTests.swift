import Foundation
import XCTest

@testable import TSDB
@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// `tsdb import`: the export kept byte for byte in `exports/`, its records and workouts stored
/// with the day files' samples, nothing written when it is damaged, nothing changed on a re-import.
final class ImportTests: XCTestCase {
    func testTheRealSampleIsStoredRecordForRecordAndKeptUntouched() throws {
        let folder = TemporaryFolder("import-real")
        defer { folder.cleanup() }
        let original = ExportReaderTests.sample
        let before = try FileManager.default.attributesOfItem(atPath: original)[.modificationDate] as? Date
        let originalBytes = sha(original)
        let store = folder.path + "/store"
        let r = try tsdbShell(["import", original, "--store", store])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("kept as exports/2023-05-13_103612+0200.zip"), r.stdout)
        XCTAssertEqual(sha(store + "/exports/2023-05-13_103612+0200.zip"), originalBytes, "kept byte for byte")
        XCTAssertEqual(sha(original), originalBytes, "the user's file is only read")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: original)[.modificationDate] as? Date, before)

        // Every record is a sample of its type.
        let inventory = try ExportReader.inventory(of: original)
        let s = try Store(at: store)
        var expectedTypes = inventory.records
        expectedTypes["HKDataTypeIdentifierHeartbeatSeries"] = inventory.heartbeats  // 13,081 beats
        // Each GPX track point is a route sample (the sample's two routes belong to no workout).
        let points = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
                    + "print(sum(z.read(n).count(b'<trkpt ') for n in z.namelist() if n.endswith('.gpx')))",
                original,
            ])
        expectedTypes["HKWorkoutRouteTypeIdentifier"] = Int(
            points.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: s.types.map { ($0.type, $0.sampleCount) }), expectedTypes)

        // Heart rates sample by sample against Python's own parse: instant, digits, unit, source.
        let script = """
            import zipfile, sys, re, json, datetime, xml.etree.ElementTree as ET
            data = zipfile.ZipFile(sys.argv[1]).read('apple_health_export/export.xml')
            root = ET.fromstring(re.sub(rb'<!DOCTYPE.*?]>', b'', data, flags=re.S))
            def us(t): return int(datetime.datetime.strptime(t, '%Y-%m-%d %H:%M:%S %z').timestamp()) * 1000000
            for r in root.iter('Record'):
                if r.get('type') == 'HKQuantityTypeIdentifierHeartRate':
                    print(json.dumps([us(r.get('startDate')), r.get('value'), r.get('unit'), r.get('sourceName')]))
            """
        let py = try runProcess("/usr/bin/env", ["python3", "-c", script, original])
        XCTAssertEqual(py.status, 0, py.stderr)
        var stored: [String] = []
        var cursor = try s.samples(of: "HKQuantityTypeIdentifierHeartRate")
        while let x = try cursor.next() {
            let row: [Any] = [x.start.microseconds, x.value.description, x.unit.string ?? "", x.source.string ?? ""]
            stored.append(String(decoding: try JSONSerialization.data(withJSONObject: row), as: UTF8.self))
        }
        let expected = py.stdout.split(separator: "\n").map {
            String(
                decoding: try! JSONSerialization.data(
                    withJSONObject: JSONSerialization.jsonObject(with: Data($0.utf8))), as: UTF8.self)
        }
        XCTAssertEqual(stored.count, 400)
        XCTAssertEqual(stored.sorted(), expected.sorted())

        // The same archive again changes nothing.
        let manifest = sha(store + "/tsdb/MANIFEST")
        let again = try tsdbShell(["import", original, "--store", store])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("already imported"), again.stdout)
        XCTAssertTrue(again.stdout.contains("up to date"), again.stdout)
        XCTAssertEqual(sha(store + "/tsdb/MANIFEST"), manifest)
        let verify = try tsdbShell(["verify", "--deep", "--store", store])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    func testWorkoutsCorrelationsAndSleepFromAGeneratedExport() throws {
        let folder = TemporaryFolder("import-generated")
        defer { folder.cleanup() }
        var options = HealthDataGenerator.Options()
        options.days = 21
        options.startDate = "2025-03-01"
        let written = try AppleExportGenerator(options: options).write(to: folder.path + "/export.zip")
        let store = folder.path + "/store"
        let r = try tsdbShell(["import", folder.path + "/export.zip", "--store", store])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try Store(at: store)
        let counts = Dictionary(uniqueKeysWithValues: s.types.map { ($0.type, $0.sampleCount) })
        XCTAssertEqual(
            counts["HKQuantityTypeIdentifierHeartRate"], written.records["HKQuantityTypeIdentifierHeartRate"])
        // A reading is in its correlation and again at top level: stored once.
        let systolic = "HKQuantityTypeIdentifierBloodPressureSystolic"
        XCTAssertEqual(counts[systolic].map { $0 * 2 }, written.records[systolic])
        XCTAssertEqual(counts["HKWorkoutTypeIdentifier"], written.workouts)
        XCTAssertEqual(counts["HKActivitySummaryTypeIdentifier"], 21, "one summary a day")
        XCTAssertEqual(counts["HKDataTypeIdentifierHeartbeatSeries"], written.heartbeats)
        let summary = try tsdbShell([
            "query", "ActivitySummary", "--store", store, "--range", "2025-03-05", "--tz", "Europe/Paris", "--format",
            "csv",
        ])
        XCTAssertTrue(summary.stdout.contains("2025-03-05T00:00:00+01:00,2025-03-06T00:00:00+01:00"), summary.stdout)
        XCTAssertTrue(summary.stdout.contains("activeEnergyBurnedGoal"), summary.stdout)

        let workouts = try s.workouts(from: .min, to: .max)
        XCTAssertEqual(workouts.count, written.workouts)
        XCTAssertTrue(
            workouts.allSatisfy { $0.activity != nil && !$0.name.hasPrefix("activity") }, "\(workouts.map(\.name))")
        XCTAssertTrue(workouts.contains { $0.distance != nil && $0.distanceUnit != nil })
        // Sleep labels became HealthKit's values: nights with stages.
        var o = AggregateOptions()
        o.zone = try TimeZoneRules.named("Europe/Paris")
        let nights = try s.sleepNights(options: o)
        XCTAssertGreaterThan(nights.count, 15)
        // (The first and last nights are cut by the range of generated days.)
        XCTAssertGreaterThanOrEqual(nights.count { ($0.secondsByValue[4] ?? 0) > 0 }, nights.count - 2, "deep sleep")
    }

    /// The import ends with what the export gave (samples by type, the days they cover, the
    /// workouts and route points) and what it left out, why, and where the first one is.
    func testTheReportSaysWhatWasImportedAndWhatWasLeftOut() throws {
        let folder = TemporaryFolder("import-report")
        defer { folder.cleanup() }
        func record(_ value: Int, _ start: String, type: String = " type=\"HKQuantityTypeIdentifierHeartRate\"")
            -> String
        {
            " <Record\(type) sourceName=\"Watch\" unit=\"count/min\" value=\"\(value)\" "
                + "startDate=\"\(start)\" endDate=\"\(start)\"/>"
        }
        let lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<HealthData locale=\"en_US\">",
            " <ExportDate value=\"2025-03-05 10:00:00 +0100\"/>",
            record(61, "2025-03-01 08:00:00 +0100"), record(62, "2025-03-01 08:01:00 +0100"),
            record(63, "2025-03-03 23:30:00 +0100"),
            record(64, "2025-03-02 08:02:00 +0100", type: ""),  // line 7: no type
            record(65, "yesterday"),  // line 8: no readable date
            record(66, "2025-02-30 08:00:00 +0100"),  // line 9: a day February does not have
            " <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" sourceName=\"Watch\" "
                + "startDate=\"2025-03-02 18:00:00 +0100\" endDate=\"2025-03-02 18:30:00 +0100\"/>",
            "</HealthData>",
        ]
        folder.write(lines.joined(separator: "\n") + "\n", to: "export.xml")
        let r = try tsdbShell(["import", folder.path + "/export.xml", "--store", folder.path + "/store"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(
            r.stdout.contains("4 samples of 2 types from the export, 2025-03-01 to 2025-03-03 (UTC):"), r.stdout)
        XCTAssertTrue(r.stdout.contains("\n          3  HeartRate\n          1  Workout\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("1 workout, 0 route points"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Record elements without a type: 1 left out (the first at line 7)"), r.stdout)
        XCTAssertTrue(
            r.stdout.contains(
                "Record elements without readable startDate and endDate (end not before start): 2 left out "
                    + "(the first at line 8)"), r.stdout)
    }

    /// On a terminal (a pseudo-terminal from `script`), the import shows its progress: the
    /// samples read from the export so far and their rate.
    func testProgressOnATerminalCountsTheExportsSamples() throws {
        let folder = TemporaryFolder("import-progress")
        defer { folder.cleanup() }
        try writeGeneratedExport(days: 30, to: folder.path + "/export.zip")
        let command = [
            CommandLineTests.executable, "import", folder.path + "/export.zip", "--store", folder.path + "/s",
        ]
        let r = try runProcess(
            "/usr/bin/script", ["-qec", command.map { "'\($0)'" }.joined(separator: " "), "/dev/null"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let frames = r.stdout.split(separator: "\r").filter { $0.contains("samples from the export") }
        XCTAssertFalse(frames.isEmpty, r.stdout)
        XCTAssertTrue(frames.allSatisfy { $0.hasPrefix("compacting ") && $0.contains("/s") }, "\(frames)")
    }

    func testADamagedExportWritesNothing() throws {
        let folder = TemporaryFolder("import-damaged")
        defer { folder.cleanup() }
        var options = HealthDataGenerator.Options()
        options.days = 3
        try AppleExportGenerator(options: options).write(to: folder.path + "/export.zip")
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/export.zip")))
        let store = try generatedStore("import-damaged-store", days: 2)
        defer { store.cleanup() }
        // Damage at the head is refused before anything is copied; damage deeper in is found while
        // compacting, and the copy is removed again.
        for at in [300, whole.count / 3] {
            var bytes = whole
            for k in at..<at + 40 { bytes[k] ^= 0xA5 }
            folder.write(bytes: bytes, to: "damaged.zip")
            let before = snapshot(store.path)
            let r = try tsdbShell(["import", folder.path + "/damaged.zip", "--store", store.path])
            XCTAssertNotEqual(r.status, 0)
            XCTAssertTrue(r.stderr.contains("apple_health_export/export.xml"), r.stderr)
            XCTAssertEqual(Set(snapshot(store.path).keys), Set(before.keys), "no file added (damage at \(at))")
            // (LOCK names the last compaction's process: the failed one took it.)
            for (path, (data, _)) in snapshot(store.path) where path != "tsdb/LOCK" {
                XCTAssertEqual(data, before[path]?.0, path)
            }
        }
    }

    func testDayFilesAndAnExportLiveSideBySide() throws {
        let store = try generatedStore("import-beside", days: 5)
        defer { store.cleanup() }
        let dayFileTypes = Set(try Store(at: store.path).types.map(\.type))
        let statsBefore = try tsdbShell(["stats", "--store", store.path]).stdout
        let r = try tsdbShell(["import", ExportReaderTests.sample, "--store", store.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try Store(at: store.path)
        // The kept export is no day file: no days "missing" between it and the day files.
        XCTAssertEqual(s.missingDays, [])
        let dayFileLines = { (text: String) in
            text.split(separator: "\n").filter { $0.contains("day files") }.map { $0.prefix { $0 != ";" } }
        }
        XCTAssertEqual(dayFileLines(try tsdbShell(["stats", "--store", store.path]).stdout), dayFileLines(statsBefore))
        XCTAssertTrue(dayFileTypes.isSubset(of: Set(s.types.map(\.type))), "the day files' samples stay")
        XCTAssertTrue(s.types.contains { $0.type == "HKQuantityTypeIdentifierWalkingSpeed" }, "the export's join them")
        let compact = try tsdbShell(["compact", store.path])
        XCTAssertTrue(compact.stdout.contains("day files and the Apple Health export unchanged"), compact.stdout)
        XCTAssertEqual(try tsdbShell(["verify", "--deep", "--store", store.path]).status, 0)
    }

    func testBeatTimesInEveryLocaleAndAcrossMidnight() throws {
        let cases: [(String, Int64?)] = [
            ("00:20:37,80", (20 * 60 + 37) * 1_000_000 + 800_000), ("0:20:37.80", (20 * 60 + 37) * 1_000_000 + 800_000),
            ("12:20:37.80 AM", (20 * 60 + 37) * 1_000_000 + 800_000),
            ("1:05:02 PM", (13 * 3600 + 5 * 60 + 2) * 1_000_000),
            ("12:00:00 PM", 12 * 3600 * 1_000_000),
            ("11:59:59,5 p.m.", (23 * 3600 + 59 * 60 + 59) * 1_000_000 + 500_000),
            ("24:00:00", nil), ("13:00:00 PM", nil), ("1:60:00", nil), ("noon", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(ExportSamples.timeOfDay(text)?.0, expected, text)
        }
        // A series that starts a second before midnight continues on the next day.
        let folder = TemporaryFolder("beats")
        defer { folder.cleanup() }
        folder.write(
            """
            <HealthData locale="en_US">
             <ExportDate value="2025-03-10 09:00:00 +0100"/>
             <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Watch" unit="ms" value="41.5"
              startDate="2025-03-01 23:59:59 +0100" endDate="2025-03-02 00:01:00 +0100">
              <HeartRateVariabilityMetadataList>
               <InstantaneousBeatsPerMinute bpm="58" time="11:59:59.50 PM"/>
               <InstantaneousBeatsPerMinute bpm="61" time="12:00:00.75 AM"/>
              </HeartRateVariabilityMetadataList>
             </Record>
            </HealthData>

            """, to: "export.xml")
        let parsed = try wholeExport(folder.path + "/export.xml")
        var strings = parsed.strings
        let beats = parsed.samples.map { unpack($0, &strings) }.filter {
            $0.type == "HKDataTypeIdentifierHeartbeatSeries"
        }
        XCTAssertEqual(
            beats.map(\.start.description), ["2025-03-01T23:59:59.50+01:00", "2025-03-02T00:00:00.75+01:00"])
        XCTAssertEqual(beats.map(\.value.description), ["58", "61"])
        let hrv = parsed.samples.map { unpack($0, &strings) }.first { $0.type.hasSuffix("SDNN") }
        XCTAssertEqual(hrv?.value.description, "41.5", "digits as written")
    }
}

/// An export's samples in one piece (the import streams them in chunks).
func wholeExport(_ path: String) throws -> ParsedDayFile {
    var whole = ParsedDayFile()
    try ExportSamples.read(path) { (chunk) throws(TSDBError) in whole.append(contentsOf: chunk) }
    return whole
}
