import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A raw-file entry's months, kept in the entry when there are one or two: the same months, in
/// the same order, equal when the arrays they came from are, and through a manifest and back.
@Suite struct MonthListTests {
    static func randomMonths(_ rng: inout SplitMix64) -> [MonthIndex] {
        (0..<Int.random(in: 0...5, using: &rng)).map { _ in
            MonthIndex(rawValue: Int32.random(in: -3...3, using: &rng) * (Bool.random(using: &rng) ? 1 : 9_000))
        }
    }

    @Test func holdsTheMonthsItWasGiven() {
        var rng = SplitMix64(seed: 21)
        for _ in 0..<2000 {
            let (a, b) = (Self.randomMonths(&rng), Self.randomMonths(&rng))
            let (la, lb) = (MonthList(a), MonthList(b))
            #expect(Array(la) == a && la.count == a.count)
            #expect((la == lb) == (a == b), "\(a) \(b)")
            #expect(la.hashValue == MonthList(a).hashValue)
        }
        #expect(Array([MonthIndex(rawValue: 7)] as MonthList) == [MonthIndex(rawValue: 7)])
    }

    @Test func entriesOfEveryMonthCountDecodeAsEncoded() throws {
        var rng = SplitMix64(seed: 22)
        var m = Manifest()
        for day in 0..<200 {
            let (y, mo, d) = ISO8601.civil(Int64(day) * 37)
            m.rawFiles.append(
                Manifest.RawFileEntry(
                    path: String(format: "%04d/%02d/%04d-%02d-%02d.json", y, mo, y, mo, d), size: day,
                    mtimeNanoseconds: Int64(day), contentHash: UInt64(day), sampleCount: day,
                    months: Self.randomMonths(&rng)))
        }
        m.rawFiles.append(
            Manifest.RawFileEntry(
                path: RawPath.exportPrefix + "export.zip", size: 1, mtimeNanoseconds: 1, contentHash: 1, sampleCount: 1,
                months: (0..<40).map { MonthIndex(rawValue: 24_000 + $0) }))
        let decoded = try m.encode().withUnsafeBytes { try Manifest.decode($0, path: "MANIFEST") }
        #expect(decoded == m)
        #expect(decoded.rawFiles.map { Array($0.months) } == m.rawFiles.map { Array($0.months) })
    }
}
