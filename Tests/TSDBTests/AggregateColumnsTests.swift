import Foundation
import TSDBSynthetic
import Testing

@testable import TSDB

/// `Store.aggregateColumns` against the rows of `Store.aggregate`: the same answer, laid out in
/// columns, whether the range is scanned on one thread or in pieces on two.
@Suite struct AggregateColumnsTests {
    typealias Pieces = ParallelAggregationTests

    /// Every row of `rows`, read back from `columns`, and each column against the rows' values
    /// (NaN where a statistic is absent).
    func expectSame(_ columns: AggregateColumns, _ rows: [AggregateRow], _ label: String) {
        #expect(columns.count == rows.count, "\(label)")
        guard columns.count == rows.count else { return }
        #expect(columns.starts == rows.map(\.start) && columns.ends == rows.map(\.end), "\(label)")
        for (k, s) in columns.result.statistics.enumerated() {
            let expected = rows.map { ($0.values[s] ?? .nan).bitPattern }
            #expect(columns.values[k].map(\.bitPattern) == expected, "\(label): \(s)")
            #expect(columns.column(s)?.map(\.bitPattern) == expected, "\(label): \(s)")
        }
        for i in rows.indices where columns.row(i) != rows[i] {
            Issue.record("\(label): row \(i) is \(columns.row(i)), not \(rows[i])")
            return
        }
    }

    @Test(arguments: [
        ("UTC", "minute", false), ("Asia/Kathmandu", "15m", false), ("Australia/Lord_Howe", "hour", true),
        ("America/St_Johns", "day", false), ("Europe/Paris", "week", true),
    ])
    func columnsHoldTheRowsInPiecesAndOnOneThread(zone: String, bucket: String, fill: Bool) throws {
        let (store, folder) = try Pieces().fixture()
        defer { folder.cleanup() }
        let stats: [Statistic] = [.mean, .count, .stddev, .max, .first, .p95, .min]
        let o = try Pieces().options(zone, bucket, stats, fill: fill)
        let plan = store.aggregatePlan(Pieces.type, from: nil, to: nil, options: o)
        let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
        #expect(store.parallelPieces(plan, options: o, walker: walker) != nil)
        let day = Pieces.samples[100_000].start.microseconds
        for (from, to) in [(Int64?.none, Int64?.none), (day, day + 86_400_000_000)] {
            let columns = try store.aggregateColumns(Pieces.type, from: from, to: to, options: o)
            let result = try store.aggregate(Pieces.type, from: from, to: to, options: o)
            expectSame(columns, result.rows, "\(zone) \(bucket) from \(String(describing: from))")
            #expect(columns.result.statistics == stats && columns.seconds.isEmpty)
            #expect(columns.result.blocksDecoded == result.blocksDecoded)
            #expect(columns.result.blocksFromSlots == result.blocksFromSlots)
        }
    }

    /// Seeded random ranges, buckets and statistics (single values among them, where a standard
    /// deviation is undefined): the columns are the rows.
    @Test func randomQueriesGiveTheRowsAsColumns() throws {
        let (store, folder) = try Pieces().fixture()
        defer { folder.cleanup() }
        var random = SplitMix64(seed: 16)
        let samples = Pieces.samples
        let buckets = ["minute", "5m", "15m", "hour", "90m", "day", "week", "month"]
        let zones = ["UTC", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns"]
        for round in 0..<24 {
            let a = Int(random.next() % UInt64(samples.count))
            let b = min(samples.count - 1, a + Int(random.next() % 200_000))
            let stats = Statistic.allCases.filter { $0 != .sum && random.next() % 2 == 0 }
            let o = try Pieces().options(
                zones[Int(random.next() % 4)], buckets[Int(random.next() % 8)], stats.isEmpty ? [.stddev] : stats,
                fill: random.next() % 4 == 0)
            let (from, to) = (samples[a].start.microseconds, samples[b].start.microseconds + Int64(round))
            expectSame(
                try store.aggregateColumns(Pieces.type, from: from, to: to, options: o),
                try store.aggregate(Pieces.type, from: from, to: to, options: o).rows, "round \(round)")
        }
    }

    /// One set of columns filled again and again (``Store/aggregateColumns(_:from:to:options:into:)``)
    /// by seeded random queries, more and fewer rows and statistics than the last, empty ranges
    /// among them: each time the same answer as fresh columns, and in the same room when it fits.
    @Test func columnsFilledAgainHoldOnlyTheNewAnswerInTheirRoom() throws {
        let (store, folder) = try Pieces().fixture()
        defer { folder.cleanup() }
        var random = SplitMix64(seed: 29)
        let samples = Pieces.samples
        let buckets = ["minute", "15m", "hour", "day"]
        var columns = AggregateColumns()
        for round in 0..<16 {
            let a = Int(random.next() % UInt64(samples.count))
            let b = round % 5 == 4 ? a : min(samples.count - 1, a + Int(random.next() % 100_000))
            let stats = Statistic.allCases.filter { $0 != .sum && random.next() % 2 == 0 }
            let o = try Pieces().options(
                "Europe/Paris", buckets[Int(random.next() % 4)], stats.isEmpty ? [.mean] : stats)
            let (from, to) = (samples[a].start.microseconds, samples[b].start.microseconds)
            let fresh = try store.aggregateColumns(Pieces.type, from: from, to: to, options: o)
            let room = (columns.starts.capacity, columns.starts.withUnsafeBufferPointer { $0.baseAddress })
            try store.aggregateColumns(Pieces.type, from: from, to: to, options: o, into: &columns)
            expectSame(columns, try store.aggregate(Pieces.type, from: from, to: to, options: o).rows, "round \(round)")
            #expect(columns.values.count == fresh.values.count && columns.seconds.isEmpty, "round \(round)")
            #expect(columns.result.blocksDecoded == fresh.result.blocksDecoded, "round \(round)")
            if columns.count > 0 && columns.count <= room.0 {
                #expect(columns.starts.withUnsafeBufferPointer { $0.baseAddress } == room.1, "round \(round)")
            }
        }
        // From a category answer (columns of seconds) to statistics, and back.
        var sleep = AggregateColumns()
        sleep.seconds = [[1, 2], [3, 4]]
        let o = try Pieces().options("UTC", "day", [.count])
        try store.aggregateColumns(Pieces.type, options: o, into: &sleep)
        expectSame(sleep, try store.aggregate(Pieces.type, options: o).rows, "after seconds")
        #expect(sleep.seconds.isEmpty && sleep.values.count == 1)
    }

    /// A chunk given too little room grows, keeping what it holds, whether rows are added to it or
    /// to its rows lent out (the room they grew to is taken back), and holds rows again after being
    /// emptied: seeded random rows (absent statistics among them) come out as appended.
    @Test func chunksGrowAndAreReusedKeepingEveryRow() {
        var random = SplitMix64(seed: 7)
        let stats: [Statistic] = [.p99, .count, .stddev, .first]
        let shape = AggregateColumns(
            AggregateResult(type: "t", kind: .discrete, statistics: stats, categoryValues: [], rows: []))
        let chunk = ColumnChunk(for: shape, capacity: 1)
        func rows(_ n: Int) -> [AggregateRow] {
            (0..<n).map { i in
                var values = StatisticValues()
                for s in stats where random.next() % 3 != 0 { values[s] = Double(random.next() % 1000) / 8 }
                return AggregateRow(start: Int64(i) * 60, end: Int64(i + 1) * 60, values: values, seconds: [:])
            }
        }
        for (round, n) in [1, 2, 3, 100, 37, 300].enumerated() {
            let made = rows(n)
            if round % 2 == 0 {
                for row in made { chunk.append(row) }
            } else {
                chunk.lend { (lent: inout ColumnRows) in for row in made { lent.append(row) } }
            }
            var columns = shape
            columns.append(chunk)
            expectSame(columns, made, "\(n) rows, room for \(chunk.capacity)")
            chunk.removeAll()
        }
        #expect(chunk.capacity == 512)
    }

    /// A chunk laid out again for other statistics (more, fewer, category seconds) keeps its memory
    /// when it has room for the rows asked for, grows when not, and holds the new layout's rows.
    @Test func chunksLaidOutAgainHoldTheNewRowsInTheirMemory() {
        var random = SplitMix64(seed: 11)
        func shape(_ stats: [Statistic], _ categoryValues: [Int64] = []) -> AggregateColumns {
            let kind: TypeCatalog.Kind = categoryValues.isEmpty ? .discrete : .category
            var columns = AggregateColumns(
                AggregateResult(type: "t", kind: kind, statistics: stats, categoryValues: categoryValues, rows: []))
            if !categoryValues.isEmpty { columns.seconds = categoryValues.map { _ in [] } }
            return columns
        }
        let chunk = ColumnChunk(for: shape([.count, .mean, .max, .p95, .stddev, .first]), capacity: 100)
        for (round, (stats, values, rows)) in [
            ([Statistic.min], [Int64](), 300), ([.last, .p50], [], 50), ([], [0, 3, 5], 90), ([.sum, .count], [], 1),
        ].enumerated() {
            let columns = shape(stats, values)
            chunk.append(AggregateRow(start: 1, end: 2, values: StatisticValues(), seconds: [:]))
            let words = chunk.words
            chunk.reshape(for: columns, capacity: rows)
            #expect(chunk.count == 0 && chunk.capacity >= rows, "round \(round)")
            #expect((chunk.words == words) == (rows * (2 + stats.count + values.count) <= words), "round \(round)")
            let made = (0..<rows).map { i in
                var v = StatisticValues()
                for s in stats where random.next() % 4 != 0 { v[s] = Double(random.next() % 512) / 4 }
                var seconds = CategorySeconds()
                for value in values where random.next() % 2 == 0 {
                    seconds[value, default: 0] = Double(1 + random.next() % 60)
                }
                return AggregateRow(start: Int64(i) * 60, end: Int64(i + 1) * 60, values: v, seconds: seconds)
            }
            for row in made { chunk.append(row) }
            var filled = columns
            filled.append(chunk)
            expectSame(filled, made, "round \(round)")
            for (k, value) in values.enumerated() {
                #expect(filled.seconds[k] == made.map { $0.seconds[value] ?? 0 }, "round \(round): \(value)")
            }
        }
    }

    /// No rows in an empty range; the widest range there is (whose length overflows) holds all of them.
    @Test func emptyAndUnboundedRanges() throws {
        let (store, folder) = try Pieces().fixture()
        defer { folder.cleanup() }
        let o = try Pieces().options("UTC", "day", [.count, .max])
        let t = Pieces.samples[5].start.microseconds
        let empty = try store.aggregateColumns(Pieces.type, from: t, to: t, options: o)
        #expect(empty.count == 0 && empty.values.count == 2 && empty.values.allSatisfy(\.isEmpty))
        // Zone arithmetic on the bounds overflowed (a trap) before ranges were clamped to four-digit years.
        let widest = try store.aggregate(Pieces.type, from: .min, to: .max, options: o)
        #expect(widest.rows == (try store.aggregate(Pieces.type, options: o).rows))
        let all = try store.aggregateColumns(Pieces.type, from: .min, to: .max, options: o)
        expectSame(all, widest.rows, "everything")
        #expect(all.column(.count)?.reduce(0, +) == Double(Pieces.samples.count))
        #expect(all.column(.min) == nil)
    }

    /// A category type: one column of seconds per category value, 0 where a value has none.
    @Test func categoryTimeComesAsOneColumnPerValue() throws {
        let folder = TemporaryFolder("sleep-columns")
        defer { folder.cleanup() }
        func s(_ start: String, _ end: String, _ v: Int, _ device: String) -> String {
            #"{"type":"HKCategoryTypeIdentifierSleepAnalysis","start":"2025-06-0\#(start):00Z","#
                + #""end":"2025-06-0\#(end):00Z","value":\#(v),"device":"\#(device)"}"#
        }
        let samples = [
            s("1T23:00", "2T07:00", 0, "Apple Watch"), s("1T23:30", "2T03:00", 3, "Apple Watch"),
            s("2T03:00", "2T04:00", 4, "Apple Watch"), s("2T04:30", "2T06:30", 5, "Apple Watch"),
            s("1T22:30", "2T07:30", 1, "iPhone"),
        ]
        folder.write(
            #"{"date":"2025-06-02","samples":["# + samples.joined(separator: ",") + "]}",
            to: "raw/2025/06/2025-06-02.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let store = try Store(at: folder.path)
        var o = AggregateOptions()
        o.bucket = .calendar(.hour)
        let type = "HKCategoryTypeIdentifierSleepAnalysis"
        let columns = try store.aggregateColumns(type, options: o)
        let rows = try store.aggregate(type, options: o).rows
        expectSame(columns, rows, "sleep by hour")
        #expect(columns.result.categoryValues == [0, 1, 3, 4, 5])
        #expect(columns.seconds.count == 5 && columns.values.isEmpty)
        for (k, value) in columns.result.categoryValues.enumerated() {
            #expect(columns.seconds[k] == rows.map { $0.seconds[value] ?? 0 }, "value \(value)")
        }
        // 03:00–04:00 is deep sleep (4) alone; nothing is core (3) then.
        let three = try #require(columns.starts.firstIndex(of: 1_748_833_200_000_000))
        #expect(columns.seconds[3][three] == 3600 && columns.seconds[2][three] == 0)
    }
}
