/// Walks the buckets of an aggregate forward in time, one at a time: per-sample statistics are
/// added to the current bucket's accumulator, interval credits are computed when a bucket closes,
/// and each finished row is handed out at once. Without `fill`, buckets with nothing in them are
/// jumped over, so one-second buckets over a year cost only the buckets that hold data.
struct AggregateSweep {
    let plan: AggregatePlan
    var buckets: BucketCursor
    let fill: Bool
    private(set) var credits: IntervalCredits?
    /// Whether there are credits: asked per bucket, where testing the optional itself cost ~50
    /// instructions a row of a year's hourly heart rate (an outlined copy and destroy of it).
    private let hasCredits: Bool
    var current: Bucket?
    var acc = Accumulator()
    /// Where rows go instead of `emit`, when set: laid out in columns straight from the
    /// accumulator, with no row made and read back (``Store/aggregateColumns(_:from:to:options:)``).
    var columns: ColumnRows?
    /// The plan's statistics as bits by ``Statistic/index``, when all are among count, sum, min,
    /// max and a plain mean (``BasicTotals/values(_:cumulativeSum:)``).
    let basicStatistics: UInt16?
    /// No credits, no `fill`, no cumulative sums, and only basic statistics: a bucket closes by
    /// writing those at once (``closeBasic(_:_:)``), and the next is the one holding the sample
    /// (a year's minute buckets took ~370 instructions a row in `advance` and `close`).
    let basicOnly: Bool

    init(plan: AggregatePlan, walker: BucketWalker, fill: Bool, credits: IntervalCredits?) {
        self.plan = plan
        buckets = BucketCursor(walker)
        self.fill = fill
        self.credits = credits
        hasCredits = credits != nil
        // count, sum, min, max and mean are indices 0 to 4.
        let mask = plan.statistics.reduce(UInt16(0)) { $0 | 1 << $1.index }
        basicStatistics = plan.style != .discreteEquivalentContinuousLevel && mask & ~0b11111 == 0 ? mask : nil
        basicOnly = basicStatistics != nil && credits == nil && !fill && plan.kind != .cumulative
    }

    /// The end of the current bucket (`Int64.min` before the first), for a cheap test per sample.
    var currentEnd: Int64 { current?.end ?? .min }

    /// Makes the bucket holding `t` (`lo ≤ t < hi`) current, closing the ones before it.
    mutating func advance(to t: Int64, _ emit: (AggregateRow) -> Void) {
        if basicOnly, let bucket = current {
            guard bucket.end <= t else { return }
            closeBasic(bucket, emit)
            current = buckets.bucket(containing: t)
            return
        }
        guard var bucket = current else {
            current = buckets.bucket(containing: fill ? plan.lo : min(t, nextActivity(atOrAfter: plan.lo) ?? t))
            if current!.end <= t { advance(to: t, emit) }
            return
        }
        while bucket.end <= t {
            close(bucket, emit)
            if fill {
                bucket = buckets.bucket(after: bucket)
            } else {
                bucket = buckets.bucket(containing: min(t, nextActivity(atOrAfter: bucket.end) ?? t))
            }
        }
        current = bucket
    }

    /// Closes every bucket that remains up to the end of the range.
    mutating func finish(_ emit: (AggregateRow) -> Void) {
        var bucket: Bucket
        if let c = current {
            bucket = c
        } else {
            guard let first = fill ? plan.lo : nextActivity(atOrAfter: plan.lo), first < plan.hi else { return }
            bucket = buckets.bucket(containing: first)
        }
        while true {
            close(bucket, emit)
            guard bucket.end < plan.hi else { break }
            if fill {
                bucket = buckets.bucket(after: bucket)
            } else {
                guard let next = nextActivity(atOrAfter: bucket.end), next < plan.hi else { break }
                bucket = buckets.bucket(containing: next)
            }
        }
        current = nil
    }

    private mutating func nextActivity(atOrAfter t: Int64) -> Int64? {
        hasCredits ? credits!.nextActivity(atOrAfter: t) : nil
    }

    /// ``close(_:_:)`` when ``basicOnly``: a row when the bucket has samples, its statistics
    /// straight from the accumulator's counts, sum and extremes.
    @inline(__always)
    private mutating func closeBasic(_ bucket: Bucket, _ emit: (AggregateRow) -> Void) {
        guard acc.count > 0 else { return }  // nothing added since the last reset
        writeBasic(bucket, acc.basicTotals, emit)
        acc.reset()  // not deferred: a deferred reset was called out of line, ~30 instructions a row
    }

    /// Writes the row of `bucket` from `totals`, for a ``basicOnly`` sweep.
    @inline(__always)
    private mutating func writeBasic(_ bucket: Bucket, _ totals: BasicTotals, _ emit: (AggregateRow) -> Void) {
        guard columns == nil else { return columns!.appendBasic(bucket, totals) }
        emit(
            AggregateRow(
                start: bucket.start, end: bucket.end, values: totals.values(basicStatistics!, cumulativeSum: nil),
                seconds: CategorySeconds()))
    }

    /// Adds samples `range` of a decoded block, in time order, to a ``basicOnly`` sweep: the
    /// current bucket's, then, while the bucket cursor's grid holds them (``BucketGrid``), each
    /// later bucket's, added up in registers from what the accumulator holds, each row written
    /// when a sample leaves its bucket: no accumulator, cursor or sweep step per bucket. The last
    /// bucket becomes the current one. (A year's minutes spent ~265 instructions a row moving the
    /// sweep on.)
    mutating func addBasic(
        _ block: DecodedBlock, _ range: Range<Int>, in segment: SegmentReader, _ emit: (AggregateRow) -> Void
    ) {
        let (starts, tags, mantissas) = (block.starts, block.valueTags, block.mantissas)
        // Whole numbers, most of heart rate's, without the division by a power of ten.
        func value(_ i: Int) -> Double? {
            UInt8(truncatingIfNeeded: tags[i]) == ValueTag.decimalBase
                ? Double(mantissas[i]) : block.value(at: i, in: segment)
        }
        var i = range.lowerBound
        while i < range.upperBound {
            if starts[i] >= currentEnd { advance(to: starts[i], emit) }
            var bucket = current!
            var totals = acc.basicTotals
            acc.reset()  // given back its figures below, so every bucket starts from a reset one
            let grid = buckets.grid
            while i < range.upperBound {
                if starts[i] >= bucket.end {
                    // Off the grid, the sweep moves on as for any sample.
                    guard starts[i] >= grid.start && starts[i] < grid.end else { break }
                    writeBasic(bucket, totals, emit)
                    bucket = grid.bucket(containing: starts[i])!
                    totals = BasicTotals()
                }
                totals.add(value(i))
                i += 1
            }
            current = bucket
            acc.basicTotals = totals
        }
    }

    /// Emits the row of `bucket` (if it has data, or `fill`) and starts a new accumulator.
    private mutating func close(_ bucket: Bucket, _ emit: (AggregateRow) -> Void) {
        var sum = 0.0
        var seconds = CategorySeconds()
        defer { acc.reset() }
        var touched = false
        if hasCredits {
            touched = credits!.credit(bucket, sum: &sum, seconds: &seconds)
            // A batch that could not be read leaves the bucket short: no row, and the aggregate throws.
            guard !credits!.hasFailed else { return }
        }
        guard acc.count > 0 || touched || fill else { return }
        let cumulativeSum: Double? = plan.kind == .cumulative ? sum : nil
        if columns != nil {
            return columns!.append(bucket, &acc, plan, cumulativeSum: cumulativeSum, seconds: seconds)
        }
        var values: StatisticValues
        if let basic = basicStatistics {
            values = acc.basicTotals.values(basic, cumulativeSum: cumulativeSum)
        } else {
            values = StatisticValues()
            for s in plan.statistics {
                if let v = acc.value(s, cumulativeSum: cumulativeSum, style: plan.style) { values[s] = v }
            }
        }
        emit(AggregateRow(start: bucket.start, end: bucket.end, values: values, seconds: seconds))
    }
}

/// The counted pieces of interval samples, handed out bucket by bucket in time order: prorated by
/// time overlap, or (`prorate` off, and for point samples) wholly to the bucket of the sample's
/// start. Pieces come a batch at a time (``CountedPieceStream``) or all at once; only the pieces
/// reaching past the last bucket credited and one batch are held, so memory grows with neither
/// the range nor a bucket's length.
///
/// A bucket's sum adds its spans in order (those reaching in from earlier buckets first, then by
/// start), then the sum of its instants in time order; its category time, the same way value by
/// value. Both orders are the same whatever the batches, so nothing depends on where they end.
struct IntervalCredits {
    private let lo: Int64, hi: Int64
    private let prorate: Bool
    let category: Bool
    /// The batches not yet read; nil once all are (or with pieces given at once).
    private var stream: CountedPieceStream?
    /// The current batch's pieces with a length, clipped to the range, by start.
    private var spans: [CountedPiece] = []
    /// The credits at an instant not yet given: (time, piece, share of the sample), by time; the
    /// current batch's, and with `prorate` off those of the batches read to settle a bucket.
    private var instants: [(t: Int64, piece: CountedPiece, share: Double)] = []
    private var nextSpan = 0, nextInstant = 0
    /// The spans reaching past the last bucket credited.
    private var active: [CountedPiece] = []
    /// Why reading a batch failed; nothing more is credited, and the aggregate throws it.
    private(set) var failure: TSDBError?
    /// Whether ``failure`` is set, asked per bucket without copying the error out.
    var hasFailed: Bool { failure != nil }
    private var blocksRead = 0
    /// Blocks decoded for the pieces so far.
    var blocksDecoded: Int { stream?.blocksDecoded ?? blocksRead }

    init(_ pieces: consuming [CountedPiece], lo: Int64, hi: Int64, prorate: Bool, category: Bool) {
        (self.lo, self.hi, self.prorate, self.category) = (lo, hi, prorate, category)
        load(pieces)
    }

    init(_ stream: CountedPieceStream, lo: Int64, hi: Int64, prorate: Bool, category: Bool) {
        (self.lo, self.hi, self.prorate, self.category) = (lo, hi, prorate, category)
        self.stream = stream
    }

    /// Makes `pieces` (in start order) the current batch: clipped in their own array (a year of
    /// daily steps copied and sorted its pieces twice here, ~2 MB each: page faults were most of
    /// its time), and sorted only if out of order.
    private mutating func load(_ pieces: consuming [CountedPiece]) {
        var spans = pieces
        instants.removeAll(keepingCapacity: true)
        if !prorate { instants.reserveCapacity(spans.count) }
        var kept = 0
        let (lo, hi, prorate) = (lo, hi, prorate)
        spans.withUnsafeMutableBufferPointer { spans in
            for i in 0..<spans.count {
                // A span inside the range, the usual piece, stays where it is (moved only after a
                // dropped one): writing each back made this pass 1.01 M of the year's daily steps'
                // instructions; this way, 0.77 M.
                if prorate && spans[i].end != spans[i].start && spans[i].start >= lo && spans[i].end <= hi {
                    if kept != i { spans[kept] = spans[i] }
                    kept += 1
                    continue
                }
                let p = spans[i]
                let length = p.sampleEnd - p.sampleStart
                if !prorate || p.end == p.start {
                    guard p.sampleStart >= lo, p.sampleStart < hi else { continue }
                    instants.append((p.sampleStart, p, length == 0 ? 1 : Double(p.end - p.start) / Double(length)))
                } else {
                    var clipped = p
                    clipped.start = max(p.start, lo)
                    clipped.end = min(p.end, hi)
                    guard clipped.end > clipped.start else { continue }
                    spans[kept] = clipped  // kept <= i: a piece already read
                    kept += 1
                }
            }
        }
        spans.removeLast(spans.count - kept)
        // Stable sorts, as the order of pieces starting together is the order they are added in.
        if !spans.isSorted(by: \.start) { spans.sort { $0.start < $1.start } }
        if !instants.isSorted(by: \.t) { instants.sort { $0.t < $1.t } }
        self.spans = spans
        (nextSpan, nextInstant) = (0, 0)
    }

    /// Reads batches until the current one has pieces left; false when there are none. A batch
    /// holds the pieces of samples starting before the next batch's first, so pieces left in the
    /// current one come before any of the next.
    private mutating func refill() -> Bool {
        while nextSpan >= spans.count && nextInstant >= instants.count {
            guard let pieces = nextBatch() else { return false }
            load(pieces)
        }
        return true
    }

    /// The stream's next pieces; nil once it has ended or failed (the failure kept in ``failure``).
    private mutating func nextBatch() -> [CountedPiece]? {
        guard stream != nil else { return nil }
        do throws(TSDBError) {
            if let pieces = try stream!.next() { return pieces }
        } catch {
            failure = error
        }
        (blocksRead, stream) = (stream!.blocksDecoded, nil)
        return nil
    }

    /// With `prorate` off, a sample's pieces all count at its start, and a later batch may hold
    /// some of them (of a sample carried on into it): reads batches until the stream has given
    /// every piece of the samples starting before `t`, keeping the instants in time order.
    private mutating func settle(before t: Int64) {
        while !prorate, let s = stream, s.settled < t {
            let exhausted = nextSpan >= spans.count && nextInstant >= instants.count
            guard let pieces = nextBatch() else { return }
            exhausted ? load(pieces) : addInstants(of: pieces)
        }
    }

    /// Adds the instants of `pieces` (with `prorate` off, every piece's) to those not yet
    /// credited, in time order: a stable sort, as pieces at one instant keep their order.
    private mutating func addInstants(of pieces: [CountedPiece]) {
        instants.removeFirst(nextInstant)
        nextInstant = 0
        for p in pieces where p.sampleStart >= lo && p.sampleStart < hi {
            let length = p.sampleEnd - p.sampleStart
            instants.append((p.sampleStart, p, length == 0 ? 1 : Double(p.end - p.start) / Double(length)))
        }
        if !instants.isSorted(by: \.t) { instants.sort { $0.t < $1.t } }
    }

    /// The first instant at or after `t` where some piece counts, if any.
    mutating func nextActivity(atOrAfter t: Int64) -> Int64? {
        if active.contains(where: { $0.end > t }) { return t }
        guard refill() else { return nil }
        // The first instant is the next only once no later batch can bring an earlier one.
        while !prorate, let s = stream, nextInstant < instants.count, s.settled <= instants[nextInstant].t {
            settle(before: instants[nextInstant].t + 1)
        }
        var next: Int64?
        if nextSpan < spans.count { next = max(t, spans[nextSpan].start) }
        if nextInstant < instants.count { next = min(next ?? .max, max(t, instants[nextInstant].t)) }
        return next
    }

    /// Adds what the pieces give `bucket` to `sum` (cumulative) or `seconds` (category). Returns
    /// whether any piece reached the bucket.
    mutating func credit(_ bucket: Bucket, sum: inout Double, seconds: inout CategorySeconds) -> Bool {
        settle(before: bucket.end)
        var touched = false
        var kept = 0
        for a in active.indices {
            let p = active[a]
            touched = add(p, to: bucket, sum: &sum, seconds: &seconds) || touched
            if p.end > bucket.end {
                active[kept] = p
                kept += 1
            }
        }
        active.removeLast(active.count - kept)
        var instantSum = 0.0
        var instantSeconds = CategorySeconds()
        while refill() {
            while nextSpan < spans.count && spans[nextSpan].start < bucket.end {
                let p = spans[nextSpan]
                nextSpan += 1
                touched = add(p, to: bucket, sum: &sum, seconds: &seconds) || touched
                if p.end > bucket.end { active.append(p) }
            }
            while nextInstant < instants.count && instants[nextInstant].t < bucket.end {
                let (_, p, share) = instants[nextInstant]
                nextInstant += 1
                touched = true
                if category {
                    instantSeconds[Int64(p.amount), default: 0] += Double(p.end - p.start) / 1e6
                } else {
                    instantSum += p.amount * share
                }
            }
            // What is left of the batch lies past the bucket, and so does the next batch.
            if nextSpan < spans.count || nextInstant < instants.count { break }
        }
        if instantSum != 0 { sum += instantSum }
        seconds.add(instantSeconds)
        return touched
    }

    /// Adds span `p`'s overlap with `bucket`; whether there is any.
    @inline(__always)
    private func add(_ p: CountedPiece, to bucket: Bucket, sum: inout Double, seconds: inout CategorySeconds) -> Bool {
        let overlap = min(p.end, bucket.end) - max(p.start, bucket.start)
        guard overlap > 0 else { return false }
        if category {
            seconds[Int64(p.amount), default: 0] += Double(overlap) / 1e6
        } else {
            sum += p.amount * Double(overlap) / Double(p.sampleEnd - p.sampleStart)
        }
        return true
    }
}

extension Array {
    /// Whether `key` never decreases along the array.
    fileprivate func isSorted(by key: (Element) -> Int64) -> Bool {
        withUnsafeBufferPointer { e in
            var i = 1
            while i < e.count && key(e[i - 1]) <= key(e[i]) { i += 1 }
            return i >= e.count
        }
    }
}

/// The count, sum and extremes of a bucket's samples: all a ``AggregateSweep/basicOnly`` sweep's
/// rows show.
struct BasicTotals {
    var count = 0
    var valueCount = 0
    var sum = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity

    /// Adds a sample: its value, or none (it counts, but has no value).
    @inline(__always)
    mutating func add(_ value: Double?) {
        count += 1
        guard let value else { return }
        valueCount += 1
        sum += value
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
    }

    /// The statistics among count, sum, min, max and mean that `mask` names (bits by
    /// ``Statistic/index``), the mean a plain average: count always; sum from `cumulativeSum` (the
    /// interval credits) when given, else with the values like min, max and mean.
    func values(_ mask: UInt16, cumulativeSum: Double?) -> StatisticValues {
        let defined: UInt16 = valueCount > 0 ? 0b11111 : cumulativeSum != nil ? 0b00011 : 0b00001
        let present = mask & defined
        var v = StatisticValues()
        if present & 1 != 0 { v.stored.0 = Double(count) }
        if present & 2 != 0 { v.stored.1 = cumulativeSum ?? sum }
        if present & 4 != 0 { v.stored.2 = minimum }
        if present & 8 != 0 { v.stored.3 = maximum }
        if present & 16 != 0 { v.stored.4 = sum / Double(valueCount) }
        v.present = present
        return v
    }
}
