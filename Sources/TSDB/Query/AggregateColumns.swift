/// An aggregate's rows as columns: bucket bounds, then one column per statistic (or per category
/// value), the form an app keeps in memory or draws, as an Arrow table holds a query's answer.
///
/// Made on both cores for long ranges, like the command line's CSV: each piece's rows are packed
/// into fixed-size records on the thread that computed them (``PackedRows``) and laid out in
/// columns, in order, on the calling thread. Collecting ``AggregateRow``s instead (``Store/
/// aggregate(_:from:to:options:)``) holds 128 bytes and a reference per row, every one handed over
/// on the calling thread.
public struct AggregateColumns: Sendable {
    /// What the columns hold (statistics, category values) and what the scan counted; no rows.
    public var result: AggregateResult
    /// Bucket bounds, µs since the epoch (UTC).
    public var starts: [Int64] = []
    public var ends: [Int64] = []
    /// One column per statistic of `result.statistics`, in that order: NaN where the statistic is
    /// undefined (the min of an empty bucket kept by `fill`, the standard deviation of one sample).
    public var values: [[Double]]
    /// Category types without statistics: one column per value of `result.categoryValues`, the
    /// seconds of that value in each bucket (0 for none).
    public var seconds: [[Double]]

    /// Empty columns for `result`'s rows, with room for `rows` of them.
    init(_ result: AggregateResult, rows: Int = 0) {
        self.result = result
        func column<Value>(_ value: Value.Type) -> [Value] {
            var c: [Value] = []
            c.reserveCapacity(rows)
            return c
        }
        (starts, ends) = (column(Int64.self), column(Int64.self))
        values = (0..<result.statistics.count).map { _ in column(Double.self) }
        seconds = (0..<(result.kind == .category ? result.categoryValues.count : 0)).map { _ in column(Double.self) }
    }

    /// The most rows made room for before the first (five years of minute buckets: 2.6 M).
    static let mostRowsReserved = 1 << 22

    /// The number of rows.
    public var count: Int { starts.count }

    /// The column of statistic `s`, if it was asked for.
    public func column(_ s: Statistic) -> [Double]? { result.statistics.firstIndex(of: s).map { values[$0] } }

    /// Row `i` as an ``AggregateRow``.
    public func row(_ i: Int) -> AggregateRow {
        var values = StatisticValues()
        for (k, s) in result.statistics.enumerated() where !self.values[k][i].isNaN { values[s] = self.values[k][i] }
        var seconds = CategorySeconds()
        for (k, value) in result.categoryValues.enumerated() where k < self.seconds.count && self.seconds[k][i] != 0 {
            seconds[value, default: 0] = self.seconds[k][i]
        }
        return AggregateRow(start: starts[i], end: ends[i], values: values, seconds: seconds)
    }

    /// Appends the whole records of ``PackedRows`` in `bytes`, one column at a time.
    mutating func unpack(_ bytes: [UInt8]) {
        let fields = 2 + values.count + seconds.count
        let rows = bytes.count / (8 * fields)
        precondition(rows * 8 * fields == bytes.count, "packed rows cut inside a record")
        bytes.withUnsafeBytes { records in
            Self.unpack(field: 0, of: fields, rows, records, into: &starts)
            Self.unpack(field: 1, of: fields, rows, records, into: &ends)
            for k in values.indices { Self.unpack(field: 2 + k, of: fields, rows, records, into: &values[k]) }
            for k in seconds.indices {
                Self.unpack(field: 2 + values.count + k, of: fields, rows, records, into: &seconds[k])
            }
        }
    }

    private static func unpack<Value: BitwiseCopyable>(
        field: Int, of fields: Int, _ rows: Int, _ records: UnsafeRawBufferPointer, into column: inout [Value]
    ) {
        column.append(addingCapacity: rows) { span in
            span.withUnsafeMutableBufferPointer { room, initialized in
                for r in 0..<rows {
                    room.initializeElement(
                        at: initialized + r,
                        to: records.loadUnaligned(fromByteOffset: (r * fields + field) * 8, as: Value.self))
                }
                initialized += rows
            }
        }
    }
}

/// Rows packed as records of 8-byte fields in memory order, for ``AggregateColumns``: start, end,
/// each statistic's value (NaN when absent), each category value's seconds. Never stored.
struct PackedRows: AggregateRowFormatter {
    /// The ``StatisticValues`` slot of each statistic, four bits each, in column order: read per
    /// row without touching an array (retains of an array both threads share bounce between cores).
    let slots: UInt64
    let statisticCount: Int
    let categoryValues: [Int64]
    let maximumRowLength: Int

    init(_ columns: AggregateColumns) {
        var slots: UInt64 = 0
        for (k, s) in columns.result.statistics.enumerated() { slots |= UInt64(s.index) << (4 * k) }
        self.slots = slots
        statisticCount = columns.values.count
        categoryValues = columns.seconds.isEmpty ? [] : columns.result.categoryValues
        maximumRowLength = 8 * (2 + statisticCount + categoryValues.count)
    }

    func append(_ row: AggregateRow, to bytes: inout [UInt8]) {
        let (slots, statisticCount, present) = (slots, statisticCount, row.values.present)
        RowBytes.append(to: &bytes, capacity: maximumRowLength) { out in
            out.write(raw: UInt64(bitPattern: row.start))
            out.write(raw: UInt64(bitPattern: row.end))
            withUnsafeBytes(of: row.values.stored) { stored in
                for k in 0..<statisticCount {
                    let slot = Int(truncatingIfNeeded: slots >> (4 * k) & 0xF)
                    let value =
                        present & (1 << slot) != 0 ? stored.load(fromByteOffset: slot * 8, as: Double.self) : .nan
                    out.write(raw: value.bitPattern)
                }
            }
        }
        // Only category types have seconds (the array is not touched otherwise: a retain per row).
        guard maximumRowLength > 8 * (2 + statisticCount) else { return }
        RowBytes.append(to: &bytes, capacity: maximumRowLength) { out in
            for value in categoryValues { out.write(raw: (row.seconds[value] ?? 0).bitPattern) }
        }
    }
}

extension Store {
    /// Aggregates `type` over `[from, to)` (nil: the data's span) like
    /// ``aggregate(_:from:to:options:header:row:)``, into columns.
    public func aggregateColumns(
        _ type: String, from: Int64? = nil, to: Int64? = nil, options: AggregateOptions = AggregateOptions()
    ) throws(TSDBError) -> AggregateColumns {
        var columns: AggregateColumns?
        let rows = expectedRows(aggregatePlan(type, from: from, to: to, options: options), options)
        let result = try aggregate(
            type, from: from, to: to, options: options,
            header: { result in
                columns = AggregateColumns(result, rows: rows)
                return PackedRows(columns!)
            }, write: { columns!.unpack($0) })
        // The streaming aggregate's result holds no rows, only what the scan counted.
        var answer = columns ?? AggregateColumns(result)
        answer.result = result
        return answer
    }

    /// About the most rows an aggregate makes, to make room for them at once (growing by doubling
    /// copies each column and faults its pages in twice): one per bucket, and without `fill` at
    /// most one per sample where every sample stays in one bucket. No more than
    /// ``mostRowsReserved``: past that, the columns grow as they fill.
    func expectedRows(_ plan: AggregatePlan, _ options: AggregateOptions) -> Int {
        let (span, overflow) = plan.hi.subtractingReportingOverflow(plan.lo)
        guard span > 0 else { return 0 }
        let buckets =
            overflow
            ? AggregateColumns.mostRowsReserved
            : options.bucket.shortestSeconds.map { Int(span / ($0 * 1_000_000)) + 1 } ?? 1
        guard !options.fill && !plan.intervals else { return min(buckets, AggregateColumns.mostRowsReserved) }
        let samples = segmentEntries.lazy
            .filter { $0.type == plan.type && $0.lastStart >= plan.lo && $0.firstStart < plan.hi }
            .reduce(0) { $0 + Int($1.sampleCount) }
        return min(buckets, samples, AggregateColumns.mostRowsReserved)
    }
}
