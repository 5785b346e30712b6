import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Sums over intervals on two threads (``Store/parallelPieces(_:options:walker:)`` with interval
/// credits per piece): every row is the one-thread aggregate's to the last bit, prorated or each
/// sample wholly at its start, and a batch that cannot be read fails the aggregate with no short
/// row; batches grow with what they carry.
@Suite struct IntervalPiecesTests {
    typealias Raw = AggregateCorrectnessTests.Raw
    static let (steps, sleep) = (IntervalBatchesTests.steps, IntervalBatchesTests.sleep)
    static let micros = IntervalBatchesTests.micros

    /// Enough samples of five sources for a few pieces.
    static func store(_ type: String, seed: UInt64) throws -> (Store, TemporaryFolder) {
        var rng = SplitMix64(seed: seed)
        let perSource = 2 * AggregatePieces.minimumIntervalSamples / AggregateCorrectnessTests.sources.count + 1500
        return try AggregateCorrectnessTests().store(
            IntervalBatchesTests.samples(&rng, perSource: perSource, values: type == sleep ? 6 : 300), type: type,
            unit: type == steps ? "count" : nil)
    }

    /// A row as text, sums by their bits.
    static func text(_ r: AggregateRow) -> String {
        let values = Statistic.allCases.map { r.values[$0].map { "\($0.bitPattern)" } ?? "-" }
        return "\(r.start) \(r.end) \(values) \(r.seconds.byValue.sorted { $0.key < $1.key })"
    }

    func options(_ zone: String, _ bucket: String, threads: Int) throws -> AggregateOptions {
        var o = AggregateOptions()
        o.zone = try TimeZoneRules.named(zone)
        o.bucket = try BucketSpec.parse(bucket)
        o.threads = threads
        return o
    }

    @Test(arguments: [steps, sleep])
    func piecesGiveTheOneThreadRows(type: String) throws {
        let (store, folder) = try Self.store(type, seed: type == Self.steps ? 41 : 42)
        defer { folder.cleanup() }
        let first = IntervalBatchesTests.firstMinute
        let ranges: [(Int64?, Int64?)] = [
            (nil, nil), (Self.micros(first + 1000) + 7, Self.micros(first + 100_000) + 11),
        ]
        for (zone, bucket) in [("UTC", "day"), ("Australia/Lord_Howe", "hour"), ("Asia/Kathmandu", "week")] {
            for (deduplicate, fill, stats, prorate) in [
                (true, false, nil, true), (false, false, nil, true), (true, true, [Statistic.sum, .count, .max], true),
                (true, false, nil, false), (false, true, nil, false),
            ] as [(Bool, Bool, [Statistic]?, Bool)] {
                for (from, to) in ranges {
                    var two = try options(zone, bucket, threads: 2)
                    (two.deduplicate, two.fill, two.prorate) = (deduplicate, fill, prorate)
                    two.statistics = type == Self.steps ? stats : nil
                    var one = two
                    one.threads = 1
                    let context = "\(zone) \(bucket) \(deduplicate) \(fill) \(prorate) \(String(describing: from))"
                    let plan = store.aggregatePlan(type, from: from, to: to, options: two)
                    let walker = BucketWalker(spec: two.bucket, zone: two.zone, from: plan.lo, to: plan.hi)
                    let pieces = try #require(store.parallelPieces(plan, options: two, walker: walker), "\(context)")
                    #expect(pieces.count >= 2, "\(context)")
                    #expect(store.parallelPieces(plan, options: one, walker: walker) == nil)
                    let (a, b) = (
                        try store.aggregate(type, from: from, to: to, options: two),
                        try store.aggregate(type, from: from, to: to, options: one)
                    )
                    #expect(a.categoryValues == b.categoryValues && !a.rows.isEmpty, "\(context)")
                    #expect(a.pieces == pieces.count && b.pieces == 1, "\(context): \(a.pieces), \(b.pieces) pieces")
                    let (rowsA, rowsB) = (a.rows.map(Self.text), b.rows.map(Self.text))
                    let i = rowsA.indices.first { $0 >= rowsB.count || rowsA[$0] != rowsB[$0] } ?? rowsA.count
                    let difference = "\(rowsA.dropFirst(i).prefix(1)) against \(rowsB.dropFirst(i).prefix(1))"
                    #expect(rowsA == rowsB, "\(context): \(rowsA.count), \(rowsB.count) rows, from \(i): \(difference)")
                }
            }
        }
    }

    /// A range of intervals long enough to cut is cut into pieces of about
    /// ``AggregatePieces/intervalSamplesPerPiece`` samples, two at least: each piece costs a
    /// set-up, so four times ``AggregatePieces/minimumIntervalSamples`` still make two.
    @Test func intervalsAreCutIntoFewPieces() throws {
        var rng = SplitMix64(seed: 48)
        let perSource = 4 * AggregatePieces.minimumIntervalSamples / AggregateCorrectnessTests.sources.count + 500
        let (store, folder) = try AggregateCorrectnessTests().store(
            IntervalBatchesTests.samples(&rng, perSource: perSource), type: Self.steps, unit: "count")
        defer { folder.cleanup() }
        let total = store.segmentEntries(of: Self.steps).reduce(0) { $0 + Int($1.sampleCount) }
        let (least, perPiece) = (AggregatePieces.minimumIntervalSamples, AggregatePieces.intervalSamplesPerPiece)
        #expect(total >= 4 * least && total < 2 * perPiece)
        let two = try options("UTC", "day", threads: 2)
        let plan = store.aggregatePlan(Self.steps, from: nil, to: nil, options: two)
        let walker = BucketWalker(spec: two.bucket, zone: two.zone, from: plan.lo, to: plan.hi)
        #expect(store.parallelPieces(plan, options: two, walker: walker)?.count == 2)
    }

    /// Rows laid out in columns (``Store/aggregateColumns(_:from:to:options:)``, what charts and the
    /// dashboard read) come from pieces too, into each piece's chunk: the one-thread columns.
    @Test(arguments: [steps, sleep])
    func columnsFromPiecesAreTheOneThreadColumns(type: String) throws {
        let (store, folder) = try Self.store(type, seed: type == Self.steps ? 46 : 47)
        defer { folder.cleanup() }
        for bucket in ["day", "hour"] {
            let two = try options("Europe/Paris", bucket, threads: 2)
            var one = two
            one.threads = 1
            let plan = store.aggregatePlan(type, from: nil, to: nil, options: two)
            let walker = BucketWalker(spec: two.bucket, zone: two.zone, from: plan.lo, to: plan.hi)
            #expect(store.parallelPieces(plan, options: two, walker: walker) != nil)
            let (a, b) = (
                try store.aggregateColumns(type, options: two), try store.aggregateColumns(type, options: one)
            )
            #expect(a.starts.count > 50 && a.starts == b.starts && a.ends == b.ends, "\(bucket)")
            #expect(a.values.map { $0.map(\.bitPattern) } == b.values.map { $0.map(\.bitPattern) }, "\(bucket)")
            #expect(a.seconds.map { $0.map(\.bitPattern) } == b.seconds.map { $0.map(\.bitPattern) }, "\(bucket)")
            let filled = (type == Self.sleep ? a.seconds : a.values).contains { !$0.isEmpty }
            #expect(filled)
        }
    }

    /// Nights of a long range are cut between nights for two cores: each is the one-thread
    /// night, in order, in the wearer's zone and in others, over the whole span and part of it.
    @Test func nightsInPiecesAreTheOneThreadNights() throws {
        let (store, folder) = try Self.store(Self.sleep, seed: 45)
        defer { folder.cleanup() }
        let first = IntervalBatchesTests.firstMinute
        for zone in ["UTC", "Australia/Lord_Howe", "America/St_Johns"] {
            for (from, to) in [(nil, nil), (Self.micros(first + 2000) + 3, Self.micros(first + 110_000))]
                as [(Int64?, Int64?)]
            {
                var two = try options(zone, "day", threads: 2)
                two.bucket = .none
                var one = two
                one.threads = 1
                let firstDay = BucketWalker.localDay(from ?? Self.micros(first), two.zone)
                let entries = store.segmentEntries(of: Self.sleep)
                let cuts = store.nightPieces(firstDay, firstDay + 80, of: entries, from: .min, to: .max, options: two)
                #expect(
                    cuts.count > 2
                        && store.nightPieces(firstDay, firstDay + 80, of: entries, from: .min, to: .max, options: one)
                            .count == 2
                )
                let (a, b) = (
                    try store.sleepNights(from: from, to: to, options: two),
                    try store.sleepNights(from: from, to: to, options: one)
                )
                #expect(a.count > 40 && a == b, "\(zone) \(String(describing: from)): \(a.count) and \(b.count) nights")
            }
        }
    }

    /// A damaged block in a later piece: the aggregate throws it, and the rows handed out before
    /// are right (the bucket it cut short is not among them).
    @Test(arguments: [1, 2])
    func aDamagedBlockFailsTheAggregateWithNoShortRow(threads: Int) throws {
        let (store, folder) = try Self.store(Self.steps, seed: 44)
        defer { folder.cleanup() }
        let options = try options("UTC", "day", threads: threads)
        let good = try store.aggregate(Self.steps, options: options).rows
        let march = try #require(store.segmentEntries(of: Self.steps).first { $0.year == 2025 && $0.month == 3 })
        let reader = try SegmentReader(
            path: folder.path + "/tsdb/" + march.path, offset: march.offset, count: march.size)
        try flipByte(reader.locations[0].offset + 5, of: march, in: folder.path + "/tsdb", mask: 0x20)
        let damaged = try Store(at: folder.path)
        let plan = damaged.aggregatePlan(Self.steps, from: nil, to: nil, options: options)
        let walker = BucketWalker(spec: options.bucket, zone: options.zone, from: plan.lo, to: plan.hi)
        #expect((damaged.parallelPieces(plan, options: options, walker: walker) != nil) == (threads > 1))
        var rows: [AggregateRow] = []
        let e = caught {
            _ = try damaged.aggregate(Self.steps, options: options, header: { _ in }, row: { rows.append($0) })
        }
        #expect(e?.message.contains("CRC mismatch") == true, "\(String(describing: e))")
        #expect(!rows.isEmpty && rows.count < good.count)
        #expect(rows == Array(good.prefix(rows.count)))
        #expect(rows.last!.end <= reader.summaries[0].firstStart)
    }

    /// Long samples covering many short ones are carried into every batch they reach: a batch
    /// then takes twice as many samples of its own as it carries, so carrying costs at most half
    /// of what a batch ranks and cuts.
    @Test func aBatchTakesTwiceWhatItCarries() throws {
        let first = IntervalBatchesTests.firstMinute
        let long = (0..<60).map { i in Raw(start: first + Int64(i), end: first + 20_000, value: 5, source: 1) }
        let short = (0..<3000).map { i in
            Raw(start: first + 100 + Int64(i) * 5, end: first + 102 + Int64(i) * 5, value: 1, source: i % 2 * 4)
        }
        let (store, folder) = try AggregateCorrectnessTests().store(long + short, type: Self.steps, unit: "count")
        defer { folder.cleanup() }
        var batches = try IntervalSampleBatches(
            store, type: Self.steps, kind: .cumulative, from: .min, to: .max, options: AggregateOptions(),
            batchSize: 16)
        var (seen, count) = (0, 0)
        while let batch = try batches.next() {
            let own = batch.samples.filter { $0.start >= batch.from }.count
            let carried = batch.samples.count - own
            seen += own
            count += 1
            if batch.to != .max {
                #expect(own >= max(16, 2 * carried), "batch \(count): \(own) own, \(carried) carried")
            }
        }
        #expect(seen == long.count + short.count && count > 2)
    }
}
