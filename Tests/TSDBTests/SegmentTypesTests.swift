import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A decoded manifest's segments by type (``SegmentTypes``), which queries pick segments by,
/// against filtering the entries by their type names.
@Suite struct SegmentTypesTests {
    static let names = [
        "HKQuantityTypeIdentifierHeartRate", "HKQuantityTypeIdentifierStepCount",
        "HKQuantityTypeIdentifierBodyMass", "HKCategoryTypeIdentifierSleepAnalysis", "HKWorkoutTypeIdentifier",
        "HKQuantityTypeIdentifierHeartRatX",
    ]

    /// Months of segments, each with some of the types in one order (as compactions write them)
    /// or in a shuffled one, encoded and decoded.
    func decoded(seed: UInt64) throws -> (Manifest, SegmentTypes) {
        var rng = SplitMix64(seed: seed)
        var m = Manifest()
        for month in 0..<30 {
            var types = Self.names.filter { _ in rng.next() % 3 != 0 }
            if rng.next() % 4 == 0 { types.shuffle(using: &rng) }
            for type in types {
                m.segments.append(
                    Manifest.SegmentEntry(
                        type: type, year: 2020 + month / 12, month: month % 12 + 1, path: "segments/pack.g1.seg",
                        fileSize: 1 << 20, offset: 8 * m.segments.count, size: 8, crc: 0, sampleCount: 1,
                        firstStart: Int64(month), lastStart: Int64(month), maxEnd: Int64(month)))
            }
        }
        let bytes = m.encode()
        return try bytes.withUnsafeBytes { try Manifest.decodeWithTypes($0, path: "MANIFEST", rawFiles: false) }
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aTypesSegmentsAreTheEntriesOfThatName(seed: UInt64) throws {
        let (manifest, types) = try decoded(seed: seed)
        var firstSeen: [String] = []
        for s in manifest.segments where !firstSeen.contains(s.type) { firstSeen.append(s.type) }
        #expect(types.names == firstSeen)
        for type in Self.names + ["HKQuantityTypeIdentifierHeart", ""] {
            #expect(types.segments(of: type) == manifest.segments.indices.filter { manifest.segments[$0].type == type })
        }
    }

    /// The count a compaction reports, against a set of the names: decoded (entries sharing their
    /// type's string) and as built (a string per entry).
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func typeCountIsTheNumberOfDistinctNames(seed: UInt64) throws {
        let (manifest, _) = try decoded(seed: seed)
        #expect(manifest.typeCount == Set(manifest.segments.map(\.type)).count)
        var built = manifest
        for i in built.segments.indices {
            built.segments[i].type = String(decoding: Array(built.segments[i].type.utf8), as: UTF8.self)
        }
        if seed % 2 == 0 { built.segments.reverse() }
        #expect(built.typeCount == Set(built.segments.map(\.type)).count)
        #expect(Manifest().typeCount == 0)
    }

    /// The store's own view of a generated store: type names in manifest order, and each type's entries.
    @Test func aStoreListsItsTypesAndTheirSegments() throws {
        let folder = try generatedStore("segment-types", days: 40, start: "2025-01-15")
        defer { folder.cleanup() }
        let store = try Store(at: folder.path)
        let entries = store.segmentEntries
        var firstSeen: [String] = []
        for s in entries where !firstSeen.contains(s.type) { firstSeen.append(s.type) }
        #expect(store.typeNames == firstSeen && firstSeen.count > 5)
        for type in firstSeen + ["HKQuantityTypeIdentifierNotStored"] {
            #expect(store.segmentEntries(of: type) == entries.filter { $0.type == type })
        }
        #expect(store.segmentEntries(of: "HKQuantityTypeIdentifierHeartRate").count == 2)
    }
}
