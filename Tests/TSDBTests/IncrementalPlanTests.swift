import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// What an incremental compaction makes of the listing and the manifest's raw files, paired in
/// one pass in path order, against a brute-force oracle that looks each path up.
@Suite struct IncrementalPlanTests {
    static let exportPath = RawPath.exportPrefix + "2025-06-01.zip"

    static func file(_ path: String, size: Int, mtime: Int64) -> RawFile {
        RawFile(
            relativePath: path, base: "/raw/", day: 0, size: size,
            mtimeNanoseconds: mtime)
    }

    static func entry(_ path: String, size: Int, mtime: Int64) -> Manifest.RawFileEntry {
        Manifest.RawFileEntry(
            path: path, size: size, mtimeNanoseconds: mtime, contentHash: UInt64(size), sampleCount: 1, months: [])
    }

    /// A random listing and manifest over a pool of paths (day files and an export): each path in
    /// both, one or neither, with the same or another size or mtime; either side maybe shuffled.
    static func scenario(_ rng: inout SplitMix64) -> (files: [RawFile], manifest: Manifest) {
        let days = (0..<Int.random(in: 0...60, using: &rng)).map { (i: Int) -> String in
            let (month, day) = (i / 28 + 1, i % 28 + 1)
            return String(format: "2025/%02d/2025-%02d-%02d.json", month, month, day)
        }
        var files: [RawFile] = []
        var manifest = Manifest()
        for path in [exportPath] + days {
            let (size, mtime) = (Int.random(in: 1...3, using: &rng), Int64.random(in: 1...3, using: &rng))
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: files.append(file(path, size: size, mtime: mtime))
            case 1: manifest.rawFiles.append(entry(path, size: size, mtime: mtime))
            case 2: continue
            default:
                files.append(file(path, size: size, mtime: mtime))
                let same = Bool.random(using: &rng)
                manifest.rawFiles.append(entry(path, size: same ? size : size + 1, mtime: mtime))
            }
        }
        if Int.random(in: 0..<4, using: &rng) == 0 { files.shuffle(using: &rng) }
        if Int.random(in: 0..<4, using: &rng) == 0 { manifest.rawFiles.shuffle(using: &rng) }
        return (files, manifest)
    }

    @Test func pairsEqualLookingEachPathUp() {
        var rng = SplitMix64(seed: 7)
        for round in 0..<300 {
            let (files, manifest) = Self.scenario(&rng)
            let plan = Compactor.IncrementalPlan(files: files, previous: manifest)
            // The oracle: every listed file looked up by path; the manifest's others are deleted.
            var previous: [String: Manifest.RawFileEntry] = [:]
            for e in manifest.rawFiles { previous[e.path] = e }
            let listed = Set(files.map(\.relativePath))
            let byPath = files.sorted { $0.relativePath < $1.relativePath }
            let unchanged = byPath.filter { f in
                previous[f.relativePath].map { $0.size == f.size && $0.mtimeNanoseconds == f.mtimeNanoseconds } ?? false
            }
            let kept = Set(unchanged.map(\.relativePath))
            let candidates = byPath.filter { !kept.contains($0.relativePath) }
            let deleted = manifest.rawFiles.filter { !listed.contains($0.path) }.sorted { $0.path < $1.path }
            #expect(plan.unchanged.map(\.relativePath) == unchanged.map(\.relativePath), "round \(round)")
            #expect(plan.unchangedEntries == unchanged.map { previous[$0.relativePath]! }, "round \(round)")
            #expect(plan.candidates.map(\.relativePath) == candidates.map(\.relativePath), "round \(round)")
            #expect(plan.candidateEntries == candidates.map { previous[$0.relativePath] }, "round \(round)")
            #expect(plan.deleted == deleted, "round \(round)")
        }
    }

    @Test func entriesInPathOrderAreBothListsSorted() {
        var rng = SplitMix64(seed: 11)
        for round in 0..<300 {
            let (_, manifest) = Self.scenario(&rng)
            let all = manifest.rawFiles.sorted { $0.path < $1.path }
            var a: [Manifest.RawFileEntry] = []
            var b: [Manifest.RawFileEntry] = []
            for e in all {
                if Bool.random(using: &rng) { a.append(e) } else { b.append(e) }
            }
            #expect(Compactor.inPathOrder(a, b) == all, "round \(round)")
        }
    }
}
