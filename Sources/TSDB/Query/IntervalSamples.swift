/// The interval samples of a type reaching into `[lo, hi)`, with their ranks (``SourceRanking``),
/// read a block at a time in the store's order (by start: a type's segments are months, each
/// sorted) and handed out in batches, so memory holds a batch and not the range.
///
/// Batch `k` answers for the window `[cut(k-1), cut(k))`: it holds the samples starting there,
/// and with `carry` also the samples of earlier batches still covering its start. Which sample
/// counts at an instant depends only on the samples covering it, so the pieces that count
/// (``SourceRanking/countedPieces(_:)``) of a batch, cut to its window, are the whole range's
/// there (``CountedPieceStream`` joins a piece the cut splits). `options.source` filters the
/// samples; category samples need an integer value.
struct IntervalSampleBatches {
    /// Samples, and the window `[from, to)` they answer for (`Int64.min` and `.max` where open).
    /// `settled`: every sample starting before it has all its pieces in this batch or earlier
    /// ones (the window's end, or the start of the first sample carried on).
    struct Batch {
        var samples: [IntervalSample]
        var from: Int64, to: Int64
        var settled: Int64
    }

    private let readers: [SegmentReader]
    private let kind: TypeCatalog.Kind
    private let lo: Int64, hi: Int64
    private let ranking: SourceRanking
    /// A batch ends at the first new start once it holds this many samples of its own, or twice
    /// as many as it carries if that is more: each carried sample is ranked and cut again in
    /// every batch it reaches, so long samples covering many short ones would cost more than
    /// the batches' own samples.
    let batchSize: Int
    private var ownLimit = 0
    /// Samples covering a batch's end go on into the next.
    let carry: Bool
    /// The blocks reaching into the range hold too few samples for a batch to end: one is all.
    let readsOneBatch: Bool
    private var pairs: SourcePairs
    private var ranks: [Int32] = []
    private var keys: SegmentSourceKeys?
    private let block = DecodedBlock()
    /// Where reading goes on: the segment, the block decoded into ``block`` (nil: none yet) or
    /// the next to look at, and the block's next sample.
    private var segment = 0, decoded: Int?, nextBlock = 0, nextSample = 0
    private var batch: [IntervalSample] = []
    /// The start of the window of the next batch, and the samples it carries.
    private var from = Int64.min
    private var carried: [IntervalSample] = []
    private(set) var blocksDecoded = 0

    /// ~20 KB of samples (~40 bytes each), reused batch after batch. Batches of 4,096 (160 KB, and
    /// their pieces as much again) were mapped anew each time, past malloc's threshold: the year's
    /// daily steps took 2.18 ms in-process and 558 page faults that way, 1.62 ms and 268 this way
    /// (512; 256 and 1,024 were no faster).
    static let defaultBatchSize = 512

    init(
        _ store: Store, type: String, kind: TypeCatalog.Kind, from lo: Int64, to hi: Int64,
        options: AggregateOptions, batchSize: Int = Self.defaultBatchSize, carry: Bool = true
    ) throws(TSDBError) {
        readers = try store.segments(of: type, from: lo, to: hi, overlapping: true)
        (self.kind, self.lo, self.hi, self.batchSize, self.carry) = (kind, lo, hi, max(1, batchSize), carry)
        ranking = SourceRanking(priority: options.priority, type: type)
        pairs = SourcePairs(filter: options.source?.lowercased())
        let reaching = readers.reduce(0) { total, reader in
            total + reader.summaries.lazy.filter { Self.reaches($0, lo, hi) }.map(\.sampleCount).reduce(0, +)
        }
        readsOneBatch = reaching <= self.batchSize
        batch.reserveCapacity(min(self.batchSize, reaching))
    }

    /// Whether a block holds samples reaching into the range.
    private static func reaches(_ s: BlockSummary, _ lo: Int64, _ hi: Int64) -> Bool {
        (s.maxEnd > lo || s.firstStart >= lo) && s.firstStart < hi
    }

    /// The next batch, its samples in the store's order (the carried ones first), ranked; nil
    /// when all are read.
    mutating func next() throws(TSDBError) -> Batch? {
        batch.removeAll(keepingCapacity: true)
        batch.append(contentsOf: carried)
        ownLimit = max(batchSize, 2 * carried.count)
        var own = 0
        while segment < readers.count {
            let reader = readers[segment]
            if decoded == nil { try decodeNextBlock(of: reader) }
            guard let b = decoded else {
                (segment, nextBlock, keys) = (segment + 1, 0, nil)
                continue
            }
            var segmentKeys = keys.take() ?? SegmentSourceKeys(reader)
            let cutAt = add(from: reader, keys: &segmentKeys, own: &own)
            keys = segmentKeys
            if let cutAt { return cut(at: cutAt) }
            (decoded, nextBlock, nextSample) = (nil, b + 1, 0)
        }
        guard !batch.isEmpty else { return nil }
        carried.removeAll()
        return Batch(samples: ranked(), from: from, to: .max, settled: .max)
    }

    /// Adds the decoded block's samples from ``nextSample`` on to the batch, `own` counting them;
    /// the start to cut the batch at (``nextSample`` is then the sample there), or nil at the
    /// block's end.
    private mutating func add(from reader: SegmentReader, keys: inout SegmentSourceKeys, own: inout Int) -> Int64? {
        let (starts, ends, tags, mantissas) = (block.starts, block.ends, block.valueTags, block.mantissas)
        let (sources, devices) = (block.sources, block.devices)
        let (kind, lo, hi, ownLimit, count) = (kind, lo, hi, ownLimit, block.count)
        var lastStart = batch.last?.start ?? .min
        let first = nextSample
        var cut: (index: Int, start: Int64)?
        // Appended into room made for the block's samples left, not one `Array.append` at a time
        // (a uniqueness and capacity check each: a fifth of this loop for the year's daily steps).
        var samples = batch
        batch = []
        defer { batch = samples }
        Room.append(to: &samples, atMost: count - first) { room in
            for i in first..<count {
                guard (ends[i] > lo || starts[i] >= lo) && starts[i] < hi else { continue }
                let k = keys.key(Int(sources[i]), Int(devices[i]), pairs: &pairs)
                guard k >= 0 else { continue }
                let tag = UInt8(truncatingIfNeeded: tags[i])
                let amount: Double
                if kind == .category {
                    guard tag == ValueTag.decimalBase else { continue }
                    amount = Double(mantissas[i])
                } else if tag == ValueTag.decimalBase {
                    amount = Double(mantissas[i])
                } else if tag > ValueTag.decimalBase {
                    amount = Double(mantissas[i]) / ExactDecimal.powersOfTen[Int(tag - ValueTag.decimalBase)]
                } else {
                    guard let v = block.value(at: i, in: reader) else { continue }
                    amount = v
                }
                // Samples starting together stay together: a window starts where they do.
                if own >= ownLimit && starts[i] > lastStart {
                    cut = (i, starts[i])
                    return
                }
                room.append(IntervalSample(start: starts[i], end: ends[i], amount: amount, sourceKey: k))
                lastStart = starts[i]
                own += 1
            }
        }
        guard let cut else { return nil }
        nextSample = cut.index
        return cut.start
    }

    /// The batch read so far, ending its window at `end`; the samples still covering `end` are
    /// carried into the next.
    private mutating func cut(at end: Int64) -> Batch {
        carried.removeAll(keepingCapacity: true)
        if carry { for s in batch where s.end > end { carried.append(s) } }
        defer { from = end }
        let settled = carried.lazy.map(\.start).min() ?? end
        return Batch(samples: ranked(), from: from, to: end, settled: min(settled, end))
    }

    /// Decodes the next block of `reader` reaching into the range into ``block``, if there is one.
    private mutating func decodeNextBlock(of reader: SegmentReader) throws(TSDBError) {
        while nextBlock < reader.blockCount && !Self.reaches(reader.summaries[nextBlock], lo, hi) { nextBlock += 1 }
        guard nextBlock < reader.blockCount else { return }
        try reader.decode(block: nextBlock, into: block, columns: ColumnSet.values.union([.ends, .sources]))
        blocksDecoded += 1
        (decoded, nextSample) = (nextBlock, 0)
    }

    /// The batch with its samples' ranks. Pairs are ranked among all met so far: their order
    /// (priority entry, source, device) is total, so a batch's ranks order its samples as ranks
    /// among the range's pairs would.
    private mutating func ranked() -> [IntervalSample] {
        if ranks.count != pairs.pairs.count { ranks = ranking.ranks(of: pairs.pairs) }
        let (category, ranking) = (kind == .category, ranking)
        ranks.withUnsafeBufferPointer { ranks in
            batch.withUnsafeMutableBufferPointer { batch in
                for i in batch.indices {
                    batch[i].rank.source = ranks[Int(batch[i].sourceKey)]
                    if category { batch[i].rank.value = ranking.valueRank(Int64(batch[i].amount)) }
                }
            }
        }
        return batch
    }
}

/// The counted pieces of a type's interval samples, a batch at a time in time order
/// (``IntervalSampleBatches``): de-duplicated (``SourceRanking/countedPieces(_:)``, each batch's
/// cut to its window), or every sample whole by start. The pieces are the whole range's, in the
/// same order: a piece a window's end splits is joined again, so a batch's last piece (and the
/// points lying in it, which follow it) waits for the next batch.
struct CountedPieceStream {
    private var samples: IntervalSampleBatches
    private var first: IntervalSampleBatches.Batch?
    let deduplicate: Bool
    /// The last batch's piece reaching its window's end, and the pieces after it.
    private var held: [CountedPiece] = []
    /// The pieces to hand out next, behind the held ones handed out before them, and what they
    /// settle.
    private var ready: (pieces: [CountedPiece], settled: Int64)?
    /// Every sample starting before this has had all its pieces handed out.
    private(set) var settled = Int64.min
    var blocksDecoded: Int { samples.blocksDecoded }

    /// `first`: the batch already read from `samples`, if any.
    init(_ samples: IntervalSampleBatches, first: IntervalSampleBatches.Batch?, deduplicate: Bool) {
        precondition(samples.carry == deduplicate, "de-duplicated pieces need the samples covering a window's start")
        (self.samples, self.first, self.deduplicate) = (samples, first, deduplicate)
    }

    /// The next pieces, in (start, end) order; nil when all are handed out.
    mutating func next() throws(TSDBError) -> [CountedPiece]? {
        if let ready {
            self.ready = nil
            settled = ready.settled
            return ready.pieces
        }
        let batch: IntervalSampleBatches.Batch
        if let first {
            batch = first
            self.first = nil
        } else if let read = try samples.next() {
            batch = read
        } else {
            settled = .max
            guard !held.isEmpty else { return nil }
            defer { held = [] }
            return held
        }
        guard deduplicate else {
            settled = batch.settled
            return batch.samples.sorted { $0.start < $1.start }.map { CountedPiece($0) }
        }
        var pieces = SourceRanking.countedPieces(batch.samples)
        Self.cut(&pieces, to: batch.from, batch.to)
        if let open = held.first, open.end == batch.from, open.end > open.start,
            let k = pieces.prefix(while: { $0.start == batch.from }).firstIndex(where: { $0.end > $0.start }),
            Self.sameSample(pieces[k], open)
        {
            held[0].end = pieces[k].end
            pieces.remove(at: k)
            // Reaching this window's end too, it waits on, with the points lying in it.
            if held[0].end == batch.to && batch.to != .max {
                held += pieces
                settled = min(batch.settled, held[0].sampleStart)
                return []
            }
        }
        let before = held
        held.removeAll()
        // Interval pieces do not overlap: the last of them is the one that may reach the end.
        if batch.to != .max, let last = pieces.lastIndex(where: { $0.end > $0.start }), pieces[last].end == batch.to {
            held = Array(pieces[last...])
            pieces.removeSubrange(last...)
        }
        // Held pieces are of samples carried on or lying in one (points): none starts earlier.
        let batchSettled = min(batch.settled, held.first?.sampleStart ?? .max)
        // The pieces held from the batch before come first, on their own (not copied in front).
        guard !before.isEmpty else {
            settled = batchSettled
            return pieces
        }
        ready = (pieces, batchSettled)
        return before
    }

    /// Whether two pieces are of one sample. Two samples alike in these never both count next to
    /// each other (the one ranked first counts wherever either does), and would count alike.
    private static func sameSample(_ a: CountedPiece, _ b: CountedPiece) -> Bool {
        (a.sampleStart, a.sampleEnd, a.amount) == (b.sampleStart, b.sampleEnd, b.amount)
    }

    /// Cuts `pieces` (in order) to `[from, to)`, in place and in order. At most one interval
    /// piece holds each end; the one cut to start at `from` goes after the points there. Pieces
    /// are in (start, end) order and intervals do not overlap, so only the pieces starting before
    /// `from` (carried in) and at or after `to` change: the ones between are not touched (a pass
    /// rewriting every piece was 0.93 M of the year's daily steps' 15.8 M instructions).
    private static func cut(_ pieces: inout [CountedPiece], to from: Int64, _ to: Int64) {
        guard from != .min || to != .max else { return }
        var end = pieces.count
        while end > 0 && pieces[end - 1].start >= to { end -= 1 }
        // The last interval starting before `to` is the only one that may reach past it.
        var last = end - 1
        while last >= 0 && pieces[last].start == pieces[last].end { last -= 1 }
        if last >= 0 && pieces[last].end > to { pieces[last].end = to }
        var first = 0
        while first < end && pieces[first].start < from { first += 1 }
        // Of those starting before `from`, the last interval is the only one that may reach past it.
        var crossing = first - 1
        while crossing >= 0 && pieces[crossing].start == pieces[crossing].end { crossing -= 1 }
        guard crossing >= 0 && pieces[crossing].end > from else {
            pieces.removeSubrange(end...)
            pieces.removeSubrange(..<first)
            return
        }
        var cut = pieces[crossing]
        cut.start = from
        var i = first - 1
        pieces[i] = cut
        while i + 1 < end && pieces[i + 1].start == from && pieces[i + 1].end == from {
            pieces.swapAt(i, i + 1)
            i += 1
        }
        pieces.removeSubrange(end...)
        pieces.removeSubrange(..<(first - 1))
    }
}

extension Store {
    /// The category values of `type`'s samples reaching into `[lo, hi)` that `options` keeps.
    func categoryValues(
        of type: String, from lo: Int64, to hi: Int64, options: AggregateOptions
    ) throws(TSDBError) -> [Int64] {
        var batches = try IntervalSampleBatches(
            self, type: type, kind: .category, from: lo, to: hi, options: options, carry: false)
        var values = Set<Int64>()
        while let batch = try batches.next() { for s in batch.samples { values.insert(Int64(s.amount)) } }
        return values.sorted()
    }
}
