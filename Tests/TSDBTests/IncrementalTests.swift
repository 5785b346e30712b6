import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

@Suite(.serialized) struct IncrementalTests {
    func compact(_ dir: String, _ configure: (inout CompactionOptions) -> Void = { _ in }) throws -> CompactionReport {
        var o = CompactionOptions()
        o.blockSamples = 300
        configure(&o)
        return try Compactor(layout: StoreLayout(appleHealthDirectory: dir), options: o).run()
    }

    /// The store holds exactly the distinct samples of the raw folder.
    func expectMatchesRaw(_ dir: String, _ comment: Comment? = nil) throws {
        let stored = try storedSamples(Store(at: dir))
        let raw = try rawSampleSet(dir + "/raw")
        #expect(stored.count == raw.count, comment)
        #expect(Set(stored) == Set(raw.keys), comment)
    }

    func segmentEntries(_ dir: String) throws -> [String: Manifest.SegmentEntry] {
        var out: [String: Manifest.SegmentEntry] = [:]
        for s in try Store(at: dir).manifest.segments { out["\(s.type) \(s.year)-\(s.month)"] = s }
        return out
    }

    func segmentPaths(_ dir: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for s in try Store(at: dir).manifest.segments { out["\(s.type) \(s.year)-\(s.month)"] = s.path }
        return out
    }

    /// Two generated stretches of days from one seed, so "new" days are realistic continuations.
    func setUp(_ folder: TemporaryFolder, days: Int = 40) throws -> String {
        try generate(folder.path + "/all", days: days + 10, seed: 21)
        let raw = folder.path + "/store/raw"
        try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
        for rel in try FileManager.default.subpathsOfDirectory(atPath: folder.path + "/all/raw").sorted()
        where rel.hasSuffix(".json") {
            let day = Int(rel.suffix(7).prefix(2))!
            let month = Int(rel.dropFirst(5).prefix(2))!
            // The first `days` days (from 2025-03-20) go in now; the rest are added later.
            if month == 3 || (month == 4 && day <= days - 12) {
                try FileManager.default.createDirectory(
                    atPath: raw + "/" + rel.prefix(7), withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: folder.path + "/all/raw/" + rel, toPath: raw + "/" + rel)
            }
        }
        return folder.path + "/store"
    }

    @Test func nothingChangedWritesNothing() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder)
        let first = try compact(dir)
        let before = snapshot(dir + "/tsdb")
        let second = try compact(dir)
        #expect(second.upToDate && second.generation == first.generation && second.segmentsWritten == 0)
        let after = snapshot(dir + "/tsdb")
        #expect(before.keys.sorted() == after.keys.sorted())
        for (k, v) in before where k != "LOCK" {
            #expect(after[k]?.0 == v.0 && after[k]?.1 == v.1, "\(k) was rewritten")
        }
    }

    @Test func addingADayRewritesOnlyItsMonths() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder)
        _ = try compact(dir)
        let old = try segmentEntries(dir)
        try FileManager.default.copyItem(
            atPath: folder.path + "/all/raw/2025/04/2025-04-29.json", toPath: dir + "/raw/2025/04/2025-04-29.json")
        let r = try compact(dir)
        #expect(!r.isFullRebuild && r.filesAdded == 1 && r.monthsRebuilt == 0 && r.monthsAppended >= 1)
        let new = try segmentEntries(dir)
        for (key, entry) in old where key.hasSuffix("2025-3") {
            #expect(new[key] == entry, "March segment \(key) was rewritten or moved")
        }
        // In April, exactly the types the new day brought samples of are rewritten; the others'
        // bytes move unchanged into the run's file with them (manifest-v4.md, Files).
        let added = Set(
            try samples(
                ofDayFile: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/raw/2025/04/2025-04-29.json")))
            ).map(\.type))
        for (key, entry) in new where key.hasSuffix("2025-4") {
            let type = String(key.split(separator: " ")[0])
            let before = try #require(old[key])
            #expect(entry.path.contains(".g2."), "\(key): \(entry.path)")
            #expect((entry.crc != before.crc) == added.contains(type), "\(key)")
            #expect((entry.sampleCount > before.sampleCount) == added.contains(type), "\(key)")
        }
        try expectMatchesRaw(dir)
    }

    @Test func changedDayReplacesItsSamples() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder)
        _ = try compact(dir)
        let path = dir + "/raw/2025/03/2025-03-25.json"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        // A corrected re-export: one heart-rate value changes, and one sample disappears.
        let hr = text.range(of: "\"value\":")!
        let digits = text[hr.upperBound...].prefix { $0.isNumber }
        text.replaceSubrange(hr.upperBound..<text.index(hr.upperBound, offsetBy: digits.count), with: "199")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        text = (lines[..<5] + lines[6...]).joined(separator: "\n")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let r = try compact(dir)
        #expect(r.filesChanged == 1 && r.monthsRebuilt >= 1)
        try expectMatchesRaw(dir)
        #expect(try storedSamples(Store(at: dir)).contains { $0.value.description == "199" })
    }

    @Test func deletedDayRemovesItsSamples() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder)
        _ = try compact(dir)
        try FileManager.default.removeItem(atPath: dir + "/raw/2025/04/2025-04-10.json")
        let r = try compact(dir)
        #expect(r.filesDeleted == 1 && r.monthsRebuilt >= 1)
        try expectMatchesRaw(dir)
    }

    @Test func touchedFileWithSameContentRewritesNoSegment() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder)
        _ = try compact(dir)
        let old = try segmentPaths(dir)
        let path = dir + "/raw/2025/04/2025-04-02.json"
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: path)
        let r = try compact(dir)
        #expect(r.filesTouched == 1 && r.segmentsWritten == 0)
        #expect(try segmentPaths(dir) == old)
        #expect(try compact(dir).upToDate)
    }

    @Test func manyNewFilesTakeTheStreamingRebuild() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder, days: 20)
        _ = try compact(dir)
        for rel in try FileManager.default.subpathsOfDirectory(atPath: folder.path + "/all/raw")
        where rel.hasSuffix(".json")
            && !FileManager.default.fileExists(atPath: dir + "/raw/" + rel)
        {
            try FileManager.default.createDirectory(
                atPath: dir + "/raw/" + rel.prefix(7), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: folder.path + "/all/raw/" + rel, toPath: dir + "/raw/" + rel)
        }
        let r = try compact(dir) { $0.incrementalFileLimit = 5 }
        #expect(r.isFullRebuild)
        try expectMatchesRaw(dir)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func seededRandomEditsKeepTheStoreEqualToRaw(seed: UInt64) throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder, days: 25)
        _ = try compact(dir)
        var rng = SplitMix64(seed: seed)
        let spare = try dayFiles(folder.path + "/all/raw")
        for round in 0..<4 {
            let present = try dayFiles(dir + "/raw")
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:  // delete one
                try FileManager.default.removeItem(atPath: dir + "/raw/" + present.randomElement(using: &rng)!)
            case 1:  // add or restore one
                let rel = spare.randomElement(using: &rng)!
                try? FileManager.default.removeItem(atPath: dir + "/raw/" + rel)
                try copyDay(rel, from: folder, to: dir)
            case 2:  // replace one day's content with another day's samples (a changed file)
                let target = present.randomElement(using: &rng)!
                let date = String(target.suffix(15).prefix(10))
                var text = try String(
                    contentsOfFile: folder.path + "/all/raw/" + spare.randomElement(using: &rng)!, encoding: .utf8)
                if let r = text.range(of: #""date": "\d{4}-\d{2}-\d{2}""#, options: .regularExpression) {
                    text.replaceSubrange(r, with: "\"date\": \"\(date)\"")
                }
                try text.write(toFile: dir + "/raw/" + target, atomically: true, encoding: .utf8)
            default:  // break one (it must be reported and the rest stay right)
                try "{\"samples\": [".write(
                    toFile: dir + "/raw/" + present.randomElement(using: &rng)!, atomically: true, encoding: .utf8)
            }
            let r = try compact(dir)
            let raw = try rawSampleSetSkippingBroken(dir + "/raw")
            let stored = try storedSamples(Store(at: dir))
            #expect(Set(stored) == raw && stored.count == raw.count, "seed \(seed) round \(round): \(r)")
        }
    }

    /// The day files under `raw`, relative to it, in order.
    func dayFiles(_ raw: String) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: raw).filter { $0.hasSuffix(".json") }.sorted()
    }

    /// Copies generated day file `relative` into the store's raw folder.
    func copyDay(_ relative: String, from folder: TemporaryFolder, to dir: String) throws {
        try FileManager.default.createDirectory(
            atPath: dir + "/raw/" + relative.prefix(7), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder.path + "/all/raw/" + relative, toPath: dir + "/raw/" + relative)
    }

    /// Each segment's bytes, by type and month.
    func segmentBytes(_ dir: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for s in try Store(at: dir).manifest.segments {
            out["\(s.type) \(s.year)-\(s.month)"] = try TSDBTests.segmentBytes(s, in: dir + "/tsdb")
        }
        return out
    }

    /// Days arrive late and out of order: a month that only gains days keeps the stored blocks
    /// before them, and every segment is still byte for byte what a rebuild from the raw files writes.
    @Test(arguments: [UInt64(7), 8, 9])
    func extendedMonthsAreByteForByteWhatARebuildWrites(seed: UInt64) throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder, days: 25)
        _ = try compact(dir)
        var random = SplitMix64(seed: seed)
        var spare = try dayFiles(folder.path + "/all/raw").filter {
            !FileManager.default.fileExists(atPath: dir + "/raw/" + $0)
        }
        var kept = 0
        for round in 0..<5 {
            for _ in 0...Int.random(in: 0...1, using: &random) {
                try copyDay(spare.remove(at: Int.random(in: spare.indices, using: &random)), from: folder, to: dir)
            }
            let r = try compact(dir)
            #expect(!r.isFullRebuild && r.monthsRebuilt == 0, "round \(round): \(r)")
            kept += r.blocksKept
            let rebuilt = folder.path + "/rebuilt\(round)"
            try FileManager.default.copyItem(atPath: dir + "/raw", toPath: rebuilt + "/raw")
            #expect(try compact(rebuilt).isFullRebuild)
            let (extended, expected) = (try segmentBytes(dir), try segmentBytes(rebuilt))
            #expect(extended.keys.sorted() == expected.keys.sorted())
            for (key, bytes) in expected where extended[key] != bytes {
                Issue.record("seed \(seed) round \(round): \(key) differs from the rebuild's")
            }
        }
        #expect(kept > 100, "stored blocks were kept: \(kept)")
    }

    /// A kept block is checked before it is copied: a damaged one fails the run, naming the
    /// file, and the published store stays as it was.
    @Test func damagedStoredBlockIsNotCarriedIntoTheNewSegment() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder)
        _ = try compact(dir)
        let entry = try #require(
            try Store(at: dir).manifest.segments.first {
                $0.type == "HKQuantityTypeIdentifierHeartRate" && $0.year == 2025 && $0.month == 4
            })
        let path = dir + "/tsdb/" + entry.path
        let reader = try SegmentReader(path: path, offset: entry.offset, count: entry.size)
        #expect(reader.blockCount > 3)
        try flipByte(reader.locations[1].offset + 5, of: entry, in: dir + "/tsdb", mask: 0x20)
        let before = try segmentPaths(dir)
        try FileManager.default.copyItem(
            atPath: folder.path + "/all/raw/2025/04/2025-04-29.json", toPath: dir + "/raw/2025/04/2025-04-29.json")
        let e = caught { _ = try compact(dir) }
        #expect(e?.message.contains("block 1 CRC mismatch") == true, "\(String(describing: e))")
        #expect(e?.path == path)
        #expect(try segmentPaths(dir) == before)
    }

    /// The manifest a run replaces keeps a second name until the next run starts (manifest-v4 §1),
    /// on one thread or two: the rename that publishes frees nothing.
    @Test(arguments: [1, 2])
    func theReplacedManifestKeepsASecondNameUntilTheNextRun(threads: Int) throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder, days: 20)
        let layout = StoreLayout(appleHealthDirectory: dir)
        _ = try compact(dir) { $0.threads = threads }
        #expect(!FileSystem.exists(layout.replacedManifestPath), "the first run replaced no manifest")
        let first = try Data(contentsOf: URL(fileURLWithPath: layout.manifestPath))
        try FileManager.default.copyItem(
            atPath: folder.path + "/all/raw/2025/04/2025-04-10.json", toPath: dir + "/raw/2025/04/2025-04-10.json")
        #expect(try compact(dir) { $0.threads = threads }.generation == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: layout.replacedManifestPath)) == first)
        #expect(try Manifest.read(at: layout.replacedManifestPath).generation == 1)
        // A run with nothing to do removes it all the same, and changes nothing else.
        let before = snapshot(dir + "/tsdb").filter { $0.key != "LOCK" && $0.key != "MANIFEST.old" }
        #expect(try compact(dir) { $0.threads = threads }.upToDate)
        #expect(!FileSystem.exists(layout.replacedManifestPath))
        let after = snapshot(dir + "/tsdb").filter { $0.key != "LOCK" }
        #expect(before.keys.sorted() == after.keys.sorted())
        for (k, v) in before { #expect(after[k]?.0 == v.0 && after[k]?.1 == v.1, "\(k) was rewritten") }
        try expectMatchesRaw(dir)
    }

    /// Whatever holds the name `MANIFEST.old` is stepped around: a second name of the published
    /// manifest (a crash between the link and the rename), a stray file, or a folder that cannot
    /// be removed (the link cannot be made, and the rename publishes without it).
    @Test(arguments: ["second name", "stray file", "folder"])
    func whateverHoldsTheReplacedManifestsNameIsSteppedAround(holder: String) throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder, days: 20)
        let layout = StoreLayout(appleHealthDirectory: dir)
        _ = try compact(dir)
        let old = layout.replacedManifestPath
        switch holder {
        case "second name": #expect(link(layout.manifestPath, old) == 0)
        case "stray file": try Data("not a manifest".utf8).write(to: URL(fileURLWithPath: old))
        default:
            try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: false)
            try Data().write(to: URL(fileURLWithPath: old + "/inside"))
        }
        try expectMatchesRaw(dir, "\(holder), before the run")
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
        let published = try Data(contentsOf: URL(fileURLWithPath: layout.manifestPath))
        try FileManager.default.copyItem(
            atPath: folder.path + "/all/raw/2025/04/2025-04-10.json", toPath: dir + "/raw/2025/04/2025-04-10.json")
        #expect(try compact(dir).generation == 2)
        try expectMatchesRaw(dir, "\(holder), after the run")
        #expect(try StoreVerifier(layout: layout).verify(deep: true).findings.isEmpty)
        if holder == "folder" {
            #expect(FileManager.default.fileExists(atPath: old + "/inside"), "a folder tsdb did not make is left")
        } else {
            #expect(try Data(contentsOf: URL(fileURLWithPath: old)) == published)
        }
    }

    @Test func secondCompactionWaitsOrFailsClearly() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let dir = try setUp(folder, days: 5)
        _ = try compact(dir)
        let held = try StoreLock(path: dir + "/tsdb/LOCK", wait: false, onWait: nil)
        let e = caught { _ = try compact(dir) { $0.waitForLock = false } }
        #expect(e?.message.contains("another compaction is running") == true)
        #expect(e?.message.contains("pid \(getpid())") == true)
        withExtendedLifetime(held) {}
    }

    @Test func lockFileHoldsOnlyTheHoldersIdAfterALongerOne() throws {
        let folder = TemporaryFolder("inc")
        defer { folder.cleanup() }
        let path = folder.path + "/LOCK"
        try Data("4194304000\nleft by an older version\n".utf8).write(to: URL(fileURLWithPath: path))
        let held = try StoreLock(path: path, wait: false, onWait: nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")
        withExtendedLifetime(held) {}
    }
}

/// Like ``rawSampleSet`` but leaves out files that do not parse (they are reported, not stored).
func rawSampleSetSkippingBroken(_ raw: String) throws -> Set<Sample> {
    var all = Set<Sample>()
    for rel in try FileManager.default.subpathsOfDirectory(atPath: raw) where rel.hasSuffix(".json") {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: raw + "/" + rel)))
        guard let s = try? samples(ofDayFile: bytes) else { continue }
        all.formUnion(s)
    }
    return all
}
