import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Interval samples read a batch at a time (``IntervalSampleBatches``): the pieces and bucket sums
/// are those of the whole range read at once, and a batch that cannot be read fails the aggregate
/// with no short row.
@Suite struct IntervalBatchesTests {
    typealias Raw = AggregateCorrectnessTests.Raw
    static let steps = "HKQuantityTypeIdentifierStepCount"
    static let sleep = "HKCategoryTypeIdentifierSleepAnalysis"
    static let firstMinute: Int64 = 20_115 * 1440  // 2025-01-28

    /// Samples of every source from the end of January on, each source's in time order: back to
    /// back, overlapping, apart, points, and now and then one lasting a day or two.
    static func samples(_ rng: inout SplitMix64, perSource: Int, values: UInt64 = 300) -> [Raw] {
        var out: [Raw] = []
        for source in AggregateCorrectnessTests.sources.indices {
            var t = firstMinute + Int64(rng.next() % 120)
            for _ in 0..<perSource {
                let kind = rng.next() % 50
                let length: Int64 =
                    kind < 6 ? 0 : kind == 49 ? 1440 + Int64(rng.next() % 1440) : 1 + Int64(rng.next() % 40)
                out.append(Raw(start: t, end: t + length, value: Int64(rng.next() % values), source: source))
                t += rng.next() % 4 == 0 ? length : Int64(rng.next() % 60)
            }
        }
        return out
    }

    static func micros(_ minute: Int64) -> Int64 { minute * 60_000_000 }

    /// Where two lists of pieces first differ, for a failure's message.
    static func firstDifference(_ a: [CountedPiece], _ b: [CountedPiece]) -> String {
        let i = a.indices.first { $0 >= b.count || !CountedPiecesTests.same([a[$0]], [b[$0]]) } ?? a.count
        return "\(a.count) and \(b.count) pieces, from \(i): \(a.dropFirst(i).prefix(3)) against "
            + "\(b.dropFirst(i).prefix(3))"
    }

    /// The whole span, and one starting and ending inside samples.
    static let ranges: [(Int64, Int64)] = [
        (micros(firstMinute - 1440), micros(firstMinute + 40 * 1440)),
        (micros(firstMinute + 1000) + 7, micros(firstMinute + 4000) + 11),
    ]

    static func stream(
        _ store: Store, _ type: String, _ range: (Int64, Int64), options: AggregateOptions = AggregateOptions(),
        batchSize: Int
    ) throws -> CountedPieceStream {
        let kind: TypeCatalog.Kind = type == sleep ? .category : .cumulative
        let batches = try IntervalSampleBatches(
            store, type: type, kind: kind, from: range.0, to: range.1, options: options, batchSize: batchSize,
            carry: options.deduplicate)
        return CountedPieceStream(batches, first: nil, deduplicate: options.deduplicate)
    }

    @Test(arguments: [1, 2, 5, 64])
    func batchesGiveThePiecesOfTheWholeRange(batchSize: Int) throws {
        var rng = SplitMix64(seed: UInt64(70 + batchSize))
        let (store, folder) = try AggregateCorrectnessTests().store(
            Self.samples(&rng, perSource: 300), type: Self.steps, unit: "count")
        defer { folder.cleanup() }
        for range in Self.ranges {
            for (deduplicate, source) in [(true, nil), (false, nil), (true, "i")] as [(Bool, String?)] {
                var options = AggregateOptions()
                (options.deduplicate, options.source) = (deduplicate, source)
                var whole = try Self.stream(store, Self.steps, range, options: options, batchSize: .max)
                let all = try #require(try whole.next())
                #expect(try whole.next() == nil)
                var batched = try Self.stream(store, Self.steps, range, options: options, batchSize: batchSize)
                var pieces: [CountedPiece] = []
                var batches = 0
                while let next = try batched.next() {
                    pieces += next
                    batches += 1
                }
                #expect(batches > 1)
                let same = CountedPiecesTests.same(pieces, all)
                #expect(
                    same,
                    "\(range) \(deduplicate) \(String(describing: source)): \(Self.firstDifference(pieces, all))")
            }
        }
    }

    /// A carried sample that counts again at a window's start, after a higher-ranked one ending
    /// there, is cut to start at the window and goes after the points lying there, as in the whole
    /// range's pieces: the watch's point at minute 50 before the phone's [50, 100).
    @Test func aCarriedPieceCutAtAWindowGoesAfterThePointsThere() throws {
        let (watch, phone) = (0, 4)
        let t = Self.firstMinute
        let (store, folder) = try AggregateCorrectnessTests().store(
            [
                Raw(start: t, end: t + 100, value: 100, source: phone),
                Raw(start: t + 10, end: t + 50, value: 40, source: watch),
                // Inside the watch's interval (so it does not count): the batch holding that
                // interval is full with it, and the next starts at minute 50.
                Raw(start: t + 20, end: t + 20, value: 3, source: watch),
                Raw(start: t + 50, end: t + 50, value: 7, source: watch),
            ], type: Self.steps, unit: "count")
        defer { folder.cleanup() }
        let range = (Self.micros(t - 1), Self.micros(t + 200))
        var whole = try Self.stream(store, Self.steps, range, batchSize: .max)
        let all = try #require(try whole.next())
        #expect(all.map { ($0.start - Self.micros(t)) / 60_000_000 } == [0, 10, 50, 50])
        #expect(all.map(\.amount) == [100, 40, 7, 100])
        var batched = try Self.stream(store, Self.steps, range, batchSize: 1)
        var pieces: [CountedPiece] = []
        while let next = try batched.next() { pieces += next }
        #expect(CountedPiecesTests.same(pieces, all), "\(Self.firstDifference(pieces, all))")
    }

    /// Bucket sums and category time, bucket by bucket as the sweep asks for them, are the same
    /// to the last bit read in batches of one sample and all at once: prorated or each sample
    /// wholly at its start (whose pieces in later batches are waited for), de-duplicated or not.
    @Test(arguments: [
        (Self.steps, true, true), (Self.steps, false, true), (Self.steps, false, false), (Self.sleep, true, true),
        (Self.sleep, false, true), (Self.sleep, true, false),
    ])
    func bucketsAreTheSameWhateverTheBatches(type: String, prorate: Bool, deduplicate: Bool) throws {
        var options = AggregateOptions()
        options.deduplicate = deduplicate
        var rng = SplitMix64(seed: prorate ? 5 : 6)
        let (store, folder) = try AggregateCorrectnessTests().store(
            Self.samples(&rng, perSource: 200, values: type == Self.sleep ? 6 : 300), type: type,
            unit: type == Self.steps ? "count" : nil)
        defer { folder.cleanup() }
        for range in Self.ranges {
            for width in [7, 60, 1440, 100_000].map({ Self.micros($0) }) {
                func buckets(batchSize: Int) throws -> [String] {
                    var credits = IntervalCredits(
                        try Self.stream(store, type, range, options: options, batchSize: batchSize),
                        lo: range.0, hi: range.1,
                        prorate: prorate, category: type == Self.sleep)
                    var out: [String] = []
                    var t = range.0
                    while let next = credits.nextActivity(atOrAfter: t), next < range.1 {
                        let start = range.0 + (next - range.0) / width * width
                        let bucket = Bucket(start: start, end: start + width)
                        var (sum, seconds) = (0.0, CategorySeconds())
                        let touched = credits.credit(bucket, sum: &sum, seconds: &seconds)
                        out.append("\(start) \(touched) \(sum.bitPattern) \(seconds)")
                        t = bucket.end
                    }
                    #expect(credits.failure == nil)
                    return out
                }
                let whole = try buckets(batchSize: .max)
                let batched = try buckets(batchSize: 1)
                #expect(!whole.isEmpty)
                let i = batched.indices.first { $0 >= whole.count || batched[$0] != whole[$0] } ?? batched.count
                #expect(
                    batched == whole,
                    "\(range) \(width): from \(i), \(batched.dropFirst(i).prefix(2)) \(whole.dropFirst(i).prefix(2))")
            }
        }
    }

    /// A category aggregate's values (its columns) are all the range's, also when they are read
    /// in several batches: the last value first appears in the last one.
    @Test func categoryValuesComeFromEveryBatch() throws {
        let count = IntervalSampleBatches.defaultBatchSize * 2 + 100
        let samples = (0..<count).map { i in
            Raw(
                start: Self.firstMinute + Int64(i), end: Self.firstMinute + Int64(i) + 1,
                value: i < count - 10 ? Int64(i % 4) : 5, source: 0)
        }
        let (store, folder) = try AggregateCorrectnessTests().store(samples, type: Self.sleep)
        defer { folder.cleanup() }
        var options = AggregateOptions()
        options.bucket = .calendar(.day)
        let result = try store.aggregate(Self.sleep, options: options)
        #expect(result.categoryValues == [0, 1, 2, 3, 5])
        var total = CategorySeconds()
        for row in result.rows { for (value, seconds) in row.seconds.byValue { total[value, default: 0] += seconds } }
        #expect(total[5] == 600 && total[0] == Double(((count - 10) + 3) / 4 * 60))
    }

    /// Nights read their pieces in batches too, and close a night once a piece starts after its
    /// noon: each night of a range longer than a batch has the minutes `query SleepAnalysis`
    /// gives over its noon-to-noon window.
    @Test func nightsAcrossBatchesHaveTheirWindowsMinutes() throws {
        var rng = SplitMix64(seed: 31)
        let samples = Self.samples(&rng, perSource: 1100, values: 6)
        #expect(samples.count > IntervalSampleBatches.defaultBatchSize)
        let (store, folder) = try AggregateCorrectnessTests().store(samples, type: Self.sleep)
        defer { folder.cleanup() }
        let options = AggregateOptions()  // UTC
        let nights = try store.sleepNights(options: options)
        #expect(nights.count > 20)
        for night in nights {
            let wake = Int64(
                ISO8601.days(
                    year: Int(night.date.prefix(4))!, month: Int(night.date.dropFirst(5).prefix(2))!,
                    day: Int(night.date.suffix(2))!))
            let row = try #require(
                try store.aggregate(
                    Self.sleep, from: Self.micros((wake - 1) * 1440 + 720), to: Self.micros(wake * 1440 + 720),
                    options: options
                ).rows.first)
            let minutes = row.seconds.byValue.filter { $0.value > 0 }  // points credit no time
            #expect(minutes.keys.sorted() == night.secondsByValue.keys.sorted(), "\(night.date)")
            for (value, seconds) in night.secondsByValue {
                #expect(abs((minutes[value] ?? -1) - seconds) < 1e-6, "\(night.date) \(value)")
            }
        }
    }

    /// A damaged block met after the first batch: the aggregate throws it, and the rows handed out
    /// before are right (the bucket it cut short is not among them).
    @Test func aDamagedLaterBlockFailsTheAggregateWithNoShortRow() throws {
        var rng = SplitMix64(seed: 12)
        let (store, folder) = try AggregateCorrectnessTests().store(
            Self.samples(&rng, perSource: 3000), type: Self.steps, unit: "count")
        defer { folder.cleanup() }
        var options = AggregateOptions()
        options.bucket = .calendar(.day)
        let good = try store.aggregate(Self.steps, options: options).rows
        let march = try #require(store.segmentEntries(of: Self.steps).first { $0.year == 2025 && $0.month == 3 })
        let reader = try SegmentReader(
            path: folder.path + "/tsdb/" + march.path, offset: march.offset, count: march.size)
        try flipByte(reader.locations[0].offset + 5, of: march, in: folder.path + "/tsdb", mask: 0x20)
        var rows: [AggregateRow] = []
        let e = caught {
            _ = try Store(at: folder.path).aggregate(
                Self.steps, options: options, header: { _ in }, row: { rows.append($0) })
        }
        #expect(e?.message.contains("CRC mismatch") == true, "\(String(describing: e))")
        #expect(!rows.isEmpty && rows.count < good.count)
        #expect(rows == Array(good.prefix(rows.count)))
        #expect(rows.last!.end <= reader.summaries[0].firstStart)
    }
}
