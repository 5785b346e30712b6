import Foundation
import XCTest

@testable import TSDB

/// A reading in a day file and again in an Apple Health export is stored once (segment-v3 §5.4),
/// whichever arrived first, and `verify --deep` accounts for both copies.
final class SameReadingTests: XCTestCase {
    static let dayFile = """
        {"date":"2025-03-01","samples":[
        {"type":"HKQuantityTypeIdentifierHeartRate","start":"2025-03-01T08:00:00+01:00",\
        "end":"2025-03-01T08:00:00+01:00","value":72.0,"unit":"count/min","source":"Watch"},
        {"type":"HKQuantityTypeIdentifierHeartRate","start":"2025-03-01T08:05:00+01:00",\
        "end":"2025-03-01T08:05:00+01:00","value":75,"unit":"count/min","source":"Watch"},
        {"type":"HKQuantityTypeIdentifierHeartRate","start":"2025-03-01T08:20:00+01:00",\
        "end":"2025-03-01T08:20:00+01:00","value":80,"unit":"count/min","source":"Phone"}
        ]}

        """

    /// The 08:00 reading again (written at the phone's +02:00, digits `72`), 08:20 from another
    /// source with the same value and instant as the day file's (a different reading), and 08:10.
    static let export = """
        <HealthData locale="en_US">
         <ExportDate value="2025-06-01 09:00:00 +0200"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" value="72"
          creationDate="2025-03-01 09:00:30 +0200" startDate="2025-03-01 09:00:00 +0200"
          endDate="2025-03-01 09:00:00 +0200"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" value="80"
          startDate="2025-03-01 09:20:00 +0200" endDate="2025-03-01 09:20:00 +0200"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" value="77"
          startDate="2025-03-01 09:10:00 +0200" endDate="2025-03-01 09:10:00 +0200"/>
        </HealthData>

        """

    func heartRates(_ store: String) throws -> [Sample] {
        var cursor = try Store(at: store).samples(of: "HKQuantityTypeIdentifierHeartRate")
        var out: [Sample] = []
        while let s = try cursor.next() { out.append(s) }
        return out
    }

    func testAReadingInADayFileAndInTheExportIsStoredOnce() throws {
        let folder = TemporaryFolder("same-reading")
        defer { folder.cleanup() }
        folder.write(Self.export, to: "export.xml")
        folder.write(Self.dayFile, to: "store/raw/2025/03/2025-03-01.json")
        let store = folder.path + "/store"
        XCTAssertEqual(try tsdbShell(["compact", store]).status, 0)
        let r = try tsdbShell(["import", folder.path + "/export.xml", "--store", store])
        XCTAssertEqual(r.status, 0, r.stderr)
        let stored = try heartRates(store)
        XCTAssertEqual(stored.map { $0.start.microseconds / 60_000_000 % 60 }, [0, 5, 10, 20, 20])
        let eight = try XCTUnwrap(stored.first)
        XCTAssertEqual(eight.value.description, "72.0")
        XCTAssertEqual(eight.start.description, "2025-03-01T08:00:00+01:00", "the day file's copy is kept")
        XCTAssertEqual(
            Set(stored.filter { $0.value.description == "80" }.map { $0.source.string }), ["Watch", "Phone"])
        let verify = try tsdbShell(["verify", "--deep", "--store", store])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)

        // Incrementally (the export first, then the day file) or from scratch: the same samples.
        let other = folder.path + "/other"
        XCTAssertEqual(try tsdbShell(["import", folder.path + "/export.xml", "--store", other]).status, 0)
        folder.write(Self.dayFile, to: "other/raw/2025/03/2025-03-01.json")
        XCTAssertEqual(try tsdbShell(["compact", other]).status, 0)
        XCTAssertEqual(try heartRates(other), stored)
        XCTAssertEqual(try tsdbShell(["compact", "--rebuild", other]).status, 0)
        XCTAssertEqual(try heartRates(other), stored)
    }

    func testTrailingZerosAndInputsDecideWhatIsOneReading() {
        var strings = ByteInterner()
        let watch = strings.intern("Watch")
        let meta = strings.intern("{\"a\":1}")
        func packed(
            _ mantissa: Int64, scale: UInt8, export: Bool = true, source: Int32 = watch,
            metadata: Int32 = PackedSample.absent
        ) -> PackedSample {
            PackedSample(
                start: 100, end: 100, mantissa: mantissa, forms: UInt64(scale), type: 0, unit: PackedSample.absent,
                source: source, device: PackedSample.absent, metadata: metadata,
                valueTag: ValueTag.decimalBase + scale, fromExport: export)
        }
        // (samples, how many stay, how many of those are the day file's)
        let cases: [([PackedSample], Int, Int)] = [
            ([packed(72, scale: 0, export: false), packed(720, scale: 1)], 1, 1),
            ([packed(72, scale: 0, export: false), packed(7200, scale: 2, metadata: meta)], 1, 1),
            ([packed(72, scale: 0, export: false), packed(721, scale: 1)], 2, 1),
            ([packed(72, scale: 0, export: false), packed(72, scale: 0, source: PackedSample.null)], 2, 1),
            ([packed(0, scale: 0, export: false), packed(0, scale: 3), packed(0, scale: 18, metadata: meta)], 2, 1),
            ([packed(72, scale: 0), packed(720, scale: 1, metadata: meta)], 2, 0),  // one input: both stay
            ([packed(72, scale: 0, export: false), packed(720, scale: 1, export: false, metadata: meta)], 2, 2),
        ]
        for (input, expected, fromDayFiles) in cases {
            for order in [input, input.reversed()] {
                var s = order
                Compactor.sortAndDeduplicate(&s)
                Compactor.mergeSameReadings(&s)
                XCTAssertEqual(s.count, expected, "\(input.map(\.mantissa))")
                XCTAssertEqual(s.count { !$0.fromExport }, fromDayFiles, "\(input.map(\.mantissa))")
            }
        }
    }
}
