import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A store compacted from the first days, and a raw folder that has since gained days, lost one
/// and had one rewritten: every interrupted compaction must leave the old state or the new one.
struct CrashFixture {
    let folder = TemporaryFolder("crash")
    var dir: String { folder.path + "/store" }
    var layout: StoreLayout { StoreLayout(appleHealthDirectory: dir) }
    let oldSamples: Set<Sample>
    let newSamples: Set<Sample>

    init(days: Int = 30) throws {
        let all = folder.path + "/all"
        try generate(all, days: days + 12, seed: 77)
        let files = try FileManager.default.subpathsOfDirectory(atPath: all + "/raw").filter { $0.hasSuffix(".json") }
            .sorted()
        let dir = folder.path + "/store"
        func copy(_ rel: String) throws {
            try FileManager.default.createDirectory(
                atPath: dir + "/raw/" + rel.prefix(7), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: all + "/raw/" + rel, toPath: dir + "/raw/" + rel)
        }
        for rel in files.prefix(days) { try copy(rel) }
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: dir)).run()
        oldSamples = Set(try storedSamples(Store(at: dir)))
        for rel in files.dropFirst(days) { try copy(rel) }
        try FileManager.default.removeItem(atPath: dir + "/raw/" + files[3])
        let changed = dir + "/raw/" + files[10]
        let lines = try String(contentsOfFile: changed, encoding: .utf8).components(separatedBy: "\n")
        try (lines.prefix(5) + lines.dropFirst(9)).joined(separator: "\n").write(
            toFile: changed, atomically: true, encoding: .utf8)
        newSamples = try rawSampleSetSkippingBroken(dir + "/raw")
        #expect(oldSamples != newSamples)
    }

    /// The store opens, passes the quick check and holds exactly the old or the new samples.
    func expectConsistent(_ comment: String) throws -> Set<Sample> {
        let store = try Store(at: dir)
        let problems = try StoreVerifier(layout: layout).verify(deep: false).problems
        #expect(problems.isEmpty, "\(comment): \(problems)")
        let now = Set(try storedSamples(store))
        #expect(now == oldSamples || now == newSamples, "\(comment): neither the old nor the new data")
        return now
    }
}

@Suite(.serialized) struct CrashTests {
    @Test(arguments: [
        (FaultInjection.Operation.create, ENOSPC, false), (.write, ENOSPC, false), (.fsync, EIO, false),
        (.rename, EIO, false),
        (.create, ENOSPC, true), (.write, EIO, true), (.fsync, EIO, true), (.rename, ENOSPC, true),
    ])
    func injectedFailuresLeaveAConsistentStore(operation: FaultInjection.Operation, code: Int32, rebuild: Bool) throws {
        let f = try CrashFixture()
        defer { f.folder.cleanup() }
        let rawBefore = snapshot(f.dir + "/raw")
        var failures = 0
        for k in [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 10_000] {
            FaultInjection.install(.init(folder: f.dir + "/tsdb", operation: operation, failFrom: k, errno: code))
            var o = CompactionOptions()
            o.rebuild = rebuild
            let e = caught { _ = try Compactor(layout: f.layout, options: o).run() }
            FaultInjection.remove(folder: f.dir + "/tsdb")
            guard let e else { break }
            failures += 1
            #expect(e.kind == .io && e.errno == code, "\(e)")
            let state = try f.expectConsistent("\(operation) failing from #\(k)")
            if state == f.newSamples { break }  // the failure came after publication
        }
        #expect(failures > 0, "no \(operation) was ever attempted")
        let rawAfter = snapshot(f.dir + "/raw")
        #expect(
            rawBefore.keys.sorted() == rawAfter.keys.sorted()
                && rawBefore.allSatisfy { rawAfter[$0.key]?.0 == $0.value.0 && rawAfter[$0.key]?.1 == $0.value.1 })
        _ = try Compactor(layout: f.layout).run()
        #expect(Set(try storedSamples(Store(at: f.dir))) == f.newSamples)
        #expect(try StoreVerifier(layout: f.layout).verify(deep: true).findings.isEmpty)
    }

    /// The manifest is renamed into place only after every new segment, their folder and the
    /// manifest's own bytes are synced: a failed sync of any of them publishes nothing.
    @Test(arguments: ["segments/", "MANIFEST.tmp"])
    func aFailedSyncBeforePublicationLeavesTheOldGeneration(failing: String) throws {
        let f = try CrashFixture()
        defer { f.folder.cleanup() }
        let folder = f.dir + "/tsdb/" + failing
        FaultInjection.install(.init(folder: folder, operation: .fsync, failFrom: 0, errno: EIO))
        let e = caught { _ = try Compactor(layout: f.layout).run() }
        FaultInjection.remove(folder: folder)
        #expect(e?.kind == .io && e?.errno == EIO, "\(String(describing: e))")
        #expect(try f.expectConsistent("sync of \(failing) failed") == f.oldSamples)
        #expect(!FileManager.default.fileExists(atPath: f.layout.manifestPath + ".tmp"))
        _ = try Compactor(layout: f.layout).run()
        #expect(Set(try storedSamples(Store(at: f.dir))) == f.newSamples)
    }

    @Test func killedCompactionsLeaveAConsistentStore() throws {
        let f = try CrashFixture(days: 40)
        defer { f.folder.cleanup() }
        let pristine = f.folder.path + "/pristine-tsdb"
        try FileManager.default.copyItem(atPath: f.dir + "/tsdb", toPath: pristine)
        let rawBefore = snapshot(f.dir + "/raw")

        func start(_ arguments: [String]) throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CommandLineTests.executable)
            p.arguments = arguments
            p.environment = ProcessInfo.processInfo.environment
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        // How long an uninterrupted compaction takes here, to spread the kills over it.
        let clock = ContinuousClock.now
        let full = try start(["compact", f.dir, "--rebuild"])
        full.waitUntilExit()
        let duration = ContinuousClock.now - clock
        var rng = SplitMix64(seed: 5)
        var sawOld = 0
        var sawNew = 0
        for round in 0..<16 {
            try FileManager.default.removeItem(atPath: f.dir + "/tsdb")
            try FileManager.default.copyItem(atPath: pristine, toPath: f.dir + "/tsdb")
            let p = try start(["compact", f.dir] + (round % 2 == 0 ? ["--rebuild"] : []))
            let delay =
                Double.random(in: 0...1.2, using: &rng)
                * (Double(duration.components.attoseconds) / 1e18 + Double(duration.components.seconds))
            usleep(useconds_t(delay * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let state = try f.expectConsistent("killed after \(Int(delay * 1000)) ms (round \(round))")
            if state == f.oldSamples { sawOld += 1 } else { sawNew += 1 }
        }
        // The kills landed both before and after publication at least once.
        #expect(sawOld > 0, "never killed before publication")
        let rawAfter = snapshot(f.dir + "/raw")
        #expect(
            rawBefore.keys.sorted() == rawAfter.keys.sorted()
                && rawBefore.allSatisfy { rawAfter[$0.key]?.0 == $0.value.0 && rawAfter[$0.key]?.1 == $0.value.1 })
        let final = try start(["compact", f.dir])
        final.waitUntilExit()
        #expect(final.terminationStatus == 0)
        #expect(Set(try storedSamples(Store(at: f.dir))) == f.newSamples)
        #expect(try StoreVerifier(layout: f.layout).verify(deep: true).findings.isEmpty)
        // Nothing a killed run left behind survives the next successful one.
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: f.dir + "/tsdb").filter {
            $0.hasSuffix(".tmp")
        }
        #expect(leftovers.isEmpty)
        // Nor any segment of a generation after the published one (a killed run's parts).
        let published = try Manifest.read(at: f.layout.manifestPath).generation
        let later = try FileManager.default.contentsOfDirectory(atPath: f.layout.segmentsDirectory).filter {
            (Compactor.generation(ofSegmentFile: $0[...]) ?? 0) > published
        }
        #expect(later.isEmpty, "\(later)")
        _ = sawNew
    }
}

@Suite(.serialized) struct ConcurrentReadTests {
    /// Queries running while real compactions publish generations always see exactly the old
    /// or the new data, never an error or a mix.
    @Test func queriesDuringCompactionSeeOneGeneration() throws {
        let f = try CrashFixture(days: 30)
        defer { f.folder.cleanup() }
        var reads = 0
        var duringCompaction = 0
        for round in 0..<4 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CommandLineTests.executable)
            p.arguments = ["compact", f.dir] + (round % 2 == 0 ? ["--rebuild"] : [])
            p.environment = ProcessInfo.processInfo.environment
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            repeat {
                let running = p.isRunning
                // A store opened now, and one opened before, both read one whole generation.
                let now = Set(try storedSamples(Store(at: f.dir)))
                #expect(now == f.oldSamples || now == f.newSamples, "round \(round): a mixed or wrong read")
                reads += 1
                if running { duringCompaction += 1 }
            } while p.isRunning
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
        #expect(duringCompaction > 0, "no read overlapped a compaction (\(reads) reads)")
    }
}
