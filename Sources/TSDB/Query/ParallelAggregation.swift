import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Long aggregates on two cores. The range is cut at bucket boundaries into pieces of about equal
/// samples, so each piece is a complete aggregate of its own buckets and nothing needs merging.
/// Both threads take the next piece in time order. The calling thread hands out rows in order:
/// a piece it takes with nothing earlier outstanding streams its rows at once; any other piece
/// (its own while the second thread is still on an earlier one, and every piece of the second
/// thread) holds its rows until the pieces before it are out, and they go out as soon as they are.
/// So held rows stay few (their memory is reused rather than faulted in anew) and writing
/// overlaps scanning. A second thread can start late (its core may be busy): the calling thread
/// then simply takes more pieces, and never waits for a thread that has taken none.
struct AggregatePieces: Sendable {
    /// Below this many samples per piece a second thread costs more than it saves.
    static let minimumSamples = 100_000
    /// The same for sums over intervals, whose samples are ranked, cut into the pieces that count
    /// and spread over buckets (~60 ns each on the year's daily steps, against ~2 for a point):
    /// ranges of twice this many are cut. The year's 27,215 steps in-process, medians of 41
    /// (quartiles): one piece 1.70 ms (1.64-1.75); pieces of 8,192 1.24 (1.20-1.51), of 4,096 1.73
    /// (1.28-2.01), as the second thread's pieces fault in their memory anew.
    static let minimumIntervalSamples = 8_192
    /// How many samples of intervals a piece takes once a range is cut (at least two pieces): each
    /// piece opens its segments and decodes the block at its cut again, and the pieces' memory is
    /// new to each. By pieces of 8,192 (four for the year's steps, sixteen for five heavy years')
    /// and of this many (two and four), `--timings`, medians of 15 in two alternating rounds: the
    /// year's daily steps 1.03-1.04 -> 0.97-0.99 ms, the heavy set's 2025 1.07-1.09 -> 0.93, its five
    /// years 3.71-3.72 -> 3.43-3.45 (3.56-3.58 in pieces of 16,384; 65,536 no quicker).
    static let intervalSamplesPerPiece = 32_768

    /// An even number of pieces (of three equal pieces, one thread would take two), at most
    /// ``maximumPieces``.
    static func even(_ count: Int) -> Int { min(maximumPieces, count + count % 2) }

    /// The pieces a range of `samples` samples of intervals is cut into, once it has enough to be
    /// cut (twice ``minimumIntervalSamples``): sums over intervals and sleep nights alike.
    static func intervalPieces(_ samples: Int) -> Int { even(max(2, samples / intervalSamplesPerPiece)) }
    /// Below this many bucket edges inside blocks, a scan that takes whole blocks from their
    /// summaries is quicker on one thread, whatever the samples: a year of daily heart rate in UTC
    /// (~365 edges, each a block added up either side) took 0.70 ms in-process on one thread against
    /// 1.26 on two, and the heavy set's 2025 0.77 against 1.31; its five years (1,826 edges) 3.36
    /// against 3.20, in Asia/Kathmandu 3.49 against 2.95 (medians of 15 alternating runs, `--timings`).
    /// As a whole process the year's UTC days took 1.4 instead of 1.6 ms and 5.13 M instead of 5.35 M
    /// instructions; hours (~8,700 edges a year) still take two threads.
    static let minimumEdges = 1_000
    static let maximumPieces = 16
    /// The most rows a piece may make (about 2 MB of CSV): long ranges of short buckets are cut
    /// into more pieces, so the rows waiting to go out stay few (``InOrderPieces/maximumWaiting``).
    static let maximumPieceRows = 16_000

    /// Piece `i` is `[cuts[i], cuts[i + 1])`.
    let cuts: [Int64]
    var count: Int { cuts.count - 1 }

    /// The most rows any piece can make with `bucket` (nil without a nominal bucket length).
    func mostRows(bucket: BucketSpec) -> Int? {
        guard let width = bucket.shortestSeconds else { return nil }
        let longest = zip(cuts, cuts.dropFirst()).map { $1 - $0 }.max() ?? 0
        return Int(min(longest / (width * 1_000_000) + 1, Int64(Self.maximumPieceRows)))
    }

    /// What a piece holds until the pieces before it are out, and what scanning it counted.
    struct Held: Sendable {
        enum Output: Sendable {
            case rows([AggregateRow])
            /// The rows formatted by the caller's ``AggregateRowFormatter``.
            case bytes([UInt8])
            /// The rows as columns (``Store/aggregateColumns(_:from:to:options:)``).
            case columns(ColumnChunk)
        }
        var output: Output
        var counts: AggregateResult
    }
}

/// Runs pieces `0..<count` on the calling thread and one other, both taking the next piece in
/// order, and hands out their results in order on the calling thread. A piece the calling thread
/// takes while nothing earlier is outstanding is `stream`ed (its output goes straight out);
/// every other piece is `hold`ed and its result handed to `handOut` once the pieces before it
/// are out. The calling thread waits only for a piece the other thread is on; after a failure no
/// piece is started, and the first error is thrown once the other thread is idle.
enum InOrderPieces {
    /// The most pieces the other thread may have finished that are not out yet: it takes no more
    /// until one goes out, so a calling thread slowed by its reader (a pager) holds memory back.
    static let maximumWaiting = 4

    /// What the two threads share.
    struct Progress<Held> {
        var next = 0
        /// Pieces the other thread has taken and not finished.
        var running = 0
        /// Finished pieces not yet out, by number, and whether the other thread made each. An array,
        /// not a dictionary: a dictionary's storage is instantiated at run time with a check that
        /// its key is Hashable, a search through every conformance in the program.
        private var held: [(output: Held, byOther: Bool)?]
        /// Pieces of the other thread in `held`.
        private(set) var waiting = 0
        var failure: TSDBError?

        init(count: Int) { held = Array(repeating: nil, count: count) }

        mutating func keep(_ piece: Int, _ output: Held, byOther: Bool) {
            held[piece] = (output, byOther)
            if byOther { waiting += 1 }
        }

        /// Piece `piece`, when it is finished and held.
        mutating func takeOut(_ piece: Int) -> (output: Held, byOther: Bool)? {
            guard piece < held.count, let kept = held[piece] else { return nil }
            held[piece] = nil
            if kept.byOther { waiting -= 1 }
            return kept
        }
    }

    /// What the other thread does next.
    enum Step {
        case piece(Int)
        case wait, stop
    }

    static func run<Held: Sendable>(
        count: Int, stream: (Int) throws(TSDBError) -> Void,
        hold: @escaping @Sendable (Int) throws(TSDBError) -> Held, handOut: (inout Held) -> Void
    ) throws(TSDBError) {
        let progress = Locked(Progress<Held>(count: count))
        let finished = DispatchSemaphore(value: 0)
        let handedOut = DispatchSemaphore(value: 0)
        // Wakes the other thread if it waits for room when this one stops (after a failure).
        defer { handedOut.signal() }
        // The first piece is taken here before the other thread starts, so it always streams.
        var mine = progress.withLock { p -> Int? in
            guard count > 0 else { return nil }
            p.next = 1
            return 0
        }
        let second: @Sendable () -> Void = {
            while true {
                let step = progress.withLock { p -> Step in
                    guard p.failure == nil, p.next < count else { return .stop }
                    guard p.waiting < maximumWaiting else { return .wait }
                    p.next += 1
                    p.running += 1
                    return .piece(p.next - 1)
                }
                guard case .piece(let i) = step else {
                    if case .stop = step { return }
                    // Until a piece goes out (one is often about to).
                    wait(for: handedOut, lookingFor: .microseconds(200))
                    continue
                }
                // Not a Result: its type is instantiated at run time with a search through every
                // conformance in the program for TSDBError's Error, the only one left on this path.
                var kept: Held?
                var failure: TSDBError?
                do throws(TSDBError) { kept = try hold(i) } catch { failure = error }
                progress.withLock { p in
                    p.running -= 1
                    if let kept { p.keep(i, kept, byOther: true) }
                    if let failure { p.failure = p.failure ?? failure }
                }
                finished.signal()
            }
        }
        SecondThread.run(second)
        var out = 0
        func handOutReady() {
            while var next = progress.withLock({ $0.takeOut(out) }) {
                if next.byOther { handedOut.signal() }
                // In place: the only reference, so a buffer in it can be reused.
                handOut(&next.output)
                out += 1
            }
        }
        func takeMine() -> Int? {
            progress.withLock { p -> Int? in
                guard p.failure == nil, p.next < count else { return nil }
                p.next += 1
                return p.next - 1
            }
        }
        do throws(TSDBError) {
            while let i = mine {
                if i == out {
                    try stream(i)
                    out += 1
                } else {
                    let kept = try hold(i)
                    progress.withLock { $0.keep(i, kept, byOther: false) }
                }
                handOutReady()
                mine = takeMine()
            }
        } catch {
            progress.withLock { $0.failure = $0.failure ?? error }
        }
        // What is left is on the other thread: wait only while it is still on a piece.
        while true {
            let (failure, running) = progress.withLock { ($0.failure, $0.running) }
            if let failure {
                if running == 0 { throw failure }
            } else {
                handOutReady()
                if out == count { return }
            }
            // The other thread's last piece is often nearly done.
            wait(for: finished, lookingFor: .milliseconds(1))
        }
    }

    /// Waits for `semaphore`, looking for it for `looking` before sleeping. Not longer: with the
    /// other core busy, looking took the time the other thread needed to finish.
    private static func wait(for semaphore: DispatchSemaphore, lookingFor looking: DispatchTimeInterval) {
        let deadline = DispatchTime.now() + looking
        while DispatchTime.now() < deadline {
            if semaphore.wait(timeout: .now()) == .success { return }
            sched_yield()
        }
        semaphore.wait()
    }
}

/// How a piece scanned off the calling thread keeps its rows until the pieces before it are out.
enum PieceHolding {
    case rows
    /// Formatted by copies of this formatter: from chunks with the columns of `columns`, when
    /// given, else row by row.
    case bytes(any AggregateRowFormatter, columns: ColumnChunk?)
    /// In chunks with the columns of this one.
    case columns(ColumnChunk)
}

extension Store {
    /// The samples of `plan`'s type in blocks that a bucket edge or an end of the range falls inside
    /// (the blocks a scan splits, from their slot summaries or by decoding them), and the bucket
    /// edges inside blocks (each counted where it falls between a block's first and last start, up
    /// to ``AggregatePieces/minimumEdges``): what a scan that takes whole blocks from their summaries
    /// works on, one edge at a time.
    func splitBlocks(_ plan: AggregatePlan, walker: BucketWalker) throws(TSDBError) -> (samples: Int, edges: Int) {
        var buckets = BucketCursor(walker)
        var (samples, edges) = (0, 0)
        for reader in try segments(of: plan.type, from: plan.lo, to: plan.hi) {
            for block in reader.summaries where block.lastStart >= plan.lo && block.firstStart < plan.hi {
                var bucket = buckets.bucket(containing: max(block.firstStart, plan.lo))
                let whole = block.liesInOneBucket(plan.lo, plan.hi) { _ in bucket.end }
                guard !whole else { continue }
                samples += block.sampleCount
                let last = min(block.lastStart, plan.hi - 1)
                while edges < AggregatePieces.minimumEdges && bucket.end <= last {
                    edges += 1
                    bucket = buckets.bucket(after: bucket)
                }
            }
        }
        return (samples, edges)
    }

    /// The pieces to scan on two cores, or nil when the range is too small or cannot be cut (one
    /// bucket). Pieces hold about equal samples, and none spans more than
    /// ``AggregatePieces/maximumPieceRows`` buckets.
    func parallelPieces(_ plan: AggregatePlan, options: AggregateOptions, walker: BucketWalker) -> AggregatePieces? {
        guard options.threads > 1, let width = options.bucket.shortestSeconds else { return nil }
        // Samples per segment, taken as spread evenly over its span (good enough for cutting).
        let parts = segmentEntries(of: plan.type).filter { $0.lastStart >= plan.lo && $0.firstStart < plan.hi }
            .sorted { $0.firstStart < $1.firstStart }
        let total = parts.reduce(0) { $0 + Int($1.sampleCount) }
        let enough =
            total / (plan.intervals ? AggregatePieces.minimumIntervalSamples : AggregatePieces.minimumSamples)
        guard enough >= 2 else { return nil }
        // When whole blocks are answered from their summaries, only blocks that a bucket edge
        // splits cost anything, about once per edge: a year of days in the zone the blocks end in
        // (the wearer's midnight), or in any other (one edge a block), is quicker on one thread.
        // The range's bucket edges bound those inside blocks (a bucket is at least half its
        // nominal length): with too few, no block need be looked at (a year's days: 2.21 -> 2.11 M
        // instructions in the wearer's zone, 4.35 -> 4.25 M in UTC).
        let span = plan.hi.subtractingReportingOverflow(plan.lo)
        let edgesAtMost = span.overflow ? Int64.max : span.partialValue / (width * 1_000_000) * 2 + 2
        let summariesServe = plan.summariesServe && !plan.intervals
        if summariesServe && edgesAtMost < AggregatePieces.minimumEdges { return nil }
        if summariesServe, let split = try? splitBlocks(plan, walker: walker),
            split.samples < 2 * AggregatePieces.minimumSamples || split.edges < AggregatePieces.minimumEdges
        {
            return nil
        }
        let pieces = plan.intervals ? AggregatePieces.intervalPieces(total) : AggregatePieces.even(enough)
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
        guard cuts.count >= 3 else { return nil }
        // A bucket is at least half its nominal length (DST changes, Lord Howe's half hours).
        return AggregatePieces(
            cuts: Self.bounded(cuts, span: width * 500_000 * Int64(AggregatePieces.maximumPieceRows), walker))
    }

    /// `cuts` with more cuts, at bucket starts, wherever two are more than `span` apart: such a
    /// stretch is cut into (nearly) the fewest parts of about equal length. Cutting every `span`
    /// from its start left a short part after each long one, and the cores less evenly busy: five
    /// heavy years of 15-minute buckets took 12.3 ms that way, 11.4 ms this way.
    static func bounded(_ cuts: [Int64], span: Int64, _ walker: BucketWalker) -> [Int64] {
        var out = [cuts[0]]
        // Parts a little shorter than `span`, so one snapped to a bucket start stays within it.
        let part = span - span / 16
        for end in cuts.dropFirst() {
            let start = out.last!
            let parts = end - start > span ? (end - start + part - 1) / part : 1
            for k in 1..<parts {
                let bucket = walker.bucket(containing: start + (end - start) / parts * k)
                let cut = bucket.start > out.last! ? bucket.start : bucket.end
                if cut < end { out.append(cut) }
            }
            // Buckets longer than `span / 16` (never for short buckets): what is still too long.
            while end - out.last! > span {
                let bucket = walker.bucket(containing: out.last! + span)
                let cut = bucket.start > out.last! ? bucket.start : bucket.end
                guard cut < end else { break }
                out.append(cut)
            }
            out.append(end)
        }
        return out
    }

    /// Scans `pieces` here and on another thread (``InOrderPieces``), handing out their rows in
    /// order: streamed to `row`, or held as `holding` says (a formatter's bytes or columns, handed
    /// to `held`; rows, handed to `row`).
    func scanInPieces(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, options: AggregateOptions, walker: BucketWalker,
        result: inout AggregateResult, row: (AggregateRow) -> Void, holding: PieceHolding,
        held: (AggregatePieces.Held.Output) -> Void
    ) throws(TSDBError) {
        // What a held piece counts starts from the result's header with no blocks counted.
        let template = {
            var counts = result
            (counts.blocksDecoded, counts.blocksFromSummaries, counts.blocksFromSlots) = (0, 0, 0)
            (counts.blocksSplit, counts.blocksAddedUp) = (0, 0)
            return counts
        }()
        // Buffers and chunks of rows already handed out, reused: fresh memory faults in page by
        // page (page faults were 14% of an hourly aggregate's profile, half of them on held rows).
        let spare = Pool<[UInt8]>()
        let chunks = Pool<ColumnChunk>()
        defer { while let chunk = chunks.take() { keep(chunk) } }
        // Formatters of pieces already done, reused: what they remember (fractions' digits, the
        // day a timestamp is on) carries over to the next piece instead of starting empty.
        let formatters = Pool<any AggregateRowFormatter>()
        let mostRows = pieces.mostRows(bucket: options.bucket)
        try InOrderPieces.run(
            count: pieces.count,
            stream: { (i) throws(TSDBError) in
                switch holding {
                case .columns(let shape):
                    // Into a chunk too, handed out at once: no row is made (``AggregateSweep/columns``).
                    let chunk = chunks.take() ?? self.chunk(like: shape, capacity: mostRows ?? 1024)
                    try scanPiece(plan, pieces, i, options, walker, &result, into: chunk, row)
                    held(.columns(chunk))
                    chunk.removeAll()
                    chunks.give(chunk)
                case .bytes(let formatter, let shape?):
                    // Formatted from a chunk as held pieces are, and handed out at once.
                    var format = formatters.take() ?? formatter
                    defer { formatters.give(format) }
                    var bytes = spare.take() ?? []
                    let chunk = chunks.take() ?? self.chunk(like: shape, capacity: mostRows ?? 1024)
                    defer { chunks.give(chunk) }
                    try scanFormatted(plan, pieces, i, options, walker, &format, chunk, into: &bytes, &result, row)
                    held(.bytes(bytes))
                    bytes.removeAll(keepingCapacity: true)
                    spare.give(bytes)
                case .rows, .bytes:
                    try scanPiece(plan, pieces, i, options, walker, &result, row)
                }
            },
            hold: { (i) throws(TSDBError) in
                switch holding {
                case .rows:
                    return try self.scanHeldRows(plan, pieces, i, options, walker, counts: template)
                case .bytes(let formatter, let shape):
                    var format = formatters.take() ?? formatter
                    defer { formatters.give(format) }
                    let buffer = spare.take() ?? []
                    guard let shape else {
                        return try self.scanHeld(
                            plan, pieces, i, options, walker, &format, into: buffer, counts: template)
                    }
                    let chunk = chunks.take() ?? self.chunk(like: shape, capacity: mostRows ?? 1024)
                    defer { chunks.give(chunk) }
                    var (bytes, counts) = (buffer, template)
                    try self.scanFormatted(
                        plan, pieces, i, options, walker, &format, chunk, into: &bytes, &counts, { _ in })
                    return AggregatePieces.Held(output: .bytes(bytes), counts: counts)
                case .columns(let shape):
                    let chunk = chunks.take() ?? self.chunk(like: shape, capacity: mostRows ?? 1024)
                    return try self.scanHeld(plan, pieces, i, options, walker, into: chunk, counts: template)
                }
            },
            handOut: { kept in
                switch kept.output {
                case .rows(let rows): for r in rows { row(r) }
                case .bytes(var bytes):
                    kept.output = .rows([])
                    held(.bytes(bytes))
                    bytes.removeAll(keepingCapacity: true)
                    spare.give(bytes)
                case .columns(let chunk):
                    held(.columns(chunk))
                    chunk.removeAll()
                    chunks.give(chunk)
                }
                result.blocksDecoded += kept.counts.blocksDecoded
                result.blocksFromSummaries += kept.counts.blocksFromSummaries
                result.blocksFromSlots += kept.counts.blocksFromSlots
                result.blocksSplit += kept.counts.blocksSplit
                result.blocksAddedUp += kept.counts.blocksAddedUp
            })
    }

    /// Scans piece `i`, holding its rows in `chunk` (empty).
    private func scanHeld(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, _ i: Int, _ options: AggregateOptions,
        _ walker: BucketWalker, into chunk: ColumnChunk, counts: AggregateResult
    ) throws(TSDBError) -> AggregatePieces.Held {
        var counts = counts
        try scanPiece(plan, pieces, i, options, walker, &counts, into: chunk) { _ in }
        return AggregatePieces.Held(output: .columns(chunk), counts: counts)
    }

    /// Scans piece `i` into `chunk` (empty, and left empty) and appends its rows to `bytes` formatted
    /// by `format` from the chunk's columns (``AggregateRowColumns``): no row is made.
    private func scanFormatted<Formatter: AggregateRowFormatter>(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, _ i: Int, _ options: AggregateOptions,
        _ walker: BucketWalker, _ format: inout Formatter, _ chunk: ColumnChunk, into bytes: inout [UInt8],
        _ counts: inout AggregateResult, _ row: (AggregateRow) -> Void
    ) throws(TSDBError) {
        defer { chunk.removeAll() }
        try scanPiece(plan, pieces, i, options, walker, &counts, into: chunk, row)
        chunk.withColumns { format.append($0, to: &bytes) }
    }

    /// Scans piece `i`, holding its rows.
    private func scanHeldRows(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, _ i: Int, _ options: AggregateOptions,
        _ walker: BucketWalker, counts: AggregateResult
    ) throws(TSDBError) -> AggregatePieces.Held {
        var counts = counts
        var rows: [AggregateRow] = []
        try scanPiece(plan, pieces, i, options, walker, &counts) { rows.append($0) }
        return AggregatePieces.Held(output: .rows(rows), counts: counts)
    }

    /// Scans piece `i`, holding its rows formatted with `format` into `bytes` (empty). Generic, so
    /// each row is one call on the formatter rather than on a boxed existential.
    private func scanHeld<Formatter: AggregateRowFormatter>(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, _ i: Int, _ options: AggregateOptions,
        _ walker: BucketWalker, _ format: inout Formatter, into bytes: consuming [UInt8], counts: AggregateResult
    ) throws(TSDBError) -> AggregatePieces.Held {
        var counts = counts
        // Room for any piece's rows at once: growing by doubling copied them twice over, and one
        // size for all lets a buffer that held one piece take the next without growing.
        if let rows = pieces.mostRows(bucket: options.bucket) { bytes.reserveCapacity(rows * format.maximumRowLength) }
        try scanPiece(plan, pieces, i, options, walker, &counts) { format.append($0, to: &bytes) }
        return AggregatePieces.Held(output: .bytes(bytes), counts: counts)
    }

    /// Scans piece `i` as an aggregate of its own, its rows laid out in `chunk` when given.
    private func scanPiece(
        _ plan: AggregatePlan, _ pieces: AggregatePieces, _ i: Int, _ options: AggregateOptions,
        _ walker: BucketWalker, _ result: inout AggregateResult, into chunk: ColumnChunk? = nil,
        _ row: (AggregateRow) -> Void
    ) throws(TSDBError) {
        var piece = plan
        (piece.lo, piece.hi) = (pieces.cuts[i], pieces.cuts[i + 1])
        let credits = plan.intervals ? try pieceCredits(piece, options: options, rangeEnd: plan.hi) : nil
        var sweep = AggregateSweep(plan: piece, walker: walker, fill: options.fill, credits: credits)
        guard let chunk else { return try sweepPiece(piece, options, &sweep, &result, row) }
        try chunk.lend { (rows) throws(TSDBError) in
            sweep.columns = rows
            // Taken back even when the scan fails: the sweep's rows may have grown into new room.
            defer { rows = sweep.columns! }
            try sweepPiece(piece, options, &sweep, &result, row)
        }
    }

    /// Runs `sweep` over `piece` (an aggregate's range, or a piece of it) to its last row; a batch
    /// of interval samples that could not be read ends its rows before the bucket it would have
    /// credited, and is thrown.
    func sweepPiece(
        _ piece: AggregatePlan, _ options: AggregateOptions, _ sweep: inout AggregateSweep,
        _ result: inout AggregateResult, _ row: (AggregateRow) -> Void
    ) throws(TSDBError) {
        if piece.pointStatistics { try scanPoints(piece, options: options, sweep: &sweep, result: &result, row: row) }
        sweep.finish(row)
        guard let credits = sweep.credits else { return }
        if let failure = credits.failure { throw failure }
        result.blocksDecoded += credits.blocksDecoded
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
