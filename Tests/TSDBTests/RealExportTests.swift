import Foundation
import Testing

@testable import TSDB

/// The real Apple Health export in ../shared/data (27 types, up to 400 records each).
@Suite(.serialized) struct RealExportTests {
    static let zip = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/data/apple-health-export-sample/test-export.zip").standardized.path

    @Test(.enabled(if: FileManager.default.fileExists(atPath: zip), "needs ../shared/data"))
    func realExportCompactsLosslessly() throws {
        let folder = TemporaryFolder("real-export")
        defer { folder.cleanup() }
        let samples = try AppleHealthExport.load(zip: Self.zip, into: folder.path + "/unzipped")
        #expect(samples.count > 7_000)
        let files = try AppleHealthExport.writeDayFiles(samples, raw: folder.path + "/health/raw")
        let before = snapshot(folder.path + "/health/raw")

        let report = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path + "/health")).run()
        #expect(report.skipped.isEmpty, "\(report.skipped)")
        #expect(report.filesRead == files)

        let store = try Store(at: folder.path + "/health")
        let stored = try storedSamples(store)
        #expect(Set(stored) == Set(samples))
        #expect(stored.count == Set(samples).count)
        #expect(store.types.count == Set(samples.map(\.type)).count)
        let heartRate = store.types.first { $0.type == "HKQuantityTypeIdentifierHeartRate" }
        #expect(heartRate?.sampleCount == samples.filter { $0.type == "HKQuantityTypeIdentifierHeartRate" }.count)

        let after = snapshot(folder.path + "/health/raw")
        #expect(before.keys.sorted() == after.keys.sorted() && before.allSatisfy { after[$0.key]?.0 == $0.value.0 })
    }
}
