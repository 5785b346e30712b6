extension Store {
    /// Whether to open `segment`'s slot region for the blocks from `first` on that a scan of
    /// `[lo, hi)` cannot answer from their summaries: when what reading their slots saves, against
    /// adding them up either side of their one bucket edge or decoding them, is more than opening
    /// the region and stepping over the slots of the blocks it does not read (``ReadingCost``).
    /// Five heavy years' Europe/Paris days opened all 61 regions to read 595 blocks from slots, 25.3M
    /// of their 52.9M instructions: each saved ~11K against adding it up either side, and a region
    /// cost ~200K to open and ~215K to step through (32.3M in all when none is opened).
    static func slotRegionPays(
        _ segment: SegmentReader, from first: Int, _ lo: Int64, _ hi: Int64, _ plan: AggregatePlan,
        _ cursor: BucketCursor
    ) -> Bool {
        guard plan.summariesServe, !plan.needsSpread, segment.blockCount > 0 else { return true }
        var buckets = cursor  // a copy: the scan's cursor stays where it is
        let regionBytes = Double(segment.slotRegion.rawLength)
        let opening = segment.slotRegion.codec == .none ? ReadingCost.openingRawByte : ReadingCost.openingByte
        let most = regionBytes * (opening + ReadingCost.steppingByte)
        var (saved, read, lastRead) = (0.0, 0, first)
        for b in first..<segment.blockCount {
            let s = segment.summaries[b]
            guard s.firstStart < hi else { break }
            guard s.lastStart >= lo, !s.liesInOneBucket(lo, hi, bucketEnd: { buckets.bucket(containing: $0).end })
            else { continue }
            let inside = s.firstStart >= lo && s.lastStart < hi
            guard inside || rangeEdgesOnSlotGrid(s, lo: lo, hi: hi) else { continue }
            let edge = oneEdge(in: s, lo, hi, &buckets)
            // Slots are far cheaper than decoding a block across more than one edge (hours), or one
            // whose values are not all whole numbers (which cannot be added up either side).
            if inside && edge == nil || SegmentReader.wholeNumbers(s) == nil { return true }
            guard ReadingCost.likelyHasSlots(s) else { continue }
            // A block the range cuts is decoded if its slots are not read.
            let saving =
                edge.map { ReadingCost.sides(s, edge: $0) - ReadingCost.slots(s, edge: $0) }
                ?? ReadingCost.decode(s) - ReadingCost.slots(s)
            guard saving > 0 else { continue }
            (saved, read, lastRead) = (saved + saving, read + 1, b)
            // Enough however many slots are stepped over: the rest need not be looked at.
            if saved > most { return true }
        }
        let stepped = Double(lastRead + 1 - read) / Double(segment.blockCount)
        return saved > regionBytes * (opening + stepped * ReadingCost.steppingByte)
    }
}

/// Instructions the ways of reading a block cost, estimated from callgrind profiles of the daily
/// heart rate: five heavy years (blocks of ~2,600 samples over ~14 hours, ~47 samples and ~11 bytes
/// a slot) and the year (blocks of ~1,000 samples a day, ~13 a slot where they have slots) in UTC,
/// Europe/Paris, Asia/Kathmandu and Lord Howe days. They decide whether a segment's slot region is
/// opened; once it is, each block chooses by ``Store/sidesCostLess(_:edge:)``, which chose better
/// block by block on the year's queries (these estimates there: +0.1–0.6% instructions).
enum ReadingCost {
    /// A slot summary read and added up, with its run, however many samples it sums up: the year's
    /// ~13,600 in Asia/Kathmandu days took 2.0M (~150 each, ~13 samples a slot), five heavy years'
    /// 153,191 in UTC days 21.8M (~142, ~47 samples a slot).
    static let slot = 150.0
    /// A byte of a compressed slot region decompressed, checked and copied on opening: 12.2M for 61
    /// heavy regions of ~33 KB.
    static let openingByte = 6.0
    /// A byte of an uncompressed region (the writer's usual choice, segment-v3 §6.1) checked and
    /// copied, with the stream made: 130K for the year's 102 KB.
    static let openingRawByte = 1.3
    /// A byte of slot region stepped over to reach a later block's.
    static let steppingByte = 1.5
    /// A sample decoded and added up (the columns the aggregate reads): 138K for 4 of the year's
    /// blocks in Lord Howe days.
    static let decodedSample = 30.0

    /// Reading block `s`'s slots: one a quarter hour of its span at most.
    static func slots(_ s: BlockSummary) -> Double { Double(span(s)) * slot }

    /// Reading block `s`'s slots for its totals either side of `edge` (``SlotSides``): the side
    /// with fewer slots added up; when that is the earlier, the later slots stepped over, or read
    /// for their extremes when the earlier side holds one of the block's (likelier the more slots it
    /// has, as in ``sides(_:edge:)``); when it is the later, the earlier ones read for their samples
    /// and extremes.
    static func slots(_ s: BlockSummary, edge: Int64) -> Double {
        let slots = Double(span(s))
        let before = Double(SlotSummary.number(edge) - SlotSummary.number(s.firstStart))
        let after = slots - before
        guard after >= before else { return 300 + before * slotSkimmed + after * slotAdded }
        let extremes = Swift.min(1, 2 * before / slots)
        return 300 + before * slotAdded + after * (extremes * slotSkimmed + (1 - extremes) * slotStepped)
    }

    /// A slot added up, one read for its samples and extremes alone, and one stepped over by
    /// counting the ends of its fields (``SlotSides``).
    static let slotAdded = 135.0
    static let slotSkimmed = 85.0
    static let slotStepped = 14.0

    /// Adding block `s` up either side of `edge`, its samples taken as evenly spread: ~2,500 to
    /// decompress and locate its columns, ~5 a sample (the run headers, the walk to the edge by sums
    /// of runs), ~10 for each of the fewer side's, ~4 for each before a later fewer side (their
    /// deltas are followed from the first), and a pass over the other side for its extremes when
    /// the fewer hold one of the block's (~14 a sample; likelier the more they are). Profiles with
    /// every block across an edge added up: the year's in UTC days 10.4K a block, Lord Howe 21.8K;
    /// five heavy years' in UTC days 37K.
    static func sides(_ s: BlockSummary, edge: Int64) -> Double {
        let n = Double(s.sampleCount)
        let before = Double(edge - s.firstStart)
        let earlier = n * before / Double(s.lastStart - s.firstStart)
        let fewer = Swift.min(earlier, n - earlier)
        let followed = earlier <= n - earlier ? 0 : earlier
        let extremes = (n - fewer) * extremesPass * Swift.min(1, 2 * fewer / n)
        return 2500 + n * 5 + fewer * 10 + followed * 4 + extremes
    }

    /// A sample of the side with more of them, passed over for its smallest and largest.
    static let extremesPass = 14.0

    static func decode(_ s: BlockSummary) -> Double { Double(s.sampleCount) * decodedSample }

    /// Writers give a block slots when it averages 12 samples or more an occupied slot
    /// (Formats/segment-v3.md §6.1): surely when it has that many for every slot of its span.
    static func likelyHasSlots(_ s: BlockSummary) -> Bool { s.sampleCount >= 12 * span(s) }

    private static func span(_ s: BlockSummary) -> Int {
        Int(SlotSummary.number(s.lastStart) - SlotSummary.number(s.firstStart) + 1)
    }
}
