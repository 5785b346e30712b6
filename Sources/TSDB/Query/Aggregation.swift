/// A statistic `tsdb query --stats` can compute.
public enum Statistic: String, Sendable, CaseIterable {
    case count, sum, min, max, mean, first, last, stddev, p50, p90, p95, p99

    /// The quantile of a percentile statistic.
    var quantile: Double? {
        switch self {
        case .p50: 0.5
        case .p90: 0.9
        case .p95: 0.95
        case .p99: 0.99
        default: nil
        }
    }

    public static func parseList(_ text: String) throws(TSDBError) -> [Statistic] {
        var out: [Statistic] = []
        for part in text.split(separator: ",") {
            guard let s = Statistic(rawValue: String(part).trimmingSpaces.lowercased()) else {
                throw TSDBError.invalidInput(
                    "unknown statistic \"\(part)\"; choose from " + allCases.map(\.rawValue).joined(separator: ","))
            }
            if !out.contains(s) { out.append(s) }
        }
        guard !out.isEmpty else { throw TSDBError.invalidInput("--stats needs at least one statistic") }
        return out
    }
}

/// Settings for ``Store/aggregate(_:from:to:options:)``.
public struct AggregateOptions: Sendable {
    public var bucket: BucketSpec = .none
    public var zone: TimeZoneRules = .utc
    /// First day of calendar weeks, ISO numbering: 1 = Monday … 7 = Sunday.
    public var weekStart = 1
    /// Statistics to compute; nil means the type's HealthKit-style default
    /// (cumulative: sum; discrete: count, min, max, mean).
    public var statistics: [Statistic]?
    /// `true` (default): an interval sample's sum (or a category's time) is split across the
    /// buckets it overlaps in proportion to time; `false`: it goes wholly to the bucket of its start.
    public var prorate = true
    /// Keep only samples whose source or device contains this text (case-insensitive).
    public var source: String?
    /// For cumulative and category types, count each stretch of time once, taking it from the
    /// highest-ranked sample (see ``priority``); `false` adds everything.
    public var deduplicate = true
    /// Source priority, highest first. Every (source, device) pair gets its own rank: first by
    /// the first entry its source or device contains (case-insensitive; none matched ranks after
    /// all entries), then by source and device text, bytewise.
    public var priority = ["Watch", "iPhone"]
    /// Emit buckets that have no data.
    public var fill = false
    /// Threads a long aggregate may run on (default: one per core); 1 keeps it on the caller's, and
    /// more let it use a second thread beside the caller's (two at most: ``InOrderPieces``).
    public var threads = Cores.online

    public init() {}
}

/// A row's statistics by name, in one slot per ``Statistic`` (no hashing or allocation per row:
/// a year of hourly buckets is 8,760 rows).
public struct StatisticValues: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    // Inlinable: the command line reads every cell of every row through the subscript.
    @usableFromInline var present: UInt16 = 0
    /// One per ``Statistic``, by its index. A tuple, not a SIMD vector: storing one lane of a vector
    /// went through the stack and reloaded the whole vector (the hottest instructions of an hourly
    /// aggregate's row close in perf; the whole query's change was within this machine's noise).
    @usableFromInline var stored:
        (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    public init() {}

    public init(dictionaryLiteral elements: (Statistic, Double)...) {
        for (s, v) in elements { self[s] = v }
    }

    @inlinable public subscript(_ s: Statistic) -> Double? {
        get {
            guard present & (1 << s.index) != 0 else { return nil }
            return value(slot: s.index)
        }
        set {
            guard let newValue else {
                present &= ~(1 << s.index)
                return
            }
            present |= 1 << s.index
            // Each element by name, not at an offset in memory: the tuple can then stay in
            // registers while a row's values are set. Stored at an offset, it was copied into the
            // row right after, 16 bytes read over two 8-byte stores just made, which the CPU
            // cannot forward (a third of a bucket's close on five years of minutes in perf).
            switch s {
            case .count: stored.0 = newValue
            case .sum: stored.1 = newValue
            case .min: stored.2 = newValue
            case .max: stored.3 = newValue
            case .mean: stored.4 = newValue
            case .first: stored.5 = newValue
            case .last: stored.6 = newValue
            case .stddev: stored.7 = newValue
            case .p50: stored.8 = newValue
            case .p90: stored.9 = newValue
            case .p95: stored.10 = newValue
            case .p99: stored.11 = newValue
            }
        }
    }

    /// The value stored in slot `index` (a ``Statistic``'s index), present or not. Each element by
    /// name: a row just made has its values in memory from 8-byte stores, and copying the tuple
    /// out to load at an offset reads 16 bytes over two of them, which the CPU cannot forward
    /// (half the time of laying five years of minute rows out in columns, in perf).
    @inlinable @inline(__always)
    func value(slot index: Int) -> Double {
        switch index {
        case 0: stored.0
        case 1: stored.1
        case 2: stored.2
        case 3: stored.3
        case 4: stored.4
        case 5: stored.5
        case 6: stored.6
        case 7: stored.7
        case 8: stored.8
        case 9: stored.9
        case 10: stored.10
        default: stored.11
        }
    }

    /// The value of the first statistic present, in ``Statistic`` order.
    public var first: Double? { Statistic.allCases.lazy.compactMap { self[$0] }.first }

    public static func == (a: StatisticValues, b: StatisticValues) -> Bool {
        Statistic.allCases.allSatisfy { a[$0] == b[$0] }
    }
}

extension Statistic {
    @inlinable var index: Int {
        switch self {
        case .count: 0
        case .sum: 1
        case .min: 2
        case .max: 3
        case .mean: 4
        case .first: 5
        case .last: 6
        case .stddev: 7
        case .p50: 8
        case .p90: 9
        case .p95: 10
        case .p99: 11
        }
    }
}

/// Turns aggregate rows into output bytes (CSV, NDJSON) for
/// ``Store/aggregate(_:from:to:options:header:write:)``. A long aggregate formats its pieces with
/// copies, each reused for later pieces in any order: what a formatter keeps may only remember
/// (caches), never change a row's text.
public protocol AggregateRowFormatter: Sendable {
    mutating func append(_ row: AggregateRow, to bytes: inout [UInt8])
    /// Appends `rows` as ``append(_:to:)`` would, one after another. A long aggregate of statistics
    /// (no category values) hands its pieces' rows over this way, as its sweep lays them out, with
    /// no ``AggregateRow`` made for each.
    mutating func append(_ rows: AggregateRowColumns, to bytes: inout [UInt8])
    /// About the most bytes a row takes (to reserve room for many rows at once).
    var maximumRowLength: Int { get }
}

extension AggregateRowFormatter {
    public var maximumRowLength: Int { 128 }

    public mutating func append(_ rows: AggregateRowColumns, to bytes: inout [UInt8]) {
        for r in 0..<rows.count { append(rows.row(r), to: &bytes) }
    }
}

/// One bucket of an aggregate.
public struct AggregateRow: Sendable, Equatable {
    /// Bucket bounds, µs since the epoch (UTC).
    public var start: Int64
    public var end: Int64
    /// Statistics by name; absent where undefined (the min of no samples, stddev of one).
    public var values: StatisticValues
    /// Category types: seconds per category value.
    public var seconds: CategorySeconds
}

/// Seconds per category value in one bucket (sleep stages: a handful), in the order first credited.
///
/// Not a dictionary: a row type holding one has its dictionary's storage instantiated at run time,
/// with a search through every conformance in the program for Int64's Hashable, the first time any
/// array of rows is released (~70 µs of a heart-rate query process in a perf profile).
public struct CategorySeconds: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var entries: [(value: Int64, seconds: Double)] = []

    public init() {}

    public init(dictionaryLiteral elements: (Int64, Double)...) {
        for (value, seconds) in elements { self[value, default: 0] += seconds }
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The seconds of every value, in the order first credited.
    public var values: [Double] { entries.map(\.seconds) }

    /// The same figures as a dictionary.
    public var byValue: [Int64: Double] {
        Dictionary(uniqueKeysWithValues: entries.map { ($0.value, $0.seconds) })
    }

    public subscript(value: Int64) -> Double? { entries.first { $0.value == value }?.seconds }

    public subscript(value: Int64, default fallback: Double) -> Double {
        get { self[value] ?? fallback }
        set {
            if let i = entries.firstIndex(where: { $0.value == value }) {
                entries[i].seconds = newValue
            } else {
                entries.append((value, newValue))
            }
        }
    }

    /// Adds `other`'s seconds value by value, in its order.
    mutating func add(_ other: CategorySeconds) {
        for (value, seconds) in other.entries { self[value, default: 0] += seconds }
    }

    /// Equal when they hold the same values with the same seconds, in any order.
    public static func == (a: CategorySeconds, b: CategorySeconds) -> Bool {
        a.entries.count == b.entries.count && a.entries.allSatisfy { b[$0.value] == $0.seconds }
    }
}

public struct AggregateResult: Sendable {
    public var type: String
    public var kind: TypeCatalog.Kind
    public var statistics: [Statistic]
    /// Category values present in the range, ascending (category types only).
    public var categoryValues: [Int64]
    /// The rows (empty from the streaming ``Store/aggregate(_:from:to:options:header:row:)``).
    public var rows: [AggregateRow]
    /// Blocks answered from their stored summaries, and blocks decoded (to show the fast path works).
    public var blocksFromSummaries = 0
    /// Blocks answered from their slot summaries (segment-v3.md §6.1): they straddle a bucket boundary.
    public var blocksFromSlots = 0
    /// Blocks across one bucket edge added up either side of it from their start and value columns
    /// alone (``SegmentReader/sideTotals(block:edge:scratch:)``), unpacking nothing into memory.
    public var blocksSplit = 0
    /// Blocks across several bucket edges added up a bucket at a time from their start and value
    /// columns alone (``SegmentReader/addUpByBucket(block:scratch:bucketEnd:add:)``).
    public var blocksAddedUp = 0
    public var blocksDecoded = 0
    /// The pieces the range was cut into, scanned side by side by the calling thread and a second
    /// one (1: scanned whole on the calling thread).
    public var pieces = 1

    /// The same result with only its first `n` rows.
    public func limited(to n: Int) -> AggregateResult {
        var copy = self
        copy.rows = Array(rows.prefix(n))
        return copy
    }
}

/// What an aggregate needs, decided once before scanning (Prometheus' querier splits the same way).
struct AggregatePlan {
    let type: String
    let kind: TypeCatalog.Kind
    let style: AggregationStyle
    let statistics: [Statistic]
    var lo: Int64, hi: Int64
    /// Per-sample statistics are computed (not only interval sums or category time).
    let pointStatistics: Bool
    /// Interval samples are collected: sums of cumulative types, time of category types.
    let intervals: Bool
    let needsValues: Bool
    let needsOrder: Bool
    /// The standard deviation is asked for: merges keep Σ(v − mean)², which nothing else needs.
    let needsSpread: Bool
    let filtered: Bool

    /// The widest range aggregated, a day beyond four-digit years (all a day file can hold): zone
    /// arithmetic on a bucket near `Int64.min` or `.max` would overflow.
    static let earliest: Int64 = (-62_167_219_200 - 86_400) * 1_000_000
    static let latest: Int64 = (253_402_300_800 + 86_400) * 1_000_000

    /// Whole blocks may be answered from their stored summaries.
    var summariesServe: Bool {
        !filtered && !needsValues && !needsOrder && style != .discreteEquivalentContinuousLevel
    }

    static func defaultStatistics(_ kind: TypeCatalog.Kind) -> [Statistic] {
        switch kind {
        case .cumulative: [.sum]
        case .category: []
        case .workout: [.count]
        case .discrete: [.count, .min, .max, .mean]
        }
    }
}

extension Store {
    /// Aggregates `type` over `[from, to)` (nil: the data's span) into buckets; see
    /// ``aggregate(_:from:to:options:header:row:)``. Collects the rows.
    public func aggregate(
        _ type: String, from: Int64? = nil, to: Int64? = nil,
        options: AggregateOptions = AggregateOptions()
    ) throws(TSDBError) -> AggregateResult {
        var rows: [AggregateRow] = []
        var result = try aggregate(
            type, from: from, to: to, options: options, header: { _ in }, row: { rows.append($0) })
        result.rows = rows
        return result
    }

    /// Aggregates `type` over `[from, to)` (nil: the data's span), handing the buckets' rows to
    /// `row` in order, on the calling thread. `header` is called first with what the rows will
    /// hold. Rows go out as their buckets complete, so memory does not grow with the number of
    /// rows; a long range is scanned on two cores (`ParallelAggregation.swift`), and the rows of
    /// its later part, 100,000 at most, come together once the earlier part's are out.
    ///
    /// `count` counts samples; the other per-sample statistics (min, max, mean, first, last,
    /// stddev, percentiles) take the numeric values of the samples whose start lies in a bucket.
    /// `sum` of a cumulative type is split across buckets by time overlap (unless `prorate` is
    /// off), counting each stretch of time once (``AggregateOptions/deduplicate``). Category types
    /// give the time per category value, split and de-duplicated the same way. A block lying
    /// wholly inside one bucket is answered from its stored summary when no statistic needs the
    /// individual values; a block across bucket boundaries on the 15-minute grid (any bucket of
    /// a quarter hour or more, in any zone in use) from its slot summaries.
    public func aggregate(
        _ type: String, from: Int64? = nil, to: Int64? = nil, options: AggregateOptions,
        header: (AggregateResult) -> Void, row: (AggregateRow) -> Void
    ) throws(TSDBError) -> AggregateResult {
        try aggregate(
            type, from: from, to: to, options: options, header: { result, _ in header(result) }, row: row,
            holding: { .rows }, held: { _ in })
    }

    /// Aggregates like ``aggregate(_:from:to:options:header:row:)``, handing out the rows as bytes
    /// in order: `header` returns the formatter that makes them, and the rows of a long aggregate
    /// are formatted on the thread that computed them (each with its own copy). `write` gets the
    /// bytes in chunks; memory stays bounded whatever the number of rows.
    public func aggregate(
        _ type: String, from: Int64? = nil, to: Int64? = nil, options: AggregateOptions,
        header: (AggregateResult) -> any AggregateRowFormatter, write: ([UInt8]) -> Void
    ) throws(TSDBError) -> AggregateResult {
        try withoutActuallyEscaping(write) { (write) throws(TSDBError) -> AggregateResult in
            var sink: (any RowBytesSink)?
            // Pieces of statistics are formatted from the columns their sweeps lay out.
            var statistics: [Statistic]?
            let result = try aggregate(
                type, from: from, to: to, options: options,
                header: { result, _ in
                    sink = header(result).sink(write: write)
                    if result.kind != .category { statistics = result.statistics }
                },
                row: { row in sink!.append(row) },
                // Asked only of an aggregate cut in pieces: one in a single piece lays out nothing.
                holding: {
                    .bytes(sink!.copyOfFormatter, columns: statistics.map { ColumnChunk(statistics: $0, capacity: 1) })
                },
                held: { output in
                    guard case .bytes(let bytes) = output else { return }
                    sink!.flush()
                    write(bytes)
                })
            sink?.flush()
            return result
        }
    }

    /// The aggregate behind the public forms: `header` also gets the plan (the range resolved);
    /// `holding` (asked once the header is out) says how a second thread keeps its rows until
    /// they go out; `held` takes what it kept (formatted bytes or columns), in order, and rows
    /// kept as rows go to `row`.
    func aggregate(
        _ type: String, from: Int64?, to: Int64?, options: AggregateOptions,
        header: (AggregateResult, AggregatePlan) -> Void, row: (AggregateRow) -> Void,
        holding: () -> PieceHolding, held: (AggregatePieces.Held.Output) -> Void
    ) throws(TSDBError) -> AggregateResult {
        try options.bucket.validate()
        let plan = aggregatePlan(type, from: from, to: to, options: options)
        var result = AggregateResult(
            type: type, kind: plan.kind, statistics: plan.statistics, categoryValues: [], rows: [])
        guard plan.hi > plan.lo else {
            header(result, plan)
            return result
        }
        let walker = BucketWalker(
            spec: options.bucket, zone: options.zone, weekStart: options.weekStart, from: plan.lo, to: plan.hi)
        if plan.intervals || plan.pointStatistics,
            let pieces = parallelPieces(plan, options: options, walker: walker)
        {
            if plan.intervals && plan.kind == .category {
                result.categoryValues = try categoryValues(of: type, from: plan.lo, to: plan.hi, options: options)
            }
            header(result, plan)
            result.pieces = pieces.count
            try scanInPieces(
                plan, pieces, options: options, walker: walker, result: &result, row: row,
                holding: holding(), held: held)
            return result
        }
        var credits: IntervalCredits?
        if plan.intervals {
            credits = try intervalCredits(plan, options: options, categoryValues: &result.categoryValues)
        }
        header(result, plan)
        var sweep = AggregateSweep(plan: plan, walker: walker, fill: options.fill, credits: credits)
        try sweepPiece(plan, options, &sweep, &result, row)
        return result
    }

    /// The interval credits of an aggregate, reading the samples a batch at a time
    /// (``IntervalSampleBatches``). The first batch is read here, so its errors come before the
    /// header; a category type's values, which the header holds, come from it when the blocks
    /// hold too few samples for a second, else from reading the samples once more first.
    private func intervalCredits(
        _ plan: AggregatePlan, options: AggregateOptions, categoryValues: inout [Int64]
    ) throws(TSDBError) -> IntervalCredits {
        var samples = try IntervalSampleBatches(
            self, type: plan.type, kind: plan.kind, from: plan.lo, to: plan.hi, options: options,
            carry: options.deduplicate)
        let category = plan.kind == .category
        if category && !samples.readsOneBatch {
            categoryValues = try self.categoryValues(of: plan.type, from: plan.lo, to: plan.hi, options: options)
        }
        let first = try samples.next()
        if category && samples.readsOneBatch {
            categoryValues = Set((first?.samples ?? []).map { Int64($0.amount) }).sorted()
        }
        let stream = CountedPieceStream(samples, first: first, deduplicate: options.deduplicate)
        return IntervalCredits(
            stream, lo: plan.lo, hi: plan.hi, prorate: options.prorate, category: plan.kind == .category)
    }

    /// The interval credits of one piece of a long aggregate (``scanInPieces``) whose range ends
    /// at `rangeEnd`, its first batch read when first asked for. With `prorate` off a sample
    /// counts wholly at its start, so the pieces of the piece's samples are needed to their ends:
    /// the samples reaching into them are read too, up to `rangeEnd` (where one thread stops
    /// reading), so they count as they do on one thread.
    func pieceCredits(
        _ piece: AggregatePlan, options: AggregateOptions, rangeEnd: Int64
    ) throws(TSDBError) -> IntervalCredits {
        var readEnd = piece.hi
        if !options.prorate {
            for reader in try segments(of: piece.type, from: piece.lo, to: piece.hi) {
                for s in reader.summaries where s.firstStart < piece.hi && s.lastStart >= piece.lo {
                    readEnd = max(readEnd, s.maxEnd)
                }
            }
            readEnd = min(readEnd, rangeEnd)
        }
        let samples = try IntervalSampleBatches(
            self, type: piece.type, kind: piece.kind, from: piece.lo, to: readEnd, options: options,
            carry: options.deduplicate)
        let stream = CountedPieceStream(samples, first: nil, deduplicate: options.deduplicate)
        return IntervalCredits(
            stream, lo: piece.lo, hi: piece.hi, prorate: options.prorate, category: piece.kind == .category)
    }

    func aggregatePlan(_ type: String, from: Int64?, to: Int64?, options: AggregateOptions) -> AggregatePlan {
        let style = HealthKitTypes.style(of: type)
        let kind = TypeCatalog.kind(of: type, style: style)
        let stats = options.statistics ?? AggregatePlan.defaultStatistics(kind)
        let intervals = (kind == .cumulative && stats.contains(.sum)) || kind == .category
        // The stored span only where a bound is open: a workout's heart rate asks with both given.
        let entries = from == nil || to == nil ? segmentEntries(of: type) : []
        let lo = max(from ?? (entries.map(\.firstStart).min() ?? 0), AggregatePlan.earliest)
        let hi = min(
            to ?? ((intervals ? entries.map(\.maxEnd).max() : entries.map(\.lastStart).max()).map { $0 + 1 } ?? 0),
            AggregatePlan.latest)
        let pointStatistics = stats.contains { !(kind == .cumulative && $0 == .sum) }
        return AggregatePlan(
            type: type, kind: kind, style: style, statistics: stats, lo: lo, hi: hi,
            pointStatistics: pointStatistics, intervals: intervals,
            needsValues: stats.contains { $0.quantile != nil },
            needsOrder: stats.contains(.first) || stats.contains(.last), needsSpread: stats.contains(.stddev),
            filtered: options.source != nil)
    }

    /// Feeds every sample starting in the range to the sweep: whole blocks from their summaries
    /// where allowed, else decoded (values and, with a source filter, source columns only).
    func scanPoints(
        _ plan: AggregatePlan, options: AggregateOptions, sweep: inout AggregateSweep,
        result: inout AggregateResult, row: (AggregateRow) -> Void
    ) throws(TSDBError) {
        let filter = options.source?.lowercased()
        let block = blockPool.take() ?? DecodedBlock()
        defer { blockPool.give(block) }
        let (lo, hi) = (plan.lo, plan.hi)
        let leq = plan.style == .discreteEquivalentContinuousLevel
        var reading = SlotReading(plan, sweep.buckets.walker.spec)
        for segment in try segments(of: plan.type, from: lo, to: hi) {
            let matches = filter.map { f in
                (segment.sources + segment.devices).map { $0.string?.lowercased().containsText(f) ?? false }
            }
            var slots: SlotStream?
            var regionPays: Bool?
            for b in 0..<segment.blockCount {
                let s = segment.summaries[b]
                guard s.lastStart >= lo, s.firstStart < hi else { continue }
                if plan.summariesServe,
                    s.liesInOneBucket(lo, hi, bucketEnd: { sweep.buckets.bucket(containing: $0).end })
                {
                    sweep.advance(to: s.firstStart, row)
                    sweep.acc.merge(s, spread: plan.needsSpread)
                    result.blocksFromSummaries += 1
                    continue
                }
                // A block across one bucket edge is added up either side of it: before its slot
                // summaries where that costs less, else once it proves to have none.
                let edge = plan.summariesServe && !plan.needsSpread ? Self.oneEdge(in: s, lo, hi, &sweep.buckets) : nil
                let sidesFirst = edge.map { Self.sidesCostLess(s, edge: $0) } ?? false
                if let edge, sidesFirst,
                    try Self.addSides(of: b, in: segment, s, edge: edge, scratch: block, sweep: &sweep, row)
                {
                    result.blocksSplit += 1
                    continue
                }
                // Whether the segment's slot region is worth opening is asked once, at the first block
                // that would read it.
                if plan.summariesServe, slots == nil, regionPays == nil {
                    regionPays = Self.slotRegionPays(segment, from: b, lo, hi, plan, sweep.buckets)
                }
                if plan.summariesServe, slots != nil || regionPays == true,
                    try reading.serve(block: b, of: segment, &slots, lo: lo, hi: hi, edge: edge, sweep: &sweep, row)
                {
                    result.blocksFromSlots += 1
                    continue
                }
                if let edge, !sidesFirst,
                    try Self.addSides(of: b, in: segment, s, edge: edge, scratch: block, sweep: &sweep, row)
                {
                    result.blocksSplit += 1
                    continue
                }
                if matches == nil && !leq && plan.summariesServe && !plan.needsSpread,
                    try Self.addUpByBucket(b, in: segment, s, plan, scratch: block, sweep: &sweep, row)
                {
                    result.blocksAddedUp += 1
                    continue
                }
                try segment.decode(
                    block: b, into: block, columns: matches == nil ? .values : ColumnSet.values.union(.sources))
                result.blocksDecoded += 1
                if matches == nil && !leq {
                    Self.accumulate(block, in: segment, plan, sweep: &sweep, row)
                    continue
                }
                Self.accumulateEach(block, in: segment, plan, matches: matches, sweep: &sweep, row)
            }
        }
    }

    /// The one bucket edge inside block `s`, when it lies in `[lo, hi)` across exactly one.
    static func oneEdge(in s: BlockSummary, _ lo: Int64, _ hi: Int64, _ buckets: inout BucketCursor)
        -> Int64?
    {
        guard s.firstStart >= lo, s.lastStart < hi else { return nil }
        let edge = buckets.bucket(containing: s.firstStart).end
        guard edge <= s.lastStart, buckets.bucket(containing: edge).end > s.lastStart else { return nil }
        return edge
    }

    /// Whether adding block `s` up either side of `edge` likely costs less than reading its slot
    /// summaries, if it has any: those on the side of the edge with fewer of them (``SlotSides``,
    /// priced by ``ReadingCost/slots(_:edge:)``), or every one when that declines the block. In
    /// callgrind every slot read took ~230 instructions each (one a quarter
    /// hour of the block's span at most) and the sides ~5 a sample, plus ~17 for each of the fewer
    /// side's; when the fewer are the later ones, every sample's. (Their deltas are only followed
    /// from the first, but the earlier side is added up as well when the fewer hold an extreme:
    /// estimates of each part chose worse on the year in UTC, Asia/Kathmandu and Lord Howe days,
    /// 36.3M–37.1M instructions in all against 35.9M; so did ``ReadingCost``'s, measured after the
    /// walk to the edge went by sums of runs: +0.1–0.6%, though −0.2% on five heavy years' Europe/
    /// Paris and Asia/Kathmandu days.) Five heavy years' daily heart rate in UTC
    /// days (blocks of 4,096 samples in ~4.5 hours) took 70.7M instructions with every block across
    /// an edge read from its slots, 110.0M with every one added up either side; the year's (a block
    /// of ~1,000 a day) 10.8M and 9.2M.
    static func sidesCostLess(_ s: BlockSummary, edge: Int64) -> Bool {
        // A block too sparse to have slots would open its segment's slot region for nothing.
        guard ReadingCost.likelyHasSlots(s) else { return true }
        let slots = Double(SlotSummary.number(s.lastStart) - SlotSummary.number(s.firstStart) + 1)
        let n = Double(s.sampleCount)
        let before = Double(edge - s.firstStart)
        let fewer = before <= Double(s.lastStart - edge) ? n * before / Double(s.lastStart - s.firstStart) : n
        return n * 5 + fewer * 17 < Swift.min(slots * 230, ReadingCost.slots(s, edge: edge))
    }

    /// Feeds block `b` to the sweep as the totals either side of `edge`, the one bucket edge inside
    /// it, when its values allow (``SegmentReader/sideTotals(block:edge:scratch:)``); false, with
    /// nothing fed, otherwise.
    private static func addSides(
        of b: Int, in segment: SegmentReader, _ s: BlockSummary, edge: Int64, scratch: DecodedBlock,
        sweep: inout AggregateSweep, _ row: (AggregateRow) -> Void
    ) throws(TSDBError) -> Bool {
        guard let (before, after) = try segment.sideTotals(block: b, edge: edge, scratch: scratch) else {
            return false
        }
        feed(before, after, of: s, edge: edge, sweep: &sweep, row)
        return true
    }

    /// Feeds block `b` to the sweep a bucket's run of samples at a time, added up from its start and
    /// value columns alone (``SegmentReader/addUpByBucket(block:scratch:bucketEnd:add:)``), when it
    /// lies inside the plan's range with enough samples a bucket and its values allow; false, with
    /// nothing fed, otherwise. Decoding the year's sparse blocks for hours took ~45 instructions a
    /// sample: unpacking three columns, their checks, and adding up runs as doubles (callgrind).
    private static func addUpByBucket(
        _ b: Int, in segment: SegmentReader, _ s: BlockSummary, _ plan: AggregatePlan, scratch: DecodedBlock,
        sweep: inout AggregateSweep, _ row: (AggregateRow) -> Void
    ) throws(TSDBError) -> Bool {
        guard s.firstStart >= plan.lo, s.lastStart < plan.hi, let width = sweep.buckets.walker.spec.shortestSeconds,
            s.sampleCount >= fewPerBucket * Int((s.lastStart - s.firstStart) / (width * 1_000_000) + 1)
        else { return false }
        return try segment.addUpByBucket(
            block: b, scratch: scratch,
            bucketEnd: { start in
                sweep.advance(to: start, row)
                return sweep.currentEnd
            },
            add: { sweep.acc.merge(wholeNumbers: $0) })
    }

    /// Feeds the totals of whole-number values of block `s` before `edge` and from it to the sweep.
    static func feed(
        _ before: ValueTotals, _ after: ValueTotals, of s: BlockSummary, edge: Int64, sweep: inout AggregateSweep,
        _ row: (AggregateRow) -> Void
    ) {
        sweep.advance(to: s.firstStart, row)
        sweep.acc.merge(wholeNumbers: before)
        sweep.advance(to: edge, row)
        sweep.acc.merge(wholeNumbers: after)
    }

    /// Feeds a decoded block's samples starting in the plan's range to the sweep, a bucket's run
    /// of them at a time.
    private static func accumulate(
        _ block: DecodedBlock, in segment: SegmentReader, _ plan: AggregatePlan, sweep: inout AggregateSweep,
        _ row: (AggregateRow) -> Void
    ) {
        let starts = block.starts
        var i = 0
        var end = block.count
        while i < end && starts[i] < plan.lo { i += 1 }
        while end > i && starts[end - 1] >= plan.hi { end -= 1 }
        guard i < end else { return }
        if !plan.needsValues, let width = sweep.buckets.walker.spec.shortestSeconds,
            end - i < Self.fewPerBucket * Int((starts[end - 1] - starts[i]) / (width * 1_000_000) + 1)
        {
            return accumulateOneByOne(block, i..<end, in: segment, sweep: &sweep, row)
        }
        while i < end {
            if starts[i] >= sweep.currentEnd { sweep.advance(to: starts[i], row) }
            let j = starts.firstIndex(from: i + 1, to: end, notBelow: sweep.currentEnd)
            sweep.acc.add(block, i..<j, in: segment, keepValues: plan.needsValues, spread: plan.needsSpread)
            i = j
        }
    }

    /// Fewer samples than this per bucket (on average over a block) are added one by one: finding
    /// each bucket's run and adding it as a whole costs more than its few samples (minutes of
    /// heart rate hold three).
    static let fewPerBucket = 8

    /// Adds samples `range` of a decoded block one by one, as ``Accumulator/add(_:keepValue:)`` does
    /// (which adding a run at once matches exactly), moving the sweep on as they leave a bucket.
    private static func accumulateOneByOne(
        _ block: DecodedBlock, _ range: Range<Int>, in segment: SegmentReader, sweep: inout AggregateSweep,
        _ row: (AggregateRow) -> Void
    ) {
        if sweep.basicOnly { return sweep.addBasic(block, range, in: segment, row) }
        let (starts, tags, mantissas) = (block.starts, block.valueTags, block.mantissas)
        var end = sweep.currentEnd
        for i in range {
            if starts[i] >= end {
                sweep.advance(to: starts[i], row)
                end = sweep.currentEnd
            }
            if UInt8(truncatingIfNeeded: tags[i]) == ValueTag.decimalBase {
                sweep.acc.add(Double(mantissas[i]), keepValue: false)
            } else if let v = block.value(at: i, in: segment) {
                sweep.acc.add(v, keepValue: false)
            } else {
                sweep.acc.addValueless()
            }
        }
    }

    /// Feeds a decoded block's samples to the sweep one by one: with a source filter, or for the
    /// energy of sound levels.
    private static func accumulateEach(
        _ block: DecodedBlock, in segment: SegmentReader, _ plan: AggregatePlan, matches: [Bool]?,
        sweep: inout AggregateSweep, _ row: (AggregateRow) -> Void
    ) {
        let starts = block.starts
        let tags = block.valueTags
        let mantissas = block.mantissas
        for i in 0..<block.count {
            let t = starts[i]
            guard t >= plan.lo, t < plan.hi else { continue }
            if let matches,
                !matches[Int(block.sources[i])] && !matches[segment.sources.count + Int(block.devices[i])]
            {
                continue
            }
            if t >= sweep.currentEnd { sweep.advance(to: t, row) }
            let tag = UInt8(truncatingIfNeeded: tags[i])
            guard let v = block.value(at: i, in: segment) else {
                sweep.acc.addValueless()
                continue
            }
            if plan.needsValues && tag >= ValueTag.decimalBase {
                sweep.acc.add(v, mantissa: mantissas[i], scale: tag - ValueTag.decimalBase)
            } else {
                sweep.acc.add(v, keepValue: plan.needsValues)
            }
            if plan.style == .discreteEquivalentContinuousLevel { sweep.acc.addEnergy(v) }
        }
    }

    /// Feeds a block's slots to the sweep, those of one bucket merged as integers first (one
    /// conversion to doubles per bucket, not per slot). Without `spread` a bucket's slots only
    /// need their counts, extremes and exact sum, which is much less work than ``StoredSlot/absorb(_:)``.
    static func accumulate(
        _ slots: [StoredSlot], scale: UInt8, lo: Int64, hi: Int64, spread: Bool, sweep: inout AggregateSweep,
        _ row: (AggregateRow) -> Void
    ) {
        var k = 0
        while k < slots.count && slots[k].start < lo { k += 1 }
        var last = slots.count
        while last > k && slots[last - 1].start >= hi { last -= 1 }
        while k < last {
            if slots[k].start >= sweep.currentEnd { sweep.advance(to: slots[k].start, row) }
            let bucketEnd = sweep.currentEnd
            var end = k + 1
            while end < last && slots[end].start < bucketEnd { end += 1 }
            if !spread, let totals = SlotTotals.summary(slots, k..<end, scale: scale) {
                sweep.acc.merge(totals, spread: false)
                k = end
                continue
            }
            while k < end {
                var group = slots[k]
                k += 1
                while k < end && group.absorb(slots[k]) { k += 1 }
                sweep.acc.merge(SlotSummary(group, scale: scale), spread: spread)
            }
        }
    }

    /// Whether a block's slots, if it has any, answer for it with no need to look at each: no bucket
    /// or range edge off the slot grid between the slots of its first and last start (what the
    /// slots of a block span, §6.1).
    static func slotGridServes(_ s: BlockSummary, lo: Int64, hi: Int64, _ buckets: inout BucketCursor)
        -> Bool
    {
        let first = SlotSummary.number(s.firstStart) * SlotSummary.micros
        let end = (SlotSummary.number(s.lastStart) + 1) * SlotSummary.micros
        return onGridOrOutside(lo, first, end) && onGridOrOutside(hi, first, end)
            && buckets.boundariesOnSlotGrid(from: first, to: end)
    }

    /// Whether neither end of `[lo, hi)` lies between the block's samples off the slot grid: else
    /// its slots cannot answer for it (a workout's heart rate, from 10:07 to 11:02, is decoded).
    static func rangeEdgesOnSlotGrid(_ s: BlockSummary, lo: Int64, hi: Int64) -> Bool {
        onGridOrOutside(lo, s.firstStart, s.lastStart + 1) && onGridOrOutside(hi, s.firstStart, s.lastStart + 1)
    }

    /// Whether `edge` lies outside `(first, end)` or on the slot grid.
    private static func onGridOrOutside(_ edge: Int64, _ first: Int64, _ end: Int64) -> Bool {
        edge <= first || edge >= end || edge % SlotSummary.micros == 0
    }

    /// Whether a block's slots (non-empty) answer for it: each wholly inside one bucket, and
    /// wholly inside `[lo, hi)` or outside it (a piece of a long aggregate ends inside a block).
    static func slotsServe(_ slots: [StoredSlot], lo: Int64, hi: Int64, buckets: inout BucketCursor) -> Bool {
        guard let first = slots.first?.start, let last = slots.last?.start else { return false }
        // Usually known at once: no bucket or range edge inside the block's slots off the grid.
        let end = last + SlotSummary.micros
        if onGridOrOutside(lo, first, end) && onGridOrOutside(hi, first, end)
            && buckets.boundariesOnSlotGrid(from: first, to: end)
        {
            return true
        }
        var bucketEnd = Int64.min
        for slot in slots {
            let end = slot.start + SlotSummary.micros
            if end <= lo || slot.start >= hi { continue }
            guard slot.start >= lo, end <= hi else { return false }
            if slot.start >= bucketEnd { bucketEnd = buckets.bucket(containing: slot.start).end }
            guard end <= bucketEnd else { return false }
        }
        return true
    }
}

/// How an aggregate reads blocks' slot summaries (§6.1), with its buffers kept from block to block.
private struct SlotReading {
    let spread: Bool
    /// Slots added up per bucket as they are read (``SlotRunReader``): no spread is asked for and
    /// buckets span several slots (with a bucket a slot, a run per slot costs what keeping them does).
    let byRuns: Bool
    var slots: [StoredSlot] = []
    var runs: [SlotRun] = []

    init(_ plan: AggregatePlan, _ spec: BucketSpec) {
        spread = plan.needsSpread
        byRuns = !plan.needsSpread && (spec.shortestSeconds ?? .max) > SlotSummary.micros / 1_000_000
        slots.reserveCapacity(256)
    }

    /// Feeds block `b` to the sweep from its slot summaries if they answer for it; false when it
    /// has none or they do not (the block is then decoded). A block across one bucket edge, `edge`,
    /// is added up from the slots on the side of it with fewer of them (``SlotSides``) when its
    /// values allow.
    mutating func serve(
        block b: Int, of segment: SegmentReader, _ stream: inout SlotStream?, lo: Int64, hi: Int64, edge: Int64?,
        sweep: inout AggregateSweep, _ row: (AggregateRow) -> Void
    ) throws(TSDBError) -> Bool {
        guard Store.rangeEdgesOnSlotGrid(segment.summaries[b], lo: lo, hi: hi) else { return false }
        if stream == nil { stream = try segment.slotStream() }
        if let edge {
            switch try segment.readSlotSides(&stream!, block: b, edge: edge) {
            case .some(.some(let (before, after))):
                Store.feed(before, after, of: segment.summaries[b], edge: edge, sweep: &sweep, row)
                return true
            case .none: return false
            case .some(.none): break
            }
        }
        if byRuns && Store.slotGridServes(segment.summaries[b], lo: lo, hi: hi, &sweep.buckets) {
            let outcome = try segment.readSlotRuns(
                &stream!, block: b, lo: lo, hi: hi, bucketEnd: { sweep.buckets.bucket(containing: $0).end },
                into: &runs)
            switch outcome {
            case .summed(let scale):
                for run in runs {
                    if run.start >= sweep.currentEnd { sweep.advance(to: run.start, row) }
                    sweep.acc.merge(run.summary(scale: scale), spread: false)
                }
                return true
            case .noSlots: return false
            case .declined: break
            }
        }
        let scale = try segment.readSlots(&stream!, block: b, into: &slots)
        guard Store.slotsServe(slots, lo: lo, hi: hi, buckets: &sweep.buckets) else { return false }
        Store.accumulate(slots, scale: scale, lo: lo, hi: hi, spread: spread, sweep: &sweep, row)
        return true
    }
}
