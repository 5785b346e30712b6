import Foundation
import XCTest

@testable import TSDB
@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// Reading Apple Health's export.zip: the real shared sample, and the known ways real exports are
/// broken, in zips that Python's zipfile writes (deflate, ZIP64, translated member names).
final class ExportReaderTests: XCTestCase {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/data/apple-health-export-sample/test-export.zip").standardized.path

    /// Writes `members` (name → text) into a zip with Python's zipfile.
    func zip(_ members: [(String, String)], at path: String, zip64: Bool = false, stored: Bool = false) throws {
        let folder = TemporaryFolder("zip-src")
        defer { folder.cleanup() }
        var script = "import zipfile, sys\n"
        script += "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.\(stored ? "ZIP_STORED" : "ZIP_DEFLATED"))\n"
        for (k, (name, text)) in members.enumerated() {
            folder.write(text, to: "m\(k)")
            script += "with open('\(folder.path)/m\(k)', 'rb') as f: data = f.read()\n"
            script +=
                "with z.open(\(pythonString(name)), 'w', force_zip64=\(zip64 ? "True" : "False")) as w: w.write(data)\n"
        }
        script += "z.close()\n"
        let r = try runProcess("/usr/bin/env", ["python3", "-c", script, path])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func pythonString(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    func testTheRealSampleIsCountedRecordForRecord() throws {
        let inventory = try ExportReader.inventory(of: Self.sample)
        // Python's own parser (after the DOCTYPE, which it does not need) counts the same document.
        let script = """
            import zipfile, sys, re, collections, json, xml.etree.ElementTree as ET
            z = zipfile.ZipFile(sys.argv[1])
            data = z.read('apple_health_export/export.xml')
            data = re.sub(rb'<!DOCTYPE.*?]>', b'', data, flags=re.S)
            root = ET.fromstring(data)
            c = collections.Counter(r.get('type') for r in root.iter('Record'))
            print(json.dumps({'records': c, 'beats': len(list(root.iter('InstantaneousBeatsPerMinute'))),
                'metadata': len(list(root.iter('MetadataEntry'))), 'export': root.find('ExportDate').get('value')}))
            """
        let r = try runProcess("/usr/bin/env", ["python3", "-c", script, Self.sample])
        XCTAssertEqual(r.status, 0, r.stderr)
        let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(inventory.records, expected["records"] as? [String: Int])
        XCTAssertEqual(inventory.records.values.reduce(0, +), 8038)
        XCTAssertEqual(inventory.heartbeats, expected["beats"] as? Int)
        XCTAssertEqual(inventory.metadataEntries, expected["metadata"] as? Int)
        XCTAssertEqual(inventory.exportDate, expected["export"] as? String)
        XCTAssertEqual(inventory.xmlName, "apple_health_export/export.xml")
        XCTAssertEqual(inventory.otherMembers.filter { $0.hasSuffix(".gpx") }.count, 2)
    }

    /// An export with every known breakage: iOS 16's unclosed ATTLIST, a `\x0b` and a raw `>` in
    /// values, entities, a curly apostrophe and an emoji in a source name, elements not imported.
    static let brokenExport = try! String(
        contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Vectors/broken-export.xml").path, encoding: .utf8)

    func testKnownBreakagesOfRealExportsStillRead() throws {
        let folder = TemporaryFolder("broken-export")
        defer { folder.cleanup() }
        // A French phone names the file exportar.xml: it is found by its <HealthData> root.
        let members = [
            ("apple_health_export/export_cda.xml", "<ClinicalDocument><broken"),
            ("apple_health_export/exportar.xml", Self.brokenExport),
            ("apple_health_export/workout-routes/route_2025-03-01_6.00pm.gpx", "<gpx/>"),
        ]
        for (zip64, stored) in [(false, false), (true, false), (false, true)] {
            let path = folder.path + "/export-\(zip64)-\(stored).zip"
            try zip(members, at: path, zip64: zip64, stored: stored)
            let inv = try ExportReader.inventory(of: path)
            XCTAssertEqual(inv.xmlName, "apple_health_export/exportar.xml")
            XCTAssertEqual(
                inv.records,
                [
                    "HKQuantityTypeIdentifierHeartRate": 1, "HKQuantityTypeIdentifierStepCount": 1,
                    "HKQuantityTypeIdentifierBloodPressureSystolic": 1,
                    "HKQuantityTypeIdentifierBloodPressureDiastolic": 1,
                ], "zip64 \(zip64) stored \(stored)")
            XCTAssertEqual(inv.workouts, ["HKWorkoutActivityTypeRunning": 1])
            XCTAssertEqual(inv.correlations, ["HKCorrelationTypeIdentifierBloodPressure": 1])
            XCTAssertEqual(
                [inv.workoutEvents, inv.workoutStatistics, inv.workoutRoutes, inv.activitySummaries], [1, 1, 1, 1])
            XCTAssertEqual(inv.otherElements, ["ClinicalRecord": 1])
            XCTAssertTrue(inv.sources.contains("Zoë’s Apple\u{A0}Watch 💓 & co"), "\(inv.sources)")
            XCTAssertTrue(inv.sources.contains("iPhone\u{0B}de Zoë"), "control characters are kept")
            XCTAssertEqual(inv.firstDate, "2025-03-01 07:00:00 +0100")
            XCTAssertEqual(inv.lastDate, "2025-03-01 18:30:00 +0100")
            XCTAssertEqual(inv.me.count, 2)
        }
        // The same document as a bare export.xml and as an unzipped folder.
        folder.write(Self.brokenExport, to: "apple_health_export/export.xml")
        XCTAssertEqual(try ExportReader.inventory(of: folder.path + "/apple_health_export/export.xml").records.count, 4)
        XCTAssertEqual(try ExportReader.inventory(of: folder.path).records.count, 4)
    }

    func testChunkBoundariesDoNotChangeWhatIsRead() throws {
        // Blank lines too, so line counting meets newlines next to each other.
        let bytes = Array(Self.brokenExport.replacingOccurrences(of: "\n", with: "\n\n").utf8)
        func elements(chunks: [Int]) throws -> [String] {
            var scanner = HealthXMLScanner(source: "test")
            var out: [String] = []
            var o = 0
            let record = { (e: HealthXMLScanner.Element) in
                out.append("\(e.kind) \(e.name) \(e.attributes.map { "\($0.name)=\($0.value)" }) \(e.line)")
                // The oracle: the `<` at the element's offset, after as many newlines as its line says.
                XCTAssertEqual(bytes[e.offset], UInt8(ascii: "<"))
                XCTAssertEqual(e.line, 1 + bytes[..<e.offset].count { $0 == 0x0A }, "\(e.name) at \(e.offset)")
            }
            for n in chunks where o < bytes.count {
                let end = min(bytes.count, o + n)
                try bytes[o..<end].withUnsafeBytes { try scanner.feed($0) { record($0) } }
                o = end
            }
            try scanner.finish { record($0) }
            return out
        }
        let whole = try elements(chunks: [bytes.count])
        XCTAssertEqual(whole.count, 21)
        var random = SplitMix64(seed: 3)
        for round in 0..<50 {
            let chunks = (0..<bytes.count).map { _ in Int(random.next() % (round < 25 ? 7 : 300)) + 1 }
            XCTAssertEqual(try elements(chunks: chunks), whole, "round \(round)")
        }
    }

    /// Remembered ids always equal interning the decoded value, whatever the order values come
    /// in, across evictions from the short list, rebuilds of its buffer and after forgetting (a
    /// new chunk's table).
    func testRecentIDsAgreeWithInterningTheDecodedValue() throws {
        let pool: [[UInt8]] =
            [
                Array("count/min".utf8), Array("Tom&apos;s Watch".utf8), Array("Tom's Watch".utf8), [],
                Array("A &amp; B".utf8), [0x41, 0xFF, 0x42], Array("Jo\u{2019}s iPhone 🫀".utf8),
            ] + (0..<10).map { Array("Source \($0)".utf8) }
            // Long values (devices are ~150 bytes) make the list's buffer be rebuilt often.
            + (0..<4).map { Array(String(repeating: "<<HKDevice \($0)>>, ", count: 30 * ($0 + 1)).utf8) }
        var random = SplitMix64(seed: 11)
        var recent = RecentIDs()
        var parsed = ParsedDayFile()
        for step in 0..<5_000 {
            if step % 1_000 == 999 {
                recent.forget()
                parsed = ParsedDayFile()
            }
            let raw = pool[Int(random.next() % UInt64(pool.count))]
            let id = raw.withUnsafeBytes { recent.id($0, &parsed) }
            var oracle = parsed
            let expected = raw.withUnsafeBytes { oracle.intern(HealthXMLScanner.decode($0)) }
            XCTAssertEqual(id, expected, "step \(step): \(raw)")
        }
        XCTAssertNil(recent.id(nil, &parsed))
    }

    /// Metadata written from bytes is the canonical JSON the string form writes (JSONText), for
    /// members in any order with repeated keys, entities, control characters, non-ASCII and
    /// invalid UTF-8, numbers and nested JSON.
    func testMetadataMembersWriteWhatJSONTextWrites() throws {
        let texts: [[UInt8]] = [
            Array("HKCreationDate".utf8), Array("HKMetadataKeyHeartRateMotionContext".utf8), Array("a".utf8),
            Array("Ab".utf8), [], Array("Tom&apos;s &#x1F600; &amp; \u{0B}".utf8), Array("line\nbreak\t\"q\" \\".utf8),
            [0x41, 0xFF, 0xC3], Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8), Array("&bogus; &#99999999;".utf8),
            Array("K".utf8), Array("\u{212A}".utf8),  // KELVIN SIGN: the same String as K, in other bytes
        ]
        var random = SplitMix64(seed: 5)
        func pick() -> [UInt8] { texts[Int(random.next() % UInt64(texts.count))] }
        for round in 0..<2_000 {
            var members = MetadataMembers()
            var oracle: [(String, JSONText)] = []
            for _ in 0..<Int(random.next() % 6) {
                let (key, value) = (pick(), pick())
                switch random.next() % 3 {
                case 0:
                    key.withUnsafeBytes { k in value.withUnsafeBytes { members.append(xmlKey: k, xmlValue: $0) } }
                    oracle.append(
                        key.withUnsafeBytes { k in
                            value.withUnsafeBytes { (HealthXMLScanner.decode(k), .string(HealthXMLScanner.decode($0))) }
                        })
                case 1:
                    let (k, v) = (String(decoding: key, as: UTF8.self), String(decoding: value, as: UTF8.self))
                    members.append(k, string: v)
                    oracle.append((k, .string(v)))
                default:
                    let k = String(decoding: key, as: UTF8.self)
                    let number = String(random.next() % 1000) + ".5"
                    members.append(k, json: Array(number.utf8))
                    oracle.append((k, .number(number)))
                }
            }
            var written: [UInt8] = []
            if !members.isEmpty { members.writeJSON(into: &written) }
            var expected: [UInt8] = []
            if !oracle.isEmpty { JSONText.object(oracle).append(to: &expected) }
            XCTAssertEqual(
                String(decoding: written, as: UTF8.self), String(decoding: expected, as: UTF8.self), "round \(round)")
        }
    }

    func testDamagedArchivesAreClearErrors() throws {
        let folder = TemporaryFolder("damaged-export")
        defer { folder.cleanup() }
        let path = folder.path + "/export.zip"
        let big = Self.brokenExport + String(repeating: " <Record type=\"T\" value=\"1\"/>\n", count: 20_000)
        try zip([("apple_health_export/export.xml", big)], at: path)
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: path)))

        // Cut off mid-way: no end of central directory.
        folder.write(bytes: Array(good.prefix(good.count / 2)), to: "cut.zip")
        let cut = caught { _ = try ExportReader.inventory(of: folder.path + "/cut.zip") }
        XCTAssertTrue(cut?.message.contains("not a readable zip archive") ?? false, "\(String(describing: cut))")

        // Damaged compressed bytes: bad deflate data or a CRC mismatch, naming the member.
        var damaged = good
        for k in 200..<260 { damaged[k] ^= 0x5A }
        folder.write(bytes: damaged, to: "damaged.zip")
        let bad = caught { _ = try ExportReader.inventory(of: folder.path + "/damaged.zip") }
        XCTAssertTrue(
            bad?.message.contains("member apple_health_export/export.xml") ?? false, "\(String(describing: bad))")

        // An XML document that ends inside a tag.
        folder.write(String(Self.brokenExport.prefix(1500)), to: "truncated.xml")
        let truncated = caught { _ = try ExportReader.inventory(of: folder.path + "/truncated.xml") }
        XCTAssertTrue(truncated?.message.contains("ends inside markup") ?? false, "\(String(describing: truncated))")
        XCTAssertNotNil(truncated?.line)

        let notExport = folder.path + "/other.zip"
        try zip([("notes/a.xml", "<notes/>")], at: notExport)
        let wrong = caught { _ = try ExportReader.inventory(of: notExport) }
        XCTAssertTrue(wrong?.message.contains("no member whose root element is <HealthData>") ?? false)
    }

    func testAGeneratedExportIsReadBackAsWritten() throws {
        let folder = TemporaryFolder("generated-export")
        defer { folder.cleanup() }
        var options = HealthDataGenerator.Options()
        options.days = 20
        options.seed = 9
        var generator = AppleExportGenerator(options: options)
        generator.xmlName = "apple_health_export/exportar.xml"  // a Spanish phone
        let path = folder.path + "/export.zip"
        let written = try generator.write(to: path)
        let inv = try ExportReader.inventory(of: path)
        XCTAssertEqual(inv.records, written.records)
        XCTAssertGreaterThan(written.records["HKQuantityTypeIdentifierHeartRate"] ?? 0, 10_000)
        XCTAssertEqual(inv.workouts.values.reduce(0, +), written.workouts)
        XCTAssertEqual(inv.workoutRoutes, written.workouts)
        XCTAssertEqual(inv.correlations.values.reduce(0, +), written.correlations)
        XCTAssertEqual(inv.activitySummaries, 20)
        XCTAssertEqual(inv.heartbeats, written.heartbeats)
        XCTAssertEqual(inv.xmlBytes, written.xmlBytes)
        XCTAssertNotNil(inv.exportDate)
        XCTAssertEqual(inv.otherMembers.filter { $0.hasSuffix(".gpx") }.count, written.workouts)
        // Python's zipfile reads it too and finds every CRC right.
        let check = try runProcess(
            "/usr/bin/env",
            ["python3", "-c", "import zipfile, sys; print(zipfile.ZipFile(sys.argv[1]).testzip())", path])
        XCTAssertEqual(check.stdout, "None\n", check.stderr)
        XCTAssertNotNil(caught { try generator.write(to: path) }, "an existing file is never replaced")
    }

    /// Elements scanned on the reading thread and handed over in batches are the elements the
    /// scanner gives, in order, with their lines and offsets; a failure on either side ends the
    /// stream with that failure once the reading thread has stopped.
    func testBatchesHandOverTheScannedElementsAndFailures() throws {
        let folder = TemporaryFolder("batches")
        defer { folder.cleanup() }
        let path = folder.path + "/export.zip"
        try writeGeneratedExport(days: 10, seed: 4, to: path)
        func describe(_ e: HealthXMLScanner.Element) -> String {
            "\(e.kind) \(e.name) \(e.attributes.map { "\($0.name)=\($0.value)" }) \(e.line):\(e.offset)"
        }
        var direct: [String] = []
        var inventory = ExportInventory(source: path)
        let scanned: (HealthXMLScanner.Element, inout ExportInventory) -> Void = { e, _ in direct.append(describe(e)) }
        try ExportReader.stream(path, into: &inventory, progress: { _, _ in }, scanned)
        var batched: [String] = []
        var batches = 0
        var lastProgress = 0
        try ExportReader.streamBatches(path) { (batch) throws(TSDBError) in
            batches += 1
            XCTAssertGreaterThanOrEqual(batch.progress.done, lastProgress)
            lastProgress = batch.progress.done
            try batch.withElements { batched.append(describe($0)) }
        }
        XCTAssertGreaterThan(batches, 10)
        XCTAssertEqual(lastProgress, inventory.xmlBytes)
        XCTAssertEqual(batched.count, direct.count)
        XCTAssertTrue(batched == direct, "the batches' elements differ from the scanner's")

        // The consumer gives up: its error comes back, and the reader is not left running.
        var taken = 0
        let stop = caught {
            try ExportReader.streamBatches(path) { (_) throws(TSDBError) in
                taken += 1
                if taken == 3 { throw TSDBError.invalidInput("enough") }
            }
        }
        XCTAssertEqual(stop?.message, "enough")
        XCTAssertEqual(taken, 3)

        // The XML is damaged half-way: the batches before it arrive, then the scanner's error.
        let archive = try ZipArchive(path: path)
        var whole: [UInt8] = []
        try ZipInflater.stream(try ExportReader.healthDataMember(archive), of: archive) {
            whole += $0
            return true
        }
        let cut = whole[(whole.count * 2 / 3)...].firstIndex(of: 0x0A)! + 1  // between two elements
        folder.write(bytes: Array(whole[..<cut]) + Array("<Record type=>\n".utf8) + whole[cut...], to: "export.xml")
        let xml = folder.path + "/export.xml"
        var before = 0
        let damaged = caught {
            try ExportReader.streamBatches(xml) { (batch) throws(TSDBError) in
                try batch.withElements { _ in before += 1 }
            }
        }
        XCTAssertNotNil(damaged?.line, "\(String(describing: damaged))")
        XCTAssertGreaterThan(before, direct.count / 2)
    }

    func testImportCheckReportsWithoutWriting() throws {
        let folder = TemporaryFolder("import-check")
        defer { folder.cleanup() }
        let r = try tsdbShell(["import", Self.sample, "--check", "--store", folder.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("8,038 records"), r.stdout)
        XCTAssertTrue(r.stdout.contains("heartbeat series"), r.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "--check writes nothing")
    }

    func testImportRefusesAFolderThatIsNotAStore() throws {
        let folder = TemporaryFolder("import-not-store")
        defer { folder.cleanup() }
        folder.write("my notes", to: "notes.txt")
        let r = try tsdbShell(["import", Self.sample, "--store", folder.path])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("found neither raw/"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["notes.txt"])
    }
}
