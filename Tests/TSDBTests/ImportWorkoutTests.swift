import Foundation
import XCTest

@testable import TSDB
@testable import TSDBSynthetic

/// What Health's export says of workouts and correlations beyond their samples: Apple's
/// statistics, events and routes, and blood-pressure pairs, read back through the command line.
final class ImportWorkoutTests: XCTestCase {
    static let shared = Result { () throws -> (TemporaryFolder, AppleExportGenerator.Written) in
        let folder = TemporaryFolder("import-workouts")
        var options = HealthDataGenerator.Options()
        options.days = 15
        options.startDate = "2025-03-01"
        let written = try AppleExportGenerator(options: options).write(to: folder.path + "/export.zip")
        let r = try tsdbShell(["import", folder.path + "/export.zip", "--store", folder.path + "/store"])
        guard r.status == 0 else { throw TSDBError.invalidInput(r.stderr) }
        return (folder, written)
    }

    var folder: String { get throws { try Self.shared.get().0.path } }

    override class func tearDown() { (try? shared.get())?.0.cleanup() }

    /// Python's reading of the archive: each workout's statistics and its route's points.
    func pythonView() throws -> [String: Any] {
        let script = """
            import zipfile, sys, json, re, xml.etree.ElementTree as ET
            z = zipfile.ZipFile(sys.argv[1])
            xml = [n for n in z.namelist() if n.endswith('.xml') and b'<HealthData' in z.read(n)[:4096]][0]
            data = re.sub(rb'<!DOCTYPE.*?]>', b'', z.read(xml), flags=re.S).replace(b'\\x0b', b'')  # expat stops at it
            root = ET.fromstring(data)
            out = {'workouts': []}
            g = '{http://www.topografix.com/GPX/1/1}'
            for w in root.iter('Workout'):
                stats = {s.get('type'): dict(s.attrib) for s in w.findall('WorkoutStatistics')}
                path = w.find('WorkoutRoute/FileReference').get('path')
                gpx = ET.fromstring(z.read('apple_health_export' + path))
                points = [[p.get('lat'), p.get('lon'), p.find(g + 'ele').text, p.find(g + 'time').text,
                           p.find(g + 'extensions/' + g + 'speed').text, p.find(g + 'extensions/' + g + 'course').text]
                          for p in gpx.iter(g + 'trkpt')]
                out['workouts'].append({'start': w.get('startDate'), 'stats': stats, 'points': points,
                                        'events': len(w.findall('WorkoutEvent'))})
            print(json.dumps(out))
            """
        let py = try runProcess("/usr/bin/env", ["python3", "-c", script, try folder + "/export.zip"])
        XCTAssertEqual(py.status, 0, py.stderr)
        return try JSONSerialization.jsonObject(with: Data(py.stdout.utf8)) as! [String: Any]
    }

    func testAppleStatisticsStandBesideTsdbs() throws {
        let python = try pythonView()["workouts"] as! [[String: Any]]
        let r = try tsdbShell([
            "workouts", "--with", "HeartRate", "--format", "json", "--store", try folder + "/store", "--tz", "UTC",
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        let rows = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [[String: Any]]
        XCTAssertEqual(rows.count, python.count)
        XCTAssertGreaterThan(rows.count, 1)
        for (row, w) in zip(rows, python) {
            let hr = (w["stats"] as! [String: [String: String]])["HKQuantityTypeIdentifierHeartRate"]!
            XCTAssertEqual(row["apple_min"] as? Double, Double(hr["minimum"]!))
            XCTAssertEqual(row["apple_mean"] as? Double, Double(hr["average"]!))
            XCTAssertEqual(row["apple_max"] as? Double, Double(hr["maximum"]!))
            XCTAssertNotNil(row["HeartRate_mean"], "tsdb's own figure from the samples")
            XCTAssertEqual(row["route"] as? String, "yes")
        }
        // Events, statistics and routes are kept in the workout's metadata; a route's own metadata
        // stays with the route.
        let s = try Store(at: try folder + "/store")
        var cursor = try s.samples(of: "HKWorkoutTypeIdentifier")
        let first = try XCTUnwrap(try cursor.next())
        var text = try XCTUnwrap(first.metadata.string)
        let meta = try text.withUTF8 { try JSONValue.parse(UnsafeRawBufferPointer($0)) }
        guard case .array(let events)? = meta["HKWorkoutEvents"] else { return XCTFail("no events: \(text)") }
        XCTAssertEqual(events.count, python[0]["events"] as? Int)
        XCTAssertNil(meta["HKMetadataKeySyncVersion"])
        guard case .array(let routes)? = meta["HKWorkoutRoutes"] else { return XCTFail("no route: \(text)") }
        XCTAssertEqual(routes.first?["metadata"]?["HKMetadataKeySyncVersion"]?.string, "2")
    }

    func testARouteComesBackAsGPXGeoJSONAndCSV() throws {
        let python = try pythonView()["workouts"] as! [[String: Any]]
        let store = try folder + "/store"
        let list = try tsdbShell(["workouts", "--format", "csv", "--store", store, "--tz", "Europe/Paris"])
        let starts = list.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",")[1] }
        XCTAssertEqual(starts.count, python.count)
        for (start, w) in zip(starts, python).prefix(3) {
            let points = w["points"] as! [[String]]
            let gpx = try tsdbShell(["workouts", "--route", String(start), "--store", store, "--tz", "Europe/Paris"])
            XCTAssertEqual(gpx.status, 0, gpx.stderr)
            let gpxFile = try folder + "/route.gpx"
            try Data(gpx.stdout.utf8).write(to: URL(fileURLWithPath: gpxFile))
            let reread = try runProcess(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    """
                    import sys, json, xml.etree.ElementTree as ET
                    g = '{http://www.topografix.com/GPX/1/1}'
                    gpx = ET.parse(sys.argv[1]).getroot()
                    print(json.dumps([[p.get('lat'), p.get('lon'), p.find(g + 'ele').text, p.find(g + 'time').text,
                        p.find(g + 'extensions/' + g + 'speed').text, p.find(g + 'extensions/' + g + 'course').text]
                        for p in gpx.iter(g + 'trkpt')]))
                    """,
                    gpxFile,
                ])
            XCTAssertEqual(reread.status, 0, reread.stderr)
            XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(reread.stdout.utf8)) as? [[String]], points)

            let geo = try tsdbShell([
                "workouts", "--route", String(start), "--format", "geojson", "--store", store, "--tz", "Europe/Paris",
            ])
            let object = try JSONSerialization.jsonObject(with: Data(geo.stdout.utf8)) as! [String: Any]
            let feature = (object["features"] as! [[String: Any]])[0]
            let coordinates = (feature["geometry"] as! [String: Any])["coordinates"] as! [[Double]]
            XCTAssertEqual(coordinates.count, points.count)
            XCTAssertEqual(coordinates.first, points.first.map { [Double($0[1])!, Double($0[0])!, Double($0[2])!] })

            let csv = try tsdbShell([
                "workouts", "--route", String(start), "--format", "csv", "--store", store, "--tz", "Europe/Paris",
            ])
            XCTAssertEqual(csv.stdout.split(separator: "\n").count, points.count + 1)
        }
        let none = try tsdbShell(["workouts", "--route", "1999-01-01", "--store", store])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("no workout starts at 1999-01-01"), none.stderr)
        let many = try tsdbShell(["workouts", "--route", "2025-03", "--store", store, "--tz", "Europe/Paris"])
        XCTAssertNotEqual(many.status, 0)
        XCTAssertTrue(many.stderr.contains("workouts start at 2025-03"), many.stderr)
    }

    func testBloodPressureReadingsSideBySide() throws {
        let (_, written) = try Self.shared.get()
        let r = try tsdbShell(["query", "BloodPressure", "--format", "csv", "--store", try folder + "/store"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n")
        XCTAssertEqual(lines.first, "start,end,systolic,diastolic,unit,source")
        XCTAssertEqual(lines.count - 1, written.correlations)
        XCTAssertGreaterThan(written.correlations, 1)
        for line in lines.dropFirst() { XCTAssertTrue(line.hasSuffix(",,121,79,mmHg,Omron Connect"), String(line)) }
    }

    func testStatsShowsTheExportDateAndCharacteristics() throws {
        let r = try tsdbShell(["stats", "--store", try folder + "/store"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("  exported 2025-03-16 08:00:00 +0100\n"), r.stdout)
        XCTAssertTrue(
            r.stdout.contains("  me: date of birth 1985-04-12, biological sex Female, blood type NotSet\n"), r.stdout)
    }

    func testAnElectrocardiogramIsAVoltageSeriesLinkedToItsRecording() throws {
        let (_, written) = try Self.shared.get()
        XCTAssertEqual(written.electrocardiograms, 1)
        let s = try Store(at: try folder + "/store")
        var cursor = try s.samples(of: "HKDataTypeIdentifierElectrocardiogram")
        let ecg = try XCTUnwrap(try cursor.next())
        XCTAssertNil(try cursor.next())
        var text = try XCTUnwrap(ecg.metadata.string)
        let meta = try text.withUTF8 { try JSONValue.parse(UnsafeRawBufferPointer($0)) }
        XCTAssertEqual(meta["Classification"]?.string, "Sinus Rhythm")
        XCTAssertEqual(meta["Sample Rate"]?.string, "512 hertz")
        XCTAssertEqual(meta["file"]?.string, "/electrocardiograms/ecg_2025-03-03.csv")
        // The voltages as Python reads the CSV: digits, and the instant of each at 512 Hz.
        let py = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
                    + "t=z.read('apple_health_export/electrocardiograms/ecg_2025-03-03.csv').decode().split('\\n\\n'); "
                    + "print('\\n'.join(v for v in t[2].split('\\n') if v))",
                try folder + "/export.zip",
            ])
        let expected = py.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(expected.count, 30 * 512)
        var voltages = try s.samples(
            of: "HKElectrocardiogramVoltage", from: ecg.start.microseconds, to: ecg.end.microseconds)
        var values: [String] = []
        var instants: [Int64] = []
        while let v = try voltages.next() {
            values.append(v.value.description)
            instants.append(v.start.microseconds - ecg.start.microseconds)
        }
        XCTAssertEqual(values, expected)
        XCTAssertEqual(instants[512], 1_000_000, "one second after 512 readings")
        XCTAssertEqual(instants[1], 1953, "1/512 s, to the microsecond")
        XCTAssertEqual(ecg.end.microseconds - ecg.start.microseconds, 30_000_000)
    }
}
