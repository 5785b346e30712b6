import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// ``SourceRanking/countedPieces(_:)`` and ``IntervalCredits`` against brute force, piece for
/// piece and in order: the sums of a bucket add its pieces in that order.
@Suite struct CountedPiecesTests {
    /// The pieces found the slow way. Between two neighbouring starts or ends, the sample that
    /// counts is, of those covering that stretch, the first by rank, start, end and place in the
    /// input (later ones there are covered); runs of one winner are its pieces. A point sample
    /// counts unless an interval covers it that comes first (a higher rank, or its own rank's
    /// starting earlier). Pieces are in (start, end) order, points at one instant by rank, then place.
    static func bruteForce(_ samples: [IntervalSample]) -> [CountedPiece] {
        func key(_ i: Int) -> Int64 { Int64(samples[i].rank.source) << 32 | Int64(samples[i].rank.value) }
        func first(_ i: Int, _ j: Int) -> Bool {
            (key(i), samples[i].start, samples[i].end, i) < (key(j), samples[j].start, samples[j].end, j)
        }
        var pieces: [(piece: CountedPiece, key: Int64, place: Int)] = []
        func piece(_ r: (sample: Int, start: Int64, end: Int64)) -> (piece: CountedPiece, key: Int64, place: Int) {
            (CountedPiece(samples[r.sample], start: r.start, end: r.end), key(r.sample), r.sample)
        }
        let edges = Set(samples.flatMap { [$0.start, $0.end] }).sorted()
        var run: (sample: Int, start: Int64, end: Int64)?
        for (a, b) in zip(edges, edges.dropFirst()) {
            let winner = samples.indices.filter {
                samples[$0].start <= a && b <= samples[$0].end && samples[$0].start < samples[$0].end
            }.min(by: first)
            if let r = run, r.sample == winner, r.end == a {
                run = (r.sample, r.start, b)
                continue
            }
            if let r = run { pieces.append(piece(r)) }
            run = winner.map { ($0, a, b) }
        }
        if let r = run { pieces.append(piece(r)) }
        for (i, p) in samples.enumerated() where p.start == p.end {
            let covered = samples.indices.contains { j in
                samples[j].start <= p.start && p.start < samples[j].end
                    && (key(j) < key(i) || (key(j) == key(i) && samples[j].start < p.start))
            }
            if !covered { pieces.append((CountedPiece(p), key(i), i)) }
        }
        return pieces.sorted {
            ($0.piece.start, $0.piece.end, $0.key, $0.place) < ($1.piece.start, $1.piece.end, $1.key, $1.place)
        }.map(\.piece)
    }

    /// Samples from `sources` sources with `values` value ranks: points, intervals of every length,
    /// exact repeats; in time order per source (as the store gives them) or shuffled; `crowded`,
    /// many starting together and half of them points, so that pieces of different ranks tie.
    static func samples(
        _ rng: inout SplitMix64, count: Int, sources: Int, values: Int, inOrder: Bool, crowded: Bool = false
    ) -> [IntervalSample] {
        var out: [IntervalSample] = []
        var t: Int64 = 0
        for i in 0..<count {
            t += Int64(rng.next() % (crowded ? 3 : 40))
            let length: Int64 = rng.next() % (crowded ? 2 : 5) == 0 ? 0 : Int64(1 + rng.next() % 120)
            var s = IntervalSample(start: t, end: t + length, amount: Double(i), sourceKey: Int32(rng.next() % 7))
            s.rank = (Int32(rng.next() % UInt64(sources)), Int32(rng.next() % UInt64(values)))
            out.append(s)
            if rng.next() % 9 == 0 { out.append(s) }
        }
        if !inOrder { out.shuffle(using: &rng) }
        return out
    }

    /// Samples are told apart by their amounts (each sample's place, but for exact repeats).
    static func same(_ a: [CountedPiece], _ b: [CountedPiece]) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy {
                ($0.start, $0.end, $0.sampleStart, $0.sampleEnd, $0.amount)
                    == ($1.start, $1.end, $1.sampleStart, $1.sampleEnd, $1.amount)
            }
    }

    // One rank (nothing to merge), two (a phone and a watch), a sleep type's ranks, and more ranks
    // than are merged (sorted instead) or looked up along a list (hashed instead).
    @Test(arguments: [(1, 1), (2, 1), (3, 6), (40, 1), (9, 4)])
    func piecesAreTheBruteForceOnesInTheSameOrder(sources: Int, values: Int) {
        for round in 0..<20 {
            var rng = SplitMix64(seed: UInt64(sources * 1000 + values * 100 + round))
            let samples = Self.samples(
                &rng, count: Int(1 + rng.next() % 400), sources: sources, values: values, inOrder: round % 2 == 0,
                crowded: round % 4 < 2)
            let pieces = SourceRanking.countedPieces(samples)
            #expect(Self.same(pieces, Self.bruteForce(samples)), "round \(round)")
        }
    }

    /// The most pieces a rank can make: one long sample of the second rank across many short
    /// stretches the first covered makes a piece in every gap and one after the last, as many as
    /// its members and those stretches together (the room `countedPieces` makes for them).
    @Test(arguments: [1, 2, 300])
    func aLongSampleAcrossCoveredStretchesKeepsEveryGap(stretches: Int) {
        var samples: [IntervalSample] = (0..<stretches).map { i in
            var s = IntervalSample(start: Int64(10 * i + 1), end: Int64(10 * i + 5), amount: 1, sourceKey: 0)
            s.rank = (0, 0)
            return s
        }
        var long = IntervalSample(start: 0, end: Int64(10 * stretches + 7), amount: 2, sourceKey: 1)
        long.rank = (1, 0)
        samples.append(long)
        let pieces = SourceRanking.countedPieces(samples)
        #expect(pieces.filter { $0.amount == 2 }.count == stretches + 1)
        #expect(Self.same(pieces, Self.bruteForce(samples)))
    }

    @Test func noSamplesGiveNoPieces() {
        #expect(SourceRanking.countedPieces([]).isEmpty)
    }

    /// Bucket sums from pieces given out of order (the sort the store's order makes unnecessary)
    /// equal those from the same pieces in order.
    @Test(arguments: [true, false])
    func creditsDoNotDependOnThePiecesOrder(prorate: Bool) {
        var rng = SplitMix64(seed: 41)
        let pieces = SourceRanking.countedPieces(Self.samples(&rng, count: 300, sources: 2, values: 1, inOrder: true))
        var shuffled = pieces
        shuffled.shuffle(using: &rng)
        func sums(_ p: [CountedPiece]) -> [Double] {
            var credits = IntervalCredits(p, lo: 100, hi: 6_000, prorate: prorate, category: false)
            var seconds = CategorySeconds()
            return stride(from: Int64(100), to: 6_000, by: 250).map { start in
                var sum = 0.0
                _ = credits.credit(Bucket(start: start, end: start + 250), sum: &sum, seconds: &seconds)
                return sum
            }
        }
        let (inOrder, outOfOrder) = (sums(pieces), sums(shuffled))
        #expect(inOrder.reduce(0, +) > 0)
        #expect(zip(inOrder, outOfOrder).allSatisfy { abs($0 - $1) <= 1e-9 * max(1, abs($0)) })
    }

    /// A segment whose sources times devices are too many for a table by ids (70 × 70): its pairs
    /// are found by hashing, and sums and the source filter are as with a few.
    @Test(arguments: [nil, "app-7", "gadget-12"] as [String?])
    func manySourcesAndDevicesSumAndFilterAsAFewDo(filter: String?) throws {
        let folder = TemporaryFolder("many-sources")
        defer { folder.cleanup() }
        let day: Int64 = 20_150 * 1440  // minutes since the epoch (2025-03-04)
        var lines: [String] = []
        var expected = 0
        for i in 0..<70 {
            func t(_ m: Int64) -> String { ISO8601.format(m * 60_000_000, .zulu) }
            let (source, device) = ("app-\(i)", "gadget-\(69 - i)")
            lines.append(
                #"{"type":"HKQuantityTypeIdentifierStepCount","start":"\#(t(day + Int64(i) * 10))","#
                    + #""end":"\#(t(day + Int64(i) * 10 + 5))","value":\#(i + 1),"unit":"count","#
                    + #""source":"\#(source)","device":"\#(device)"}"#)
            if filter.map({ source.contains($0) || device.contains($0) }) ?? true { expected += i + 1 }
        }
        folder.write(#"{"samples":["# + lines.joined(separator: ",") + "]}", to: "raw/2025/03/2025-03-04.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let store = try Store(at: folder.path)
        let segment = try #require(try store.segments(of: "HKQuantityTypeIdentifierStepCount").first)
        #expect(segment.sources.count * segment.devices.count > 4096)
        var options = AggregateOptions()
        options.bucket = .calendar(.day)
        options.source = filter
        let rows = try store.aggregate("HKQuantityTypeIdentifierStepCount", options: options).rows
        #expect(rows.map { $0.values[.sum] } == [Double(expected)])
    }
}
