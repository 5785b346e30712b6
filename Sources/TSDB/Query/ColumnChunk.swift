/// Rows laid out as ``AggregateColumns`` lays them out, in room of its own: a piece's rows, made on
/// the thread that computed them, then copied column by column (one copy of memory each) on the
/// calling thread. Packing each row into a record and gathering the records' fields back into
/// columns took a quarter of the CPU time of five years of minute buckets (perf).
///
/// Used by one thread at a time: the one filling it, then, handed over through ``InOrderPieces``'
/// lock, the calling thread copying it out. Reused for later pieces and, through the store's
/// ``Store/chunkPool``, later aggregates (fresh memory faults in a page at a time).
final class ColumnChunk: @unchecked Sendable {
    /// The room and the rows. Lent out to a sweep while it fills them (``lend(_:)``).
    private var rows: ColumnRows

    /// Room for `capacity` rows of `columns`' statistics and category values.
    init(for columns: AggregateColumns, capacity: Int) {
        rows = ColumnRows(
            statistics: columns.result.statistics, categoryValues: Self.categoryValues(of: columns), capacity: capacity)
    }

    private static func categoryValues(of columns: AggregateColumns) -> [Int64] {
        columns.seconds.isEmpty ? [] : columns.result.categoryValues
    }

    private init(layout other: ColumnRows, capacity: Int) { rows = ColumnRows(layout: other, capacity: capacity) }

    /// Room for `capacity` rows of `statistics`, with no category values.
    init(statistics: [Statistic], capacity: Int) {
        rows = ColumnRows(statistics: statistics, categoryValues: [], capacity: capacity)
    }

    deinit { rows.words.deallocate() }

    /// The same columns, empty, with room for `capacity` rows.
    func emptyCopy(capacity: Int) -> ColumnChunk { ColumnChunk(layout: rows, capacity: capacity) }

    /// Empties the chunk and lays it out as `shape`, with room for at least `capacity` rows, in the
    /// memory it has when that is enough.
    func reshape(like shape: ColumnChunk, capacity: Int) { rows.reshape(like: shape.rows, capacity: capacity) }

    /// Empties the chunk and lays it out for `columns`' rows, as ``reshape(like:capacity:)``.
    func reshape(for columns: AggregateColumns, capacity: Int) {
        rows.reshape(
            statistics: columns.result.statistics, categoryValues: Self.categoryValues(of: columns), capacity: capacity)
    }

    /// The chunk's memory, in 8-byte words.
    var words: Int { rows.room }

    /// The largest chunk a store keeps between aggregates (1 MB: five years of 15-minute buckets cut
    /// in 16 pieces fill 0.5 MB chunks; longer answers' pieces fault in few pages per row).
    static let mostWordsKept = 1 << 17

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

    /// Lends the rows to `body` as columns of statistics (the chunk has no category values).
    func withColumns<R>(_ body: (AggregateRowColumns) -> R) -> R {
        precondition(rows.fields == 2 + rows.statisticCount, "rows with category values")
        return body(AggregateRowColumns(rows))
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
    /// The words allocated at `words` (at least `fields * capacity`).
    private(set) var room: Int
    var count = 0
    /// The ``Statistic/index`` of each statistic, four bits each, in column order.
    private(set) var statistics: UInt64
    private(set) var statisticCount: Int
    private var categoryValues: [Int64]
    var fields: Int { 2 + statisticCount + categoryValues.count }

    init(statistics: [Statistic], categoryValues: [Int64], capacity: Int) {
        (self.statistics, statisticCount, self.categoryValues) = (
            Self.indices(statistics), statistics.count, categoryValues
        )
        self.capacity = max(capacity, 1)
        room = (2 + statisticCount + categoryValues.count) * self.capacity
        words = .allocate(capacity: room)
    }

    private static func indices(_ statistics: [Statistic]) -> UInt64 {
        var indices: UInt64 = 0
        for (k, s) in statistics.enumerated() { indices |= UInt64(s.index) << (4 * k) }
        return indices
    }

    /// Empty room for `capacity` rows laid out as `other`'s.
    init(layout other: ColumnRows, capacity: Int) {
        (statistics, statisticCount, categoryValues) = (other.statistics, other.statisticCount, other.categoryValues)
        self.capacity = max(capacity, 1)
        room = other.fields * self.capacity
        words = .allocate(capacity: room)
    }

    /// No rows, laid out as `other`'s, with room for at least `capacity` of them: in the words
    /// already allocated when they are enough (all of them: maybe more rows than asked for).
    mutating func reshape(like other: ColumnRows, capacity: Int) {
        (statistics, statisticCount, categoryValues) = (other.statistics, other.statisticCount, other.categoryValues)
        makeRoom(capacity)
    }

    /// No rows, laid out for `statistics` and `categoryValues`, as ``reshape(like:capacity:)``.
    mutating func reshape(statistics: [Statistic], categoryValues: [Int64], capacity: Int) {
        (self.statistics, statisticCount, self.categoryValues) = (
            Self.indices(statistics), statistics.count, categoryValues
        )
        makeRoom(capacity)
    }

    private mutating func makeRoom(_ capacity: Int) {
        let needed = fields * max(capacity, 1)
        if needed > room {
            words.deallocate()
            words = .allocate(capacity: needed)
            room = needed
        }
        (self.capacity, count) = (room / fields, 0)
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

    /// Adds the row of `bucket` when the columns hold only count, sum, min, max and mean, as
    /// ``BasicTotals/values(_:cumulativeSum:)`` gives them without an interval sum, with no
    /// ``StatisticValues`` made: copying one out per row was a fifth of a year of minute buckets.
    /// Field `k` of row `r` lies at `k * capacity + r`, inside `room` words (`r < capacity`, `k <
    /// fields`), so its offset cannot overflow: it is found without traps.
    @inline(__always)
    mutating func appendBasic(_ bucket: Bucket, _ totals: BasicTotals) {
        let r = next()
        words[r] = UInt64(bitPattern: bucket.start)
        words[capacity &+ r] = UInt64(bitPattern: bucket.end)
        let hasValues = totals.valueCount > 0
        for k in 0..<statisticCount {
            let value: Double
            switch statisticIndex(k) {
            case 0: value = Double(totals.count)
            case 1: value = hasValues ? totals.sum : .nan
            case 2: value = hasValues ? totals.minimum : .nan
            case 3: value = hasValues ? totals.maximum : .nan
            default: value = hasValues ? totals.sum / Double(totals.valueCount) : .nan
            }
            words[(2 &+ k) &* capacity &+ r] = value.bitPattern
        }
        for k in 0..<categoryValues.count { words[(2 &+ statisticCount &+ k) &* capacity &+ r] = 0 }
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
        (words, capacity, room) = (larger, capacity * 2, fields * capacity * 2)
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

extension Store {
    /// An empty chunk laid out as `shape` with room for `capacity` rows, from ``chunkPool`` if it
    /// has one.
    func chunk(like shape: ColumnChunk, capacity: Int) -> ColumnChunk {
        guard let chunk = chunkPool.take() else { return shape.emptyCopy(capacity: capacity) }
        chunk.reshape(like: shape, capacity: capacity)
        return chunk
    }

    /// An empty chunk for `columns`' rows with room for `capacity`, from ``chunkPool`` if it has one.
    func chunk(for columns: AggregateColumns, capacity: Int) -> ColumnChunk {
        guard let chunk = chunkPool.take() else { return ColumnChunk(for: columns, capacity: capacity) }
        chunk.reshape(for: columns, capacity: capacity)
        return chunk
    }

    /// Gives `chunk`, no longer used, to ``chunkPool`` unless it is too large to keep.
    func keep(_ chunk: ColumnChunk) {
        if chunk.words <= ColumnChunk.mostWordsKept { chunkPool.give(chunk) }
    }
}

/// Rows of statistics laid out as a ``ColumnChunk`` holds them, lent to an
/// ``AggregateRowFormatter`` for one call (``AggregateRowFormatter/append(_:to:)-(AggregateRowColumns,_)``):
/// the memory is the chunk's, so a view is only valid during that call.
///
/// Public, with inlinable readers, so that the command line's formatter reads each value with one
/// load: this compiler inlines no `package` function across modules.
public struct AggregateRowColumns {
    public let count: Int
    /// How many value columns each row has (one per statistic).
    public let statisticCount: Int
    @usableFromInline let words: UnsafePointer<UInt64>
    @usableFromInline let capacity: Int
    /// The ``Statistic/index`` of each column, four bits each.
    private let statistics: UInt64

    init(_ rows: borrowing ColumnRows) {
        (count, statisticCount, capacity) = (rows.count, rows.statisticCount, rows.capacity)
        words = UnsafePointer(rows.words)
        statistics = rows.statistics
    }

    /// Row `r`'s bucket start, µs since the epoch.
    @inlinable public func start(_ r: Int) -> Int64 {
        precondition(r >= 0 && r < count)
        return Int64(bitPattern: words[r])
    }

    /// Row `r`'s bucket end, µs since the epoch.
    @inlinable public func end(_ r: Int) -> Int64 {
        precondition(r >= 0 && r < count)
        return Int64(bitPattern: words[capacity &+ r])
    }

    /// Row `r`'s value of statistic column `k`: NaN where the statistic is undefined (the minimum
    /// of no samples), where ``AggregateRow/values`` has none.
    @inlinable public func value(_ k: Int, _ r: Int) -> Double {
        precondition(r >= 0 && r < count && k >= 0 && k < statisticCount)
        // Within the chunk's words (checked above), so no overflow.
        return Double(bitPattern: words[(2 &+ k) &* capacity &+ r])
    }

    /// The statistic of column `k`.
    public func statistic(_ k: Int) -> Statistic {
        precondition(k >= 0 && k < statisticCount)
        return Statistic.withIndex(Int(truncatingIfNeeded: statistics >> (4 * k) & 0xF))
    }

    /// Row `r` as an ``AggregateRow``.
    public func row(_ r: Int) -> AggregateRow {
        var values = StatisticValues()
        for k in 0..<statisticCount {
            let v = value(k, r)
            if !v.isNaN { values[statistic(k)] = v }
        }
        return AggregateRow(start: start(r), end: end(r), values: values, seconds: CategorySeconds())
    }
}
