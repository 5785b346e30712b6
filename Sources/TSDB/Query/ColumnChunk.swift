/// Rows laid out as ``AggregateColumns`` lays them out, in room of its own: a piece's rows, made on
/// the thread that computed them, then copied column by column (one copy of memory each) on the
/// calling thread. Packing each row into a record and gathering the records' fields back into
/// columns took a quarter of the CPU time of five years of minute buckets (perf).
///
/// Used by one thread at a time: the one filling it, then, handed over through ``InOrderPieces``'
/// lock, the calling thread copying it out. Reused for later pieces (fresh memory faults in).
final class ColumnChunk: @unchecked Sendable {
    /// The room and the rows. Lent out to a sweep while it fills them (``lend(_:)``).
    private var rows: ColumnRows

    /// Room for `capacity` rows of `columns`' statistics and category values.
    init(for columns: AggregateColumns, capacity: Int) {
        let categoryValues = columns.seconds.isEmpty ? [] : columns.result.categoryValues
        rows = ColumnRows(statistics: columns.result.statistics, categoryValues: categoryValues, capacity: capacity)
    }

    private init(layout other: ColumnRows, capacity: Int) { rows = ColumnRows(layout: other, capacity: capacity) }

    deinit { rows.words.deallocate() }

    /// The same columns, empty, with room for `capacity` rows.
    func emptyCopy(capacity: Int) -> ColumnChunk { ColumnChunk(layout: rows, capacity: capacity) }

    var count: Int { rows.count }
    var capacity: Int { rows.capacity }
    var isFull: Bool { rows.count == rows.capacity }

    func removeAll() { rows.count = 0 }

    /// Adds `row` (NaN for an absent statistic, 0 seconds for an absent category value).
    func append(_ row: AggregateRow) { rows.append(row) }

    /// Lends the rows to `body` to add to: as a plain value, a row costs no reference counting
    /// (retains and releases of a chunk held by a sweep were a third of the work). What `body`
    /// leaves (the room it grew to, its rows) is taken back, whether it throws or not.
    func lend<Failure: Error>(_ body: (inout ColumnRows) throws(Failure) -> Void) throws(Failure) {
        var lent = rows
        defer { rows = lent }
        try body(&lent)
    }

    /// Appends field `k` of every row to `column`.
    func copy<Value: BitwiseCopyable>(field k: Int, into column: inout [Value]) {
        precondition(MemoryLayout<Value>.stride == 8 && k < rows.fields)
        (rows.words + k * rows.capacity).withMemoryRebound(to: Value.self, capacity: rows.count) {
            column.append(contentsOf: UnsafeBufferPointer(start: $0, count: rows.count))
        }
    }
}

/// A ``ColumnChunk``'s room and rows: `fields` columns of `capacity` 8-byte words each, field `k`
/// of row `r` at `k * capacity + r` (start, end, each statistic's value or NaN, each category
/// value's seconds). Whoever holds it owns `words`: a copy is only lent (``ColumnChunk/lend(_:)``).
struct ColumnRows {
    private(set) var words: UnsafeMutablePointer<UInt64>
    private(set) var capacity: Int
    var count = 0
    /// The ``Statistic/index`` of each statistic, four bits each, in column order.
    private let statistics: UInt64
    private let statisticCount: Int
    private let categoryValues: [Int64]
    var fields: Int { 2 + statisticCount + categoryValues.count }

    init(statistics: [Statistic], categoryValues: [Int64], capacity: Int) {
        var indices: UInt64 = 0
        for (k, s) in statistics.enumerated() { indices |= UInt64(s.index) << (4 * k) }
        (self.statistics, statisticCount, self.categoryValues) = (indices, statistics.count, categoryValues)
        self.capacity = max(capacity, 1)
        words = .allocate(capacity: (2 + statisticCount + categoryValues.count) * self.capacity)
    }

    /// Empty room for `capacity` rows laid out as `other`'s.
    init(layout other: ColumnRows, capacity: Int) {
        (statistics, statisticCount, categoryValues) = (other.statistics, other.statisticCount, other.categoryValues)
        self.capacity = max(capacity, 1)
        words = .allocate(capacity: other.fields * self.capacity)
    }

    /// Adds `row` (NaN for an absent statistic, 0 seconds for an absent category value).
    @inline(__always)
    mutating func append(_ row: AggregateRow) {
        let r = next()
        words[r] = UInt64(bitPattern: row.start)
        words[capacity + r] = UInt64(bitPattern: row.end)
        let present = row.values.present
        for k in 0..<statisticCount {
            let slot = statisticIndex(k)
            let value = present & (1 << slot) != 0 ? row.values.value(slot: slot) : .nan
            words[(2 + k) * capacity + r] = value.bitPattern
        }
        if !categoryValues.isEmpty { appendSeconds(row.seconds, at: r) }
    }

    /// Adds the row of `bucket` straight from the statistics in `acc`, as ``AggregateSweep`` would
    /// make it for `plan` (whose statistics these columns hold), without making it.
    @inline(__always)
    mutating func append(
        _ bucket: Bucket, _ acc: inout Accumulator, _ plan: AggregatePlan, cumulativeSum: Double?,
        seconds: CategorySeconds
    ) {
        let r = next()
        words[r] = UInt64(bitPattern: bucket.start)
        words[capacity + r] = UInt64(bitPattern: bucket.end)
        for k in 0..<statisticCount {
            let s = Statistic.withIndex(statisticIndex(k))
            let value = acc.value(s, cumulativeSum: cumulativeSum, style: plan.style) ?? .nan
            words[(2 + k) * capacity + r] = value.bitPattern
        }
        if !categoryValues.isEmpty { appendSeconds(seconds, at: r) }
    }

    @inline(__always)
    private func statisticIndex(_ k: Int) -> Int { Int(truncatingIfNeeded: statistics >> (4 * k) & 0xF) }

    private func appendSeconds(_ seconds: CategorySeconds, at r: Int) {
        for (k, value) in categoryValues.enumerated() {
            words[(2 + statisticCount + k) * capacity + r] = (seconds[value] ?? 0).bitPattern
        }
    }

    /// The index of a new row, the room grown first when full.
    @inline(__always)
    private mutating func next() -> Int {
        if count == capacity { grow() }
        count += 1
        return count - 1
    }

    /// Twice the room, the rows kept (a piece never makes more rows than its buckets, so only
    /// the calling thread's chunk, and a bucket without a nominal length, grow).
    private mutating func grow() {
        let larger = UnsafeMutablePointer<UInt64>.allocate(capacity: fields * capacity * 2)
        for k in 0..<fields { (larger + k * capacity * 2).initialize(from: words + k * capacity, count: count) }
        words.deallocate()
        (words, capacity) = (larger, capacity * 2)
    }
}

extension Statistic {
    /// The statistic whose ``index`` is `i` (0...11).
    @inline(__always)
    static func withIndex(_ i: Int) -> Statistic {
        switch i {
        case 0: .count
        case 1: .sum
        case 2: .min
        case 3: .max
        case 4: .mean
        case 5: .first
        case 6: .last
        case 7: .stddev
        case 8: .p50
        case 9: .p90
        case 10: .p95
        default: .p99
        }
    }
}
