/// Walks the buckets of an aggregate forward in time, one at a time: per-sample statistics are
/// added to the current bucket's accumulator, interval credits are computed when a bucket closes,
/// and each finished row is handed out at once. Without `fill`, buckets with nothing in them are
/// jumped over, so one-second buckets over a year cost only the buckets that hold data.
struct AggregateSweep {
    let plan: AggregatePlan
    var buckets: BucketCursor
    let fill: Bool
    var credits: IntervalCredits?
    var current: Bucket?
    var acc = Accumulator()
    /// Where rows go instead of `emit`, when set: laid out in columns straight from the
    /// accumulator, with no row made and read back (``Store/aggregateColumns(_:from:to:options:)``).
    var columns: ColumnRows?
    /// The plan's statistics as bits by ``Statistic/index``, when all are among count, sum, min,
    /// max and a plain mean (``Accumulator/basicValues(_:cumulativeSum:)``).
    let basicStatistics: UInt16?

    init(plan: AggregatePlan, walker: BucketWalker, fill: Bool, credits: IntervalCredits?) {
        self.plan = plan
        buckets = BucketCursor(walker)
        self.fill = fill
        self.credits = credits
        // count, sum, min, max and mean are indices 0 to 4.
        let mask = plan.statistics.reduce(UInt16(0)) { $0 | 1 << $1.index }
        basicStatistics = plan.style != .discreteEquivalentContinuousLevel && mask & ~0b11111 == 0 ? mask : nil
    }

    /// The end of the current bucket (`Int64.min` before the first), for a cheap test per sample.
    var currentEnd: Int64 { current?.end ?? .min }

    /// Makes the bucket holding `t` (`lo ≤ t < hi`) current, closing the ones before it.
    mutating func advance(to t: Int64, _ emit: (AggregateRow) -> Void) {
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

    private func nextActivity(atOrAfter t: Int64) -> Int64? { credits?.nextActivity(atOrAfter: t) }

    /// Emits the row of `bucket` (if it has data, or `fill`) and starts a new accumulator.
    private mutating func close(_ bucket: Bucket, _ emit: (AggregateRow) -> Void) {
        var sum = 0.0
        var seconds = CategorySeconds()
        let touched = credits?.credit(bucket, sum: &sum, seconds: &seconds) ?? false
        defer { acc.reset() }
        guard acc.count > 0 || touched || fill else { return }
        let cumulativeSum: Double? = plan.kind == .cumulative ? sum : nil
        if columns != nil {
            return columns!.append(bucket, &acc, plan, cumulativeSum: cumulativeSum, seconds: seconds)
        }
        var values: StatisticValues
        if let basic = basicStatistics {
            values = acc.basicValues(basic, cumulativeSum: cumulativeSum)
        } else {
            values = StatisticValues()
            for s in plan.statistics {
                if let v = acc.value(s, cumulativeSum: cumulativeSum, style: plan.style) { values[s] = v }
            }
        }
        emit(AggregateRow(start: bucket.start, end: bucket.end, values: values, seconds: seconds))
    }
}

/// The counted pieces of interval samples (``SourceRanking/countedPieces(_:)``), handed out bucket
/// by bucket in time order: prorated by time overlap, or (`prorate` off, and for point samples)
/// wholly to the bucket of the sample's start. Only pieces overlapping the current bucket are held.
struct IntervalCredits {
    /// Pieces with a length, clipped to the range, by start.
    private let spans: [CountedPiece]
    /// Credits at an instant: (time, piece, share of the sample), by time.
    private let instants: [(t: Int64, piece: CountedPiece, share: Double)]
    private var nextSpan = 0, nextInstant = 0
    /// The spans reaching past the last bucket credited (their places in ``spans``).
    private var active: [Int] = []
    let category: Bool

    /// `pieces` are clipped in their own array (a year of daily steps copied and sorted its
    /// pieces twice here, ~2 MB each: page faults were most of its time), and sorted only if
    /// out of order; the store gives them in order.
    init(_ pieces: consuming [CountedPiece], lo: Int64, hi: Int64, prorate: Bool, category: Bool) {
        self.category = category
        var spans = pieces
        var instants: [(t: Int64, piece: CountedPiece, share: Double)] = []
        if !prorate { instants.reserveCapacity(spans.count) }
        var kept = 0
        spans.withUnsafeMutableBufferPointer { spans in
            for i in 0..<spans.count {
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
        self.instants = instants
    }

    /// The first instant at or after `t` where some piece counts, if any.
    func nextActivity(atOrAfter t: Int64) -> Int64? {
        if active.contains(where: { spans[$0].end > t }) { return t }
        var next: Int64?
        if nextSpan < spans.count { next = max(t, spans[nextSpan].start) }
        if nextInstant < instants.count { next = min(next ?? .max, max(t, instants[nextInstant].t)) }
        return next
    }

    /// Adds what the pieces give `bucket` to `sum` (cumulative) or `seconds` (category). Returns
    /// whether any piece reached the bucket.
    mutating func credit(_ bucket: Bucket, sum: inout Double, seconds: inout CategorySeconds) -> Bool {
        var touched = false
        while nextSpan < spans.count && spans[nextSpan].start < bucket.end {
            active.append(nextSpan)
            nextSpan += 1
        }
        var kept = 0
        for a in active.indices {
            let p = spans[active[a]]
            let overlap = min(p.end, bucket.end) - max(p.start, bucket.start)
            if overlap > 0 {
                touched = true
                if category {
                    seconds[Int64(p.amount), default: 0] += Double(overlap) / 1e6
                } else {
                    sum += p.amount * Double(overlap) / Double(p.sampleEnd - p.sampleStart)
                }
            }
            if p.end > bucket.end {
                active[kept] = active[a]
                kept += 1
            }
        }
        active.removeLast(active.count - kept)
        while nextInstant < instants.count && instants[nextInstant].t < bucket.end {
            let (_, p, share) = instants[nextInstant]
            nextInstant += 1
            touched = true
            if category {
                seconds[Int64(p.amount), default: 0] += Double(p.end - p.start) / 1e6
            } else {
                sum += p.amount * share
            }
        }
        return touched
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
