import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Long aggregates on two cores. The range is cut at bucket boundaries into pieces of about equal
/// samples, so each piece is a complete aggregate of its own buckets and nothing needs merging.
/// The calling thread takes pieces from the front and hands out their rows as they come; a
/// second thread takes pieces from the back and holds their rows (a bounded number:
/// ``maximumHeldRows``) until the front reaches them. A second thread can start late (an idle
/// core may take milliseconds to wake): the calling thread then simply takes more pieces, and
/// never waits for a thread that has taken none.
struct AggregatePieces: Sendable {
    /// Below this many samples per piece a second thread costs more than it saves.
    static let minimumSamples = 100_000
    static let maximumPieces = 8
    /// The most rows the second thread may hold back (about 13 MB).
    static let maximumHeldRows = 100_000

    /// Piece `i` is `[cuts[i], cuts[i + 1])`.
    let cuts: [Int64]
    var count: Int { cuts.count - 1 }

    /// What a piece taken from the back holds until the front reaches it.
    enum Held {
        case rows([AggregateRow])
        /// The rows formatted by the caller's ``AggregateRowFormatter``.
        case bytes([UInt8])
    }

    /// What the two threads share: the next piece from each end, and the back's rows.
    struct Progress {
        var front = 0
        var back: Int
        /// Pieces taken from the back and not finished yet.
        var running = 0
        var held: [Int: Held] = [:]
        var counts = (decoded: 0, summaries: 0, slots: 0)
        var failure: TSDBError?
    }
}

extension Store {
    /// The pieces to scan on two cores, or nil when the range is too small, cannot be cut (one
    /// bucket) or could hold back too many rows.
    func parallelPieces(_ plan: AggregatePlan, options: AggregateOptions, walker: BucketWalker) -> AggregatePieces? {
        guard sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1, let width = options.bucket.shortestSeconds else { return nil }
        // A bucket is at least half its nominal length (DST changes, Lord Howe's half hours).
        guard (plan.hi - plan.lo) / (width * 500_000) < AggregatePieces.maximumHeldRows else { return nil }
        // Samples per segment, taken as spread evenly over its span (good enough for cutting).
        let parts = segmentEntries.filter { $0.type == plan.type && $0.lastStart >= plan.lo && $0.firstStart < plan.hi }
            .sorted { $0.firstStart < $1.firstStart }
        let total = parts.reduce(0) { $0 + Int($1.sampleCount) }
        let pieces = min(AggregatePieces.maximumPieces, total / AggregatePieces.minimumSamples)
        guard pieces >= 2 else { return nil }
        var cuts = [plan.lo]
        var seen = 0
        var next = 1
        for p in parts {
            let n = Int(p.sampleCount)
            while next < pieces && seen + n >= total * next / pieces {
                let fraction = Double(total * next / pieces - seen) / Double(max(n, 1))
                let t = p.firstStart + Int64(Double(p.lastStart - p.firstStart) * fraction)
                let bucket = walker.bucket(containing: min(max(t, plan.lo), plan.hi - 1))
                let cut = bucket.start > plan.lo ? bucket.start : bucket.end
                if cut > cuts.last!, cut < plan.hi { cuts.append(cut) }
                next += 1
            }
            seen += n
        }
        cuts.append(plan.hi)
        return cuts.count >= 3 ? AggregatePieces(cuts: cuts) : nil
    }

    /// Scans `pieces` from the front here, handing out rows in order, and from the back on
    /// another thread. The back's pieces hold their rows formatted with `formatter` (a copy per
    /// piece) and handed to `held` in order, or as rows for `row` when there is no formatter.
    func scanInPieces(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, options: AggregateOptions, walker: BucketWalker,
        result: inout AggregateResult, row: (AggregateRow) -> Void, formatter: (any AggregateRowFormatter)?,
        held: ([UInt8]) -> Void
    ) throws(TSDBError) {
        let progress = Locked(AggregatePieces.Progress(back: pieces.count))
        let finished = DispatchSemaphore(value: 0)
        let template = result
        DispatchQueue.global().async {
            while let i = progress.withLock({ p -> Int? in
                guard p.failure == nil, p.back > p.front else { return nil }
                p.back -= 1
                p.running += 1
                return p.back
            }) {
                var part = template
                var rows: [AggregateRow] = []
                var bytes: [UInt8] = []
                var format = formatter
                if let formatter, let width = options.bucket.shortestSeconds {
                    // Room for the piece's rows at once: growing by doubling copied and faulted in
                    // each piece's bytes twice over.
                    let rows = (pieces.cuts[i + 1] - pieces.cuts[i]) / (width * 1_000_000) + 1
                    bytes.reserveCapacity(
                        Int(min(rows, Int64(AggregatePieces.maximumHeldRows))) * formatter.maximumRowLength)
                }
                let outcome = Result { () throws(TSDBError) in
                    try self.scanPiece(plan, pieces, i, options, walker, &part) { row in
                        if format == nil {
                            rows.append(row)
                        } else {
                            format!.append(row, to: &bytes)
                        }
                    }
                }
                let kept: AggregatePieces.Held = formatter == nil ? .rows(rows) : .bytes(bytes)
                progress.withLock { p in
                    p.running -= 1
                    p.held[i] = kept
                    p.counts.decoded += part.blocksDecoded
                    p.counts.summaries += part.blocksFromSummaries
                    p.counts.slots += part.blocksFromSlots
                    if case .failure(let error) = outcome { p.failure = p.failure ?? error }
                }
                finished.signal()
            }
        }
        // The front: pieces taken here stream their rows at once.
        while let i = progress.withLock({ p -> Int? in
            guard p.failure == nil, p.front < p.back else { return nil }
            p.front += 1
            return p.front - 1
        }) {
            do throws(TSDBError) {
                try scanPiece(plan, pieces, i, options, walker, &result, row)
            } catch {
                progress.withLock { $0.failure = $0.failure ?? error }
            }
        }
        // The back's pieces: wait only while the other thread is still on one.
        while progress.withLock({ $0.running > 0 }) { finished.wait() }
        let done = progress.withLock { p in
            defer { p.held = [:] }
            return (p.failure, p.held, p.counts)
        }
        if let failure = done.0 { throw failure }
        for i in done.1.keys.sorted() {
            switch done.1[i]! {
            case .rows(let rows): for r in rows { row(r) }
            case .bytes(let bytes): held(bytes)
            }
        }
        result.blocksDecoded += done.2.decoded
        result.blocksFromSummaries += done.2.summaries
        result.blocksFromSlots += done.2.slots
    }

    /// Scans piece `i` as an aggregate of its own.
    private func scanPiece(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, _ i: Int, _ options: AggregateOptions,
        _ walker: BucketWalker, _ result: inout AggregateResult, _ row: (AggregateRow) -> Void
    ) throws(TSDBError) {
        var piece = plan
        (piece.lo, piece.hi) = (pieces.cuts[i], pieces.cuts[i + 1])
        var sweep = AggregateSweep(plan: piece, walker: walker, fill: options.fill, credits: nil)
        try scanPoints(piece, options: options, sweep: &sweep, result: &result, row: row)
        sweep.finish(row)
    }
}

extension BucketSpec {
    /// The nominal length of a bucket in seconds (months as 28 days), nil for one bucket.
    var shortestSeconds: Int64? {
        switch self {
        case .none: nil
        case .fixed(let seconds): seconds
        case .calendar(let unit):
            switch unit {
            case .minute: 60
            case .hour: 3600
            case .day: 86_400
            case .week: 604_800
            case .month: 28 * 86_400
            case .year: 365 * 86_400
            }
        }
    }
}
