import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized) struct StoreTests {
    func compact(_ dir: String, blockSamples: Int = 256) throws -> CompactionReport {
        var o = CompactionOptions()
        o.blockSamples = blockSamples
        o.batchSize = 5
        return try Compactor(layout: StoreLayout(appleHealthDirectory: dir), options: o).run()
    }

    @Test(arguments: [(UInt64(1), BlockCodec.zstd), (2, .lz4), (3, .none)])
    func rawToSegmentsToExportIsLossless(seed: UInt64, codec: BlockCodec) throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 40, seed: seed)
        var o = CompactionOptions()
        o.codec = codec
        o.blockSamples = 200
        let report = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path), options: o).run()
        #expect(report.skipped.isEmpty && !report.isPartial)

        let raw = try rawSampleSet(folder.path + "/raw")
        let store = try Store(at: folder.path)
        let stored = try storedSamples(store)
        #expect(stored.count == raw.count, "every distinct raw sample stored exactly once")
        #expect(Set(stored) == Set(raw.keys))
        #expect(report.samplesStored == raw.count && report.duplicatesDropped > 0)

        try store.exportDayFiles(to: folder.path + "/exported")
        let exported = try rawSampleSet(folder.path + "/exported")
        #expect(Set(exported.keys) == Set(raw.keys))
    }

    @Test func crossMidnightSampleStoredOnce() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let sleep =
            #"{"type":"HKCategoryTypeIdentifierSleepAnalysis","start":"2025-01-15T23:10:00+01:00","#
            + #""end":"2025-01-16T06:40:00+01:00","value":3,"unit":null,"source":"w","device":"Apple Watch"}"#
        folder.write(#"{"date":"2025-01-15","samples":[\#(sleep)]}"#, to: "raw/2025/01/2025-01-15.json")
        folder.write(#"{"date":"2025-01-16","samples":[\#(sleep)]}"#, to: "raw/2025/01/2025-01-16.json")
        let report = try compact(folder.path)
        #expect(report.samplesRead == 2 && report.samplesStored == 1)
        let stored = try storedSamples(Store(at: folder.path))
        #expect(stored.count == 1 && stored[0].start.description == "2025-01-15T23:10:00+01:00")
    }

    @Test func queriesMatchABruteForceFilter() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 35, seed: 11)
        _ = try compact(folder.path, blockSamples: 97)
        let raw = Array(try rawSampleSet(folder.path + "/raw").keys)
        let store = try Store(at: folder.path)
        var rng = SplitMix64(seed: 99)
        let lo = raw.map(\.start.microseconds).min()!
        let hi = raw.map(\.start.microseconds).max()!
        let types = store.types.map(\.type)
        // Each type once, though every type has a segment in each of two months.
        #expect(store.typeNames.sorted() == Set(raw.map(\.type)).sorted())
        #expect(store.typeNames.sorted() == types.sorted())
        // In the order the manifest first names them.
        var firstNamed: [String] = []
        for type in store.segmentEntries.map(\.type) where !firstNamed.contains(type) { firstNamed.append(type) }
        #expect(store.typeNames == firstNamed)
        for round in 0..<60 {
            let type = types[round % types.count]
            var a = Int64.random(in: (lo - 86_400_000_000)...(hi + 1), using: &rng)
            var b = a + Int64.random(in: 0...(round % 3 == 0 ? 40 * 86_400_000_000 : 86_400_000_000), using: &rng)
            if round % 7 == 0 { (a, b) = (b, a) }  // empty or inverted
            let source: String? = round % 4 == 0 ? "4A1B2C3D" : nil
            var cursor = try store.samples(of: type, from: a, to: b, source: source)
            var got: [Sample] = []
            while let s = try cursor.next() { got.append(s) }
            let want = raw.filter {
                $0.type == type && $0.start.microseconds >= a && $0.start.microseconds < b
                    && (source == nil || ($0.source.string ?? "").contains(source!)
                        || ($0.device.string ?? "").contains(source!))
            }
            #expect(got.count == want.count, "round \(round)")
            #expect(Set(got) == Set(want), "round \(round)")
            #expect(zip(got, got.dropFirst()).allSatisfy { $0.start.microseconds <= $1.start.microseconds })
        }
    }

    @Test func rawFilesStayByteIdentical() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 10, seed: 5)
        folder.write("{not json", to: "raw/2025/03/2025-03-21.json")
        let before = snapshot(folder.path + "/raw")
        _ = try compact(folder.path)
        _ = try compact(folder.path)
        let store = try Store(at: folder.path)
        _ = try storedSamples(store)
        try store.exportDayFiles(to: folder.path + "/export")
        let after = snapshot(folder.path + "/raw")
        #expect(before.keys.sorted() == after.keys.sorted())
        for (k, v) in before { #expect(after[k]?.0 == v.0 && after[k]?.1 == v.1, "\(k) changed") }
        #expect(throws: TSDBError.self) { try store.exportDayFiles(to: folder.path + "/raw/2025") }
    }

    @Test func badFilesAreSkippedAndEverythingElseCompacts() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 6, seed: 8, edgeCases: false)
        let good = try rawSampleSet(folder.path + "/raw")
        folder.write(
            #"{"date":"2025-03-27","samples":[{"type":"T","start":"2025-03-27T10:00:00Z","#
                + #""end":"2025-03-27T09:00:00Z"}]}"#,
            to: "raw/2025/03/2025-03-27.json")
        folder.write(#"{"date":"2025-03-01","samples":[]}"#, to: "raw/2025/03/2025-03-28.json")
        folder.write("", to: "raw/2025/03/2025-03-29.json")
        folder.write("{}", to: "raw/2025/03/notes.json")
        folder.write("{}", to: "raw/2025/misc/2025-03-30.json")
        let report = try compact(folder.path)
        #expect(report.isPartial)
        #expect(report.filesRead == 6)
        let reasons = report.skipped.map(\.description)
        #expect(
            reasons.contains { $0.contains("2025-03-27.json:1 (offset 32)") && $0.contains("ends before it starts") })
        #expect(reasons.contains { $0.contains("2025-03-28.json") && $0.contains("file name says 2025-03-28") })
        #expect(reasons.contains { $0.contains("2025-03-29.json") && $0.contains("empty file") })
        // Names that are not day files are ignored, not skipped as bad.
        #expect(report.ignored.contains { $0.hasSuffix("raw/2025/03/notes.json") })
        #expect(report.ignored.contains { $0.hasSuffix("raw/2025/misc") })
        #expect(report.skipped.count == 3)
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(good.keys))
    }

    /// A day file in another month's or year's folder is reported with where it belongs; a name
    /// that is no calendar date is not a day file.
    @Test func dayFilesInTheWrongFolderAreSkipped() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 2, seed: 8, edgeCases: false)
        let good = try rawSampleSet(folder.path + "/raw")
        folder.write(#"{"date":"2025-03-10","samples":[]}"#, to: "raw/2025/04/2025-03-10.json")
        folder.write(#"{"date":"2024-03-11","samples":[]}"#, to: "raw/2025/03/2024-03-11.json")
        folder.write(#"{"date":"2025-02-30","samples":[]}"#, to: "raw/2025/02/2025-02-30.json")
        let report = try compact(folder.path)
        let reasons = report.skipped.map(\.description)
        #expect(reasons.contains { $0.contains("raw/2025/04/2025-03-10.json") && $0.contains("belongs in 2025/03/") })
        #expect(reasons.contains { $0.contains("raw/2025/03/2024-03-11.json") && $0.contains("belongs in 2024/03/") })
        #expect(report.skipped.count == 2, "\(reasons)")
        #expect(report.ignored.contains { $0.hasSuffix("raw/2025/02/2025-02-30.json") })
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(good.keys))
        // Folders are listed in the file system's order; what is reported comes sorted.
        for name in ["notes.md", "a.txt", "zz.json", "2025-03-1.json", "backup", ".DS_Store", "m.bak"] {
            folder.write("x", to: "raw/2025/03/" + name)
            folder.write(#"{"date":"2025-05-02","samples":[]}"#, to: "raw/2025/0\(name.count % 3 + 4)/2025-05-02.json")
        }
        let again = try compact(folder.path)
        #expect(again.ignored.count >= 7 && again.ignored == again.ignored.sorted(), "\(again.ignored)")
        let paths = again.skipped.map { $0.path ?? "" }
        #expect(paths.count >= 4 && paths == paths.sorted(), "\(paths)")
    }

    @Test func symlinkOutsideRawIsNotFollowed() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 2, seed: 8, edgeCases: false)
        folder.write(#"{"date":"2025-03-25","samples":[]}"#, to: "outside.json")
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/raw/2025/03/2025-03-25.json", withDestinationPath: folder.path + "/outside.json")
        let report = try compact(folder.path)
        #expect(report.skipped.contains { $0.message.contains("symbolic link pointing outside") })
        #expect(report.filesRead == 2)
    }

    @Test func samplesFarFromTheirFileDateLandInTheirMonth() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        func hr(_ t: String, _ v: Int) -> String { #"{"type":"HR","start":"\#(t)","end":"\#(t)","value":\#(v)}"# }
        folder.write(
            #"{"date":"2025-01-10","samples":[\#(hr("2025-01-10T10:00:00Z", 60))]}"#, to: "raw/2025/01/2025-01-10.json")
        folder.write(
            #"{"date":"2025-03-10","samples":[\#(hr("2025-03-10T10:00:00Z", 61))]}"#, to: "raw/2025/03/2025-03-10.json")
        // A backfilled file carrying a sample from January, read after January was written.
        folder.write(
            #"{"date":"2025-05-01","samples":[\#(hr("2025-01-20T10:00:00Z", 62)),\#(hr("2025-05-01T10:00:00Z", 63))]}"#,
            to: "raw/2025/05/2025-05-01.json")
        var o = CompactionOptions()
        o.batchSize = 1
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path), options: o).run()
        let store = try Store(at: folder.path)
        #expect(
            store.manifest.segments.map { "\($0.year)-\($0.month):\($0.sampleCount)" } == [
                "2025-1:2", "2025-3:1", "2025-5:1",
            ])
        #expect(try storedSamples(store).map { $0.value.description } == ["60", "62", "61", "63"])
    }

    /// A segment that cannot be written (a folder in the way of its file) stops the compaction
    /// with an error naming it, though it was written on another thread while later files merged;

    /// A file holding more samples than are gathered at once (GatheredSamples.limit), its types
    /// interleaved across a month's end, stores every sample, each month's in its own segment.
    @Test func aFileLargerThanAGatheringInterleavingTypesAcrossMonthsStoresEverySample() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        let end: Int64 = 1_738_368_000_000_000  // 2025-02-01T00:00:00Z
        var lines: [String] = []
        let count = GatheredSamples.limit + GatheredSamples.limit / 3
        for i in 0..<count {
            // Seconds around midnight, so runs of a type alternate with the others' and the month.
            let t = ISO8601.format(end + Int64(i / 3 - count / 6) * 1_000_000, .zulu)
            let type = ["HR", "Steps", "Energy"][i % 3]
            lines.append(#"{"type":"\#(type)","start":"\#(t)","end":"\#(t)","value":\#(i)}"#)
        }
        let text = #"{"date":"2025-01-31","samples":[\#(lines.joined(separator: ","))]}"#
        folder.write(text, to: "raw/2025/01/2025-01-31.json")
        let report = try compact(folder.path)
        #expect(report.samplesStored == count)
        let store = try Store(at: folder.path)
        #expect(store.manifest.segments.count == 6)
        #expect(Set(try storedSamples(store)) == Set(try samples(ofDayFile: Array(text.utf8))))
    }
    /// nothing is published, and once the folder is gone the next compaction stores everything.
    @Test func aSegmentThatCannotBeWrittenStopsTheCompaction() throws {
        let folder = TemporaryFolder("blocked")
        defer { folder.cleanup() }
        try generate(folder.path, days: 50, seed: 3, edgeCases: false, start: "2025-03-01")
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        let blocked = SegmentPack(storeDirectory: layout.storeDirectory, generation: 1).path
        try FileManager.default.createDirectory(atPath: blocked + "/in-the-way", withIntermediateDirectories: true)
        let error = caught { _ = try Compactor(layout: layout).run() }
        #expect(
            error?.kind == .io && error?.path?.hasSuffix("segments/pack.g1.seg") == true,
            "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: layout.manifestPath))
        try FileManager.default.removeItem(atPath: blocked)
        _ = try Compactor(layout: layout).run()
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(try rawSampleSet(folder.path + "/raw").keys))
    }

    /// A run that writes any segment of a month moves the month's other segments into its file
    /// too (their bytes as they were): the file of the run before is left naming nothing and goes.
    /// March 10 (heart rate and steps) compacted into one file, then March 11 (heart rate only)
    /// written beside it: the second run writes heart rate and moves steps.
    func twoDaysOfMarch(_ folder: TemporaryFolder) throws -> StoreLayout {
        func sample(_ type: String, _ t: String, _ v: Int) -> String {
            #"{"type":"\#(type)","start":"\#(t)","end":"\#(t)","value":\#(v)}"#
        }
        folder.write(
            #"{"date":"2025-03-10","samples":[\#(sample("HR", "2025-03-10T10:00:00Z", 61)),"#
                + #"\#(sample("Steps", "2025-03-10T10:00:00Z", 900))]}"#, to: "raw/2025/03/2025-03-10.json")
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        folder.write(
            #"{"date":"2025-03-11","samples":[\#(sample("HR", "2025-03-11T10:00:00Z", 62))]}"#,
            to: "raw/2025/03/2025-03-11.json")
        return layout
    }

    @Test func aMonthsSegmentsMoveTogetherIntoTheNewFile() throws {
        let folder = TemporaryFolder("pack-move")
        defer { folder.cleanup() }
        let layout = try twoDaysOfMarch(folder)
        let before = try Manifest.read(at: layout.manifestPath)
        let report = try Compactor(layout: layout).run()
        #expect(report.monthsAppended == 1 && report.segmentsWritten == 1)
        let after = try Manifest.read(at: layout.manifestPath)
        #expect(after.files.map(\.path) == ["segments/pack.g2.seg"])
        let steps = { (m: Manifest) in m.segments.first { $0.type == "Steps" }! }
        let (old, moved) = (steps(before), steps(after))
        #expect(moved.crc == old.crc && moved.size == old.size && moved.path != old.path)
        #expect(
            try segmentBytes(moved, in: layout.storeDirectory) == (try segmentBytes(old, in: layout.storeDirectory)))
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(try rawSampleSet(folder.path + "/raw").keys))
        _ = try Compactor(layout: layout).run()
        let names = try FileManager.default.contentsOfDirectory(atPath: layout.segmentsDirectory)
        #expect(names == ["pack.g2.seg"], "the first run's file names nothing and goes: \(names)")
    }

    /// A segment to move whose bytes fail its CRC is not copied: the run fails naming its file,
    /// nothing is published, and the next run rebuilds its month from the raw files.
    @Test func aDamagedSegmentIsNotMovedIntoTheNewFile() throws {
        let folder = TemporaryFolder("pack-move-damaged")
        defer { folder.cleanup() }
        let layout = try twoDaysOfMarch(folder)
        let before = try Manifest.read(at: layout.manifestPath)
        let steps = before.segments.first { $0.type == "Steps" }!
        try flipByte(steps.size / 2, of: steps, in: layout.storeDirectory)
        let e = #expect(throws: TSDBError.self) { try Compactor(layout: layout).run() }
        #expect(
            e?.kind == .corruption && e?.path == layout.storeDirectory + "/" + steps.path && e?.offset == steps.offset)
        #expect(try Manifest.read(at: layout.manifestPath) == before)
        let repaired = try Compactor(layout: layout).run()
        #expect(repaired.monthsRepaired == 1)
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(try rawSampleSet(folder.path + "/raw").keys))
    }

    /// Every type's segments in one pack file are read through one mapping of it, made once for
    /// the store: a mapping per type faulted the same pages in again (five years' summary counted
    /// its 15 MB pack as 85 MB resident).
    @Test func typesInOnePackShareOneMappingOfIt() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 3, seed: 4)
        _ = try compact(folder.path)
        let store = try Store(at: folder.path)
        var starts: [String: Set<Int>] = [:]  // per file, where its mappings start
        for type in ["HKQuantityTypeIdentifierHeartRate", "HKQuantityTypeIdentifierStepCount"] {
            for reader in try store.segments(of: type) {
                let base = reader.file.withBytes { Int(bitPattern: $0.baseAddress) } - reader.file.offset
                starts[reader.file.path, default: []].insert(base)
            }
        }
        #expect(!starts.isEmpty && starts.values.allSatisfy { $0.count == 1 }, "\(starts)")
    }

    @Test func recompactionPublishesANewGenerationAndRemovesTheOld() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 3, seed: 4)
        let first = try compact(folder.path)
        let oldStore = try Store(at: folder.path)
        let oldSamples = try storedSamples(oldStore)
        var rebuild = CompactionOptions()
        rebuild.rebuild = true
        let second = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path), options: rebuild).run()
        #expect(first.generation == 1 && second.generation == 2 && second.isFullRebuild)
        let store = try Store(at: folder.path)
        #expect(store.manifest.segments.allSatisfy { $0.path.contains(".g2.") })
        func files() -> [String] {
            FileManager.default.enumerator(atPath: folder.path + "/tsdb/segments")!.compactMap { $0 as? String }.filter
            { $0.hasSuffix(".seg") }
        }
        // The previous generation stays for readers that opened it, until the next publication.
        #expect(files().filter { $0.contains(".g2.") }.count == store.manifest.files.count)
        #expect(files().filter { $0.contains(".g1.") }.count == oldStore.manifest.files.count)
        #expect(store.manifest.files.count == 1 && store.manifest.segments.count > 1)
        #expect(try storedSamples(oldStore) == oldSamples, "a reader of generation 1 still reads it")
        #expect(try storedSamples(store) == oldSamples)
        let third = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path), options: rebuild).run()
        #expect(third.generation == 3)
        #expect(
            files().allSatisfy { $0.contains(".g2.") || $0.contains(".g3.") }
                && files().contains { $0.contains(".g3.") })
    }

    @Test func segmentDamagedFoundByAReadIsRebuiltByTheNextCompaction() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 3, seed: 4)
        _ = try compact(folder.path)
        let store = try Store(at: folder.path)
        let entry = store.manifest.segments.first { $0.type.hasSuffix("HeartRate") }!
        let path = folder.path + "/tsdb/" + entry.path
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        // Inside the heart-rate segment itself: the middle of the pack may be another segment's, or
        // the zeros between two segments, which belong to none.
        bytes[Int(entry.offset) + Int(entry.size) / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reopened = try Store(at: folder.path)
        let e = caught { _ = try storedSamples(reopened) }
        #expect(e?.kind == .corruption)
        #expect(e?.path == path)
        // The read remembered the damage; the next compaction rebuilds that month from the raw files.
        #expect(FileManager.default.fileExists(atPath: folder.path + "/tsdb/DAMAGED"))
        let repair = try compact(folder.path)
        #expect(repair.monthsRepaired == 1 && repair.repairs.count == 1 && repair.repairs[0].contains(entry.path))
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(try rawSampleSet(folder.path + "/raw").keys))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/tsdb/DAMAGED"))
    }

    @Test func missingStoreSaysHowToCreateIt() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        folder.write("{}", to: "raw/.keep")
        let e = caught { _ = try Store(at: folder.path) }
        #expect(e?.kind == .notFound && e?.message.contains("no compacted store") == true)
        // The advice is the command line's.
        let r = try tsdbShell(["types", "--store", folder.path])
        #expect(r.status == 1 && r.stderr.contains("run `tsdb compact \(folder.path)` first"), "\(r.stderr)")
    }

    @Test func layoutAcceptsImportsRootAppleHealthFolderAndStoreFolder() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        folder.write("{}", to: "imports/fitness/apple-health/raw/.keep")
        let expected = folder.path + "/imports/fitness/apple-health"
        #expect(try StoreLayout.locate(folder.path + "/imports").appleHealthDirectory == expected)
        #expect(try StoreLayout.locate(expected + "/").appleHealthDirectory == expected)
        #expect(try StoreLayout.locate(expected + "/raw").appleHealthDirectory == expected)
        #expect(throws: TSDBError.self) { try StoreLayout.locate(folder.path) }
    }
}

@Suite struct QueryInputTests {
    let known = [
        "HKQuantityTypeIdentifierHeartRate", "HKQuantityTypeIdentifierStepCount",
        "HKCategoryTypeIdentifierSleepAnalysis",
        "HKWorkoutTypeIdentifier", "HKQuantityTypeIdentifierHeartRateVariabilitySDNN",
    ]

    @Test(arguments: [
        ("HeartRate", "HKQuantityTypeIdentifierHeartRate"), ("heartrate", "HKQuantityTypeIdentifierHeartRate"),
        ("HKQuantityTypeIdentifierStepCount", "HKQuantityTypeIdentifierStepCount"),
        ("Steps", "HKQuantityTypeIdentifierStepCount"),
        ("stepcount", "HKQuantityTypeIdentifierStepCount"), ("SleepAnalysis", "HKCategoryTypeIdentifierSleepAnalysis"),
        ("sleep", "HKCategoryTypeIdentifierSleepAnalysis"), ("Workout", "HKWorkoutTypeIdentifier"),
        ("HRV", "HKQuantityTypeIdentifierHeartRateVariabilitySDNN"),
    ])
    func resolves(name: String, identifier: String) throws {
        #expect(try TypeNames.resolve(name, among: known) == identifier)
    }

    @Test func didYouMean() {
        let e = caught { _ = try TypeNames.resolve("HartRate", among: known) }
        #expect(e?.kind == .notFound && e?.message.contains("did you mean HeartRate") == true)
    }

    @Test(arguments: [
        ("2025", "2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("2025-03", "2025-03-01T00:00:00Z", "2025-04-01T00:00:00Z"),
        ("2024-12", "2024-12-01T00:00:00Z", "2025-01-01T00:00:00Z"),
        ("2024-02-29", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"),
        ("2025-03-01..2025-04-01", "2025-03-01T00:00:00Z", "2025-04-02T00:00:00Z"),
        ("2025-01..2025-03", "2025-01-01T00:00:00Z", "2025-04-01T00:00:00Z"),
        ("2025-03-01..2025-03-07", "2025-03-01T00:00:00Z", "2025-03-08T00:00:00Z"),
        ("2024..2025", "2024-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("2025-03-01..2025-03-01T12:00Z", "2025-03-01T00:00:00Z", "2025-03-01T12:00:00Z"),
        ("2025-03-01T08:00:00+01:00..2025-03-01T12:00Z", "2025-03-01T07:00:00Z", "2025-03-01T12:00:00Z"),
        ("2025-03-01T08:00..2025-03-01T08:30:15", "2025-03-01T08:00:00Z", "2025-03-01T08:30:15Z"),
    ])
    func parsesRanges(text: String, from: String, to: String) throws {
        let r = try TimeRange.parse(text)
        #expect(r.from == Timestamp(from)!.microseconds && r.to == Timestamp(to)!.microseconds)
    }

    @Test func openRangesAndZones() throws {
        let r = try TimeRange.parse("2025-03..")
        #expect(r.from == Timestamp("2025-03-01T00:00:00Z")!.microseconds && r.to == nil)
        #expect(try TimeRange.parse("..2025").from == nil)
        let paris = try TimeRange.parse("2025-03-01", zone: .fixed(seconds: 3600))
        #expect(paris.from == Timestamp("2025-03-01T00:00:00+01:00")!.microseconds)
    }

    @Test(arguments: [
        "2025-13", "20x5", "2025-02-30", "2025-03-01T25:00", "2025-04-01..2025-03-01", "2025-03-01T08:00:00Z",
        "yesterday", "2025...2026", "2025-03-01...", ".2025", "2025-03-01.",
        // A date as the end names a period wholly before the start: reversed, not an empty range.
        "2025..2024", "2025-03-02..2025-03-01", "2025-03..2025-02", "2025-03-01T00:00Z..2025-02-28",
    ])
    func rejectsRanges(text: String) {
        #expect(throws: TSDBError.self) { try TimeRange.parse(text) }
    }

    /// An end date whose period starts before the start still ends after it (from the 15th to the
    /// end of March), and two equal instants make an empty range, as half-open ranges do.
    @Test func endDatesReachingPastTheStartAndEmptyInstantRanges() throws {
        let march = try TimeRange.parse("2025-03-15..2025-03")
        #expect(march.to == Timestamp("2025-04-01T00:00:00Z")!.microseconds)
        let empty = try TimeRange.parse("2025-03-01T10:00Z..2025-03-01T10:00Z")
        #expect(empty.from == empty.to && empty.from == Timestamp("2025-03-01T10:00:00Z")!.microseconds)
    }
}

@Suite struct GapTests {
    @Test func missingDaysAreListedAsRanges() throws {
        let folder = TemporaryFolder()
        defer { folder.cleanup() }
        try generate(folder.path, days: 12, seed: 3, edgeCases: false, start: "2025-02-24")
        for day in ["2025-02-26", "2025-03-01", "2025-03-02", "2025-03-03"] {
            try FileManager.default.removeItem(
                atPath: folder.path + "/raw/\(day.prefix(4))/\(day.dropFirst(5).prefix(2))/\(day).json")
        }
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let gaps = try Store(at: folder.path).missingDays
        #expect(gaps == ["2025-02-26"..."2025-02-26", "2025-03-01"..."2025-03-03"])
    }
}

@Suite(.serialized) struct PermissionTests {
    /// An unreadable day file is reported and skipped; everything else compacts. Root reads any
    /// file, so the compaction runs as `nobody` through setpriv (util-linux) when the test is root.
    static let canDropPrivileges = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs `tsdb compact` as nobody over `folder`, with everything but `locked` made reachable.
    func compactAsNobody(_ folder: TemporaryFolder, locked: String) throws -> (status: Int32, stderr: String) {
        // nobody must be able to reach the folder and write the store (the system temporary
        // directory is already world-writable and sticky; it is left alone).
        chmod(folder.path, 0o777)
        for sub in try FileManager.default.subpathsOfDirectory(atPath: folder.path)
        where !(folder.path + "/" + sub).hasPrefix(locked) {
            chmod(folder.path + "/" + sub, sub.hasSuffix(".json") ? 0o644 : 0o777)
        }
        chmod(locked, 0)
        defer { chmod(locked, 0o755) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = [
            "--reuid=nobody", "--regid=nogroup", "--clear-groups", CommandLineTests.executable, "compact", folder.path,
        ]
        p.environment = ProcessInfo.processInfo.environment
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, stderr)
    }

    func samples(of folder: TemporaryFolder, days: [String]) throws -> Set<Sample> {
        var expected = Set<Sample>()
        for day in days {
            let path = folder.path + "/raw/\(day.prefix(4))/\(day.dropFirst(5).prefix(2))/\(day).json"
            expected.formUnion(
                try TSDBTests.samples(ofDayFile: Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
        }
        return expected
    }

    /// An unreadable day file is reported and skipped; everything else compacts. Root reads any
    /// file, so the compaction runs as `nobody` through setpriv (util-linux) when the test is root.
    @Test(.enabled(if: canDropPrivileges, "needs root and setpriv"))
    func unreadableFileIsSkippedOthersCompact() throws {
        let folder = TemporaryFolder("perm")
        defer { folder.cleanup() }
        try generate(folder.path, days: 3, seed: 2, edgeCases: false)
        let (status, stderr) = try compactAsNobody(folder, locked: folder.path + "/raw/2025/03/2025-03-21.json")
        #expect(status == 2, "partial: \(stderr)")
        #expect(stderr.contains("2025-03-21.json") && stderr.contains("Permission denied"))
        // Stored: exactly the samples of the two readable files.
        #expect(
            Set(try storedSamples(Store(at: folder.path)))
                == (try samples(of: folder, days: ["2025-03-20", "2025-03-22"])))
    }

    /// An unreadable month folder is reported like a bad file; the other months compact.
    @Test(.enabled(if: canDropPrivileges, "needs root and setpriv"))
    func unreadableFolderIsReportedOthersCompact() throws {
        let folder = TemporaryFolder("perm-dir")
        defer { folder.cleanup() }
        try generate(folder.path, days: 4, seed: 2, edgeCases: false, start: "2025-02-27")
        let (status, stderr) = try compactAsNobody(folder, locked: folder.path + "/raw/2025/02")
        #expect(status == 2, "partial: \(stderr)")
        #expect(
            stderr.contains("raw/2025/02: folder cannot be read") && stderr.contains("Permission denied"), "\(stderr)")
        #expect(
            Set(try storedSamples(Store(at: folder.path)))
                == (try samples(of: folder, days: ["2025-03-01", "2025-03-02"])))
    }
}

@Suite struct CleanupTests {
    /// A store an earlier version wrote (a version 3 manifest; one file per segment, some in
    /// per-type folders) is rebuilt by the next compaction, and its files and folders go.
    @Test func aStoreOfAnEarlierManifestVersionIsRebuiltAndItsFilesGo() throws {
        let folder = TemporaryFolder("manifest-v3")
        defer { folder.cleanup() }
        try generate(folder.path, days: 5, seed: 9, edgeCases: false)
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        // The same bytes under version 3, its CRC made right again: readable but unsupported.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: layout.manifestPath)))
        bytes[8] = 3
        let crc = CRC32C.checksum(Array(bytes[0..<bytes.count - 4]))
        for k in 0..<4 { bytes[bytes.count - 4 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        try FileSystem.writeAtomically(bytes, to: layout.manifestPath)
        folder.write("x", to: "tsdb/segments/HKQuantityTypeIdentifierHeartRate.2025-03.g1.seg")
        folder.write("x", to: "tsdb/segments/HKQuantityTypeIdentifierStepCount/2025-03.g1.seg")
        #expect(throws: TSDBError.self) { try Store(at: folder.path) }

        let report = try Compactor(layout: layout).run()
        #expect(report.isFullRebuild && report.warnings.contains { $0.contains("manifest version 3") })
        let names = try FileManager.default.contentsOfDirectory(atPath: layout.segmentsDirectory)
        #expect(names == ["pack.g1.seg"], "\(names)")
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(try rawSampleSet(folder.path + "/raw").keys))
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
    }

    @Test func upToDateRunRemovesWhatThePublishedGenerationDoesNotName() throws {
        let folder = TemporaryFolder("cleanup")
        defer { folder.cleanup() }
        try generate(folder.path, days: 3, seed: 6, edgeCases: false)
        var rebuild = CompactionOptions()
        rebuild.rebuild = true
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        _ = try Compactor(layout: layout, options: rebuild).run()  // generation 2; generation 1 kept for now
        // What a crashed generation-3 run would leave behind, and one of a store written before
        // segments shared one folder.
        folder.write("x", to: "tsdb/segments/HKQuantityTypeIdentifierHeartRate.2025-03.g3.seg")
        folder.write("x", to: "tsdb/segments/HKQuantityTypeIdentifierHeartRate.2025-03.g3.seg.tmp")
        folder.write("x", to: "tsdb/segments/HKQuantityTypeIdentifierStepCount/2025-03.g3.seg")
        let report = try Compactor(layout: layout).run()
        #expect(report.upToDate)
        // Even a run with nothing to do deletes what the published generation does not name.
        let names = try FileManager.default.contentsOfDirectory(atPath: layout.segmentsDirectory)
        #expect(names.contains { $0.contains(".g2.") })
        #expect(!names.contains { $0.contains(".g1.") || $0.contains(".g3.") })
        #expect(Set(try storedSamples(Store(at: folder.path))) == Set(try rawSampleSet(folder.path + "/raw").keys))
        // Nothing but segment files: the emptied folder went too.
        #expect(names.allSatisfy { $0.hasSuffix(".seg") }, "\(names)")
        let generations: [(String, UInt64?)] = [
            ("HKQuantityTypeIdentifierHeartRate.2025-03.g12.seg", 12), ("2025-03.g0.seg", 0), ("notes.txt", nil),
            (".g5.seg", nil), ("g5.seg", nil), ("x.g.seg", nil), ("x.G5.seg", nil), ("x.g5a.seg", nil),
            ("x.g5.seg.tmp", nil), ("x.g5.segment", nil), ("x.g18446744073709551615.seg", .max),
            ("x.g18446744073709551616.seg", nil),
        ]
        for (name, generation) in generations {
            #expect(Compactor.generation(ofSegmentFile: name) == generation, "\(name)")
        }
    }
}

/// A query maps each pack file once and reads its segments as slices of that mapping: a mapping is
/// a system call, and a year of one type is 12–13 segments in a few files.
@Suite struct SegmentMappingTests {
    /// Lines of /proc/self/maps that map a pack file under `folder`.
    static func packMappings(under folder: String) throws -> [Substring] {
        // Read to the end: procfs files report a size of 0.
        let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")).readToEnd() ?? Data()
        return String(decoding: maps, as: UTF8.self).split(separator: "\n").filter {
            $0.contains(folder + "/") && $0.contains("/segments/pack.")
        }
    }

    @Test func aQueryMapsEachPackFileOnce() throws {
        let folder = TemporaryFolder("mappings")
        defer { folder.cleanup() }
        try generate(folder.path, days: 70, seed: 5)  // March to May: three months of heart rate
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        let store = try Store(layout: layout)
        let segments = try store.segments(of: "HKQuantityTypeIdentifierHeartRate")
        let packs = Set(try Manifest.read(at: layout.manifestPath).segments.map(\.path))
        let mapped = try Self.packMappings(under: folder.path)
        #expect(segments.count >= 3 && packs.count == 1)
        #expect(mapped.count == packs.count, "\(mapped)")
        withExtendedLifetime(segments) {}
    }
}
