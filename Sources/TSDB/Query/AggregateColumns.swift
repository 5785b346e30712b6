/// An aggregate's rows as columns: bucket bounds, then one column per statistic (or per category
/// value), the form an app keeps in memory or draws, as an Arrow table holds a query's answer.
///
/// Made on both cores for long ranges, like the command line's CSV: each piece's rows are laid
/// out in columns of their own on the thread that computed them (``ColumnChunk``) and copied into
/// these, in order, on the calling thread. Collecting ``AggregateRow``s instead (``Store/
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

    /// No columns yet: room to be filled by ``Store/aggregateColumns(_:from:to:options:into:)``.
    public init() {
        self.init(AggregateResult(type: "", kind: .discrete, statistics: [], categoryValues: [], rows: []))
    }

    /// Empty columns for `result`'s rows, with room for `rows` of them.
    init(_ result: AggregateResult, rows: Int = 0) {
        self.result = result
        values = []
        seconds = []
        prepare(for: result, rows: rows)
    }

    /// Empties the columns and lays them out for `result`'s rows, keeping the room they had (and
    /// making room for `rows`): writing rows where rows were costs no page faults.
    mutating func prepare(for result: AggregateResult, rows: Int) {
        self.result = result
        func reuse<Value: BitwiseCopyable>(_ c: inout [Value]) {
            c.removeAll(keepingCapacity: true)
            guard c.capacity < rows else { return }
            c.reserveCapacity(rows)
            HugePages.advise(&c)
        }
        func layout(_ columns: inout [[Double]], count: Int) {
            if columns.count > count { columns.removeLast(columns.count - count) }
            while columns.count < count { columns.append([]) }
            for k in columns.indices { reuse(&columns[k]) }
        }
        reuse(&starts)
        reuse(&ends)
        layout(&values, count: result.statistics.count)
        layout(&seconds, count: result.kind == .category ? result.categoryValues.count : 0)
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

    /// Appends the rows of `chunk`, one column at a time.
    mutating func append(_ chunk: ColumnChunk) {
        chunk.copy(field: 0, into: &starts)
        chunk.copy(field: 1, into: &ends)
        for k in values.indices { chunk.copy(field: 2 + k, into: &values[k]) }
        for k in seconds.indices { chunk.copy(field: 2 + values.count + k, into: &seconds[k]) }
    }
}

extension Store {
    /// Aggregates `type` over `[from, to)` (nil: the data's span) like
    /// ``aggregate(_:from:to:options:header:row:)``, into columns.
    public func aggregateColumns(
        _ type: String, from: Int64? = nil, to: Int64? = nil, options: AggregateOptions = AggregateOptions()
    ) throws(TSDBError) -> AggregateColumns {
        var columns = AggregateColumns()
        try aggregateColumns(type, from: from, to: to, options: options, into: &columns)
        return columns
    }

    /// Like ``aggregateColumns(_:from:to:options:)``, into `columns`, replacing their rows and
    /// keeping their room: for an app asking again and again (a chart redrawn as it scrolls).
    /// Memory fresh from the kernel faults in a page at a time when first written (a quarter of the
    /// CPU time of a year of 15-minute buckets here, perf); rows written over earlier ones don't.
    /// After an error the columns hold no complete answer.
    public func aggregateColumns(
        _ type: String, from: Int64? = nil, to: Int64? = nil, options: AggregateOptions = AggregateOptions(),
        into columns: inout AggregateColumns
    ) throws(TSDBError) {
        // The calling thread's own rows, copied into the columns whenever it fills, and before
        // any piece's held rows go in.
        var streamed: ColumnChunk?
        func flush() {
            guard let chunk = streamed, chunk.count > 0 else { return }
            columns.append(chunk)
            chunk.removeAll()
        }
        let result = try aggregate(
            type, from: from, to: to, options: options,
            header: { result, plan in
                columns.prepare(for: result, rows: expectedRows(plan, options))
                streamed = chunk(for: columns, capacity: Self.streamedChunkRows)
            },
            row: { row in
                if streamed!.isFull { flush() }
                streamed!.append(row)
            },
            holding: { .columns(streamed!) },
            held: { output in
                guard case .columns(let chunk) = output else { return }
                flush()
                columns.append(chunk)
            })
        flush()
        if let streamed { keep(streamed) }
        // The header laid the columns out (an aggregate that returns has sent it); the streaming
        // aggregate's result holds no rows, only what the scan counted.
        columns.result = result
    }

    /// The rows the calling thread makes before they are copied into the columns.
    static let streamedChunkRows = 4096

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
