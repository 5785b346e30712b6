import Foundation
import Testing

@testable import TSDB

@Suite(.serialized) struct VerifyTests {
    func makeStore(_ folder: TemporaryFolder) throws -> StoreLayout {
        try generate(folder.path, days: 20, seed: 31)
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        return layout
    }

    func repair(_ layout: StoreLayout, _ report: StoreVerifier.Report) throws {
        var o = CompactionOptions()
        o.rebuild = report.findings.contains { $0.kind == .damagedManifest }
        o.rebuildMonths = report.monthsToRepair
        _ = try Compactor(layout: layout, options: o).run()
    }

    func heartRateSegment(_ layout: StoreLayout) throws -> Manifest.SegmentEntry {
        try Manifest.read(at: layout.manifestPath).segments.first { $0.type.hasSuffix("HeartRate") && $0.month == 4 }!
    }

    @Test func cleanStoreHasNoFindings() throws {
        let folder = TemporaryFolder("verify")
        defer { folder.cleanup() }
        let layout = try makeStore(folder)
        for deep in [false, true] {
            let r = try StoreVerifier(layout: layout).verify(deep: deep)
            #expect(r.findings.isEmpty, "\(r.findings)")
            #expect(r.segmentsChecked > 0 && r.blocksChecked >= r.segmentsChecked && r.samplesChecked > 1000)
        }
    }

    @Test func flippedSegmentByteIsFoundAndRepaired() throws {
        let folder = TemporaryFolder("verify")
        defer { folder.cleanup() }
        let layout = try makeStore(folder)
        let entry = try heartRateSegment(layout)
        let path = layout.storeDirectory + "/" + entry.path
        try flipByte(200, of: entry, in: layout.storeDirectory)
        let report = try StoreVerifier(layout: layout).verify(deep: false)
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.kind == .damagedSegment && report.problems.first?.path == path)
        #expect(report.monthsToRepair == [MonthIndex(year: 2025, month: 4)])
        try repair(layout, report)
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
    }

    @Test func missingSegmentFileIsFoundAndRepaired() throws {
        let folder = TemporaryFolder("verify")
        defer { folder.cleanup() }
        let layout = try makeStore(folder)
        try FileManager.default.removeItem(atPath: layout.storeDirectory + "/" + heartRateSegment(layout).path)
        let report = try StoreVerifier(layout: layout).verify(deep: false)
        #expect(
            report.problems.first?.kind == .damagedSegment
                && report.problems.first?.detail.contains("cannot open") == true)
        try repair(layout, report)
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
    }

    @Test func damagedManifestIsFoundAndRebuilt() throws {
        let folder = TemporaryFolder("verify")
        defer { folder.cleanup() }
        let layout = try makeStore(folder)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: layout.manifestPath)))
        bytes[30] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: layout.manifestPath))
        let report = try StoreVerifier(layout: layout).verify(deep: false)
        #expect(report.problems.first?.kind == .damagedManifest)
        try repair(layout, report)
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
    }

    @Test func deepVerifyComparesWithTheRawFiles() throws {
        let folder = TemporaryFolder("verify")
        defer { folder.cleanup() }
        let layout = try makeStore(folder)
        // Edit a raw file behind the store's back: drop one sample, add another.
        let path = folder.path + "/raw/2025/04/2025-04-02.json"
        var lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        let removed = lines.remove(at: 6)
        lines.insert(
            #"    {"type":"HKQuantityTypeIdentifierBodyMass","start":"2025-04-02T08:00:00+02:00","#
                + #""end":"2025-04-02T08:00:00+02:00","value":71.9,"unit":"kg"},"#,
            at: 6)
        try lines.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)

        let quick = try StoreVerifier(layout: layout).verify(deep: false)
        #expect(quick.problems.isEmpty)
        #expect(quick.findings.contains { $0.kind == .rawFileChanged && $0.path == path })

        let deep = try StoreVerifier(layout: layout).verify(deep: true)
        let kinds = Set(deep.problems.map(\.kind))
        #expect(kinds.contains(.missingSegment) || kinds.contains(.missingSamples))
        #expect(
            deep.problems.contains { ($0.kind == .missingSegment || $0.kind == .missingSamples) && $0.path == path })
        let removedType = removed.contains("HeartRate") ? "HKQuantityTypeIdentifierHeartRate" : nil
        if let removedType {
            #expect(deep.problems.contains { $0.kind == .unexpectedSamples && $0.type == removedType })
        }
        _ = try Compactor(layout: layout).run()
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
    }
}
