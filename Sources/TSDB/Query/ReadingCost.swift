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
        let most = regionBytes * (ReadingCost.openingByte + ReadingCost.steppingByte)
        var (saved, read, lastRead) = (0.0, 0, first)
        for b in first..<segment.blockCount {
            let s = segment.summaries[b]
            guard s.firstStart < hi else { break }
            guard s.lastStart >= lo, !s.liesInOneBucket(lo, hi, bucketEnd: { buckets.bucket(containing: $0).end })
            else { continue }
            let inside = s.firstStart >= lo && s.lastStart < hi
            let edge = oneEdge(in: s, lo, hi, &buckets)
            // Slots are far cheaper than decoding a block across more than one edge (hours), or one
            // whose values are not all whole numbers (which cannot be added up either side).
            if inside && edge == nil || SegmentReader.wholeNumbers(s) == nil { return true }
            guard ReadingCost.likelyHasSlots(s) else { continue }
            // A block the range cuts is decoded if its slots are not read.
            let saving = (edge.map { ReadingCost.sides(s, edge: $0) } ?? ReadingCost.decode(s)) - ReadingCost.slots(s)
            guard saving > 0 else { continue }
            (saved, read, lastRead) = (saved + saving, read + 1, b)
            // Enough however many slots are stepped over: the rest need not be looked at.
            if saved > most { return true }
        }
        let stepped = Double(lastRead + 1 - read) / Double(segment.blockCount)
        return saved > regionBytes * (ReadingCost.openingByte + stepped * ReadingCost.steppingByte)
    }
}

/// Instructions the ways of reading a block cost, estimated from callgrind profiles of the daily
/// heart rate: five heavy years (blocks of ~2,600 samples over ~14 hours, ~47 samples and ~11 bytes
/// a slot) and the year (blocks of ~1,000 samples a day, ~13 a slot where they have slots) in UTC,
/// Europe/Paris, Asia/Kathmandu and Lord Howe days. They decide whether a segment's slot region is
/// opened; once it is, each block chooses by ``Store/sidesCostLess(_:edge:)``'s older estimates,
/// which chose best block by block on the year's queries.
enum ReadingCost {
    /// A slot summary read and added up, and each sample it sums up (its fields are longer the more
    /// it does): the heavy years' ~100K slots of 1,780 blocks took 37.7M (~375 a slot), the year's
    /// ~230 a slot.
    static let slot = 170.0
    static let slotSample = 4.5
    /// A byte of slot region decompressed, checked and copied on opening: 12.2M for 61 heavy regions
    /// of ~33 KB.
    static let openingByte = 6.0
    /// A byte of slot region stepped over to reach a later block's: 13.1M for ~1.6 MB.
    static let steppingByte = 8.0
    /// A sample decoded and added up (the columns the aggregate reads): 138K for 4 of the year's
    /// blocks in Lord Howe days.
    static let decodedSample = 30.0

    /// Reading block `s`'s slots: one a quarter hour of its span at most.
    static func slots(_ s: BlockSummary) -> Double { Double(span(s)) * slot + Double(s.sampleCount) * slotSample }

    /// Adding block `s` up either side of `edge`: ~5 a sample to find the edge and add up, ~17 for
    /// each of the fewer side's or, when the fewer are the later ones, every sample's (deltas are
    /// only followed from the first), and the other side's extremes (``extremesPass``).
    static func sides(_ s: BlockSummary, edge: Int64) -> Double {
        let n = Double(s.sampleCount)
        let before = Double(edge - s.firstStart)
        let earlier = n * before / Double(s.lastStart - s.firstStart)
        let fewer = Swift.min(earlier, n - earlier)
        let walked = earlier <= n - earlier ? earlier : n
        return n * 5 + walked * 17 + (n - fewer) * extremesPass
    }

    /// Each sample of the side with more of them, on average: its smallest and largest are found
    /// in a pass over them (~14 a sample) when the fewer hold one of the block's, as in 95 of the
    /// year's 350 blocks across a UTC day's edge (a day's lowest heart rate is often in the hours
    /// another zone's day takes from the wearer's) and more of five heavy years'.
    static let extremesPass = 7.0

    static func decode(_ s: BlockSummary) -> Double { Double(s.sampleCount) * decodedSample }

    /// Writers give a block slots when it averages 12 samples or more an occupied slot
    /// (Formats/segment-v3.md §6.1): surely when it has that many for every slot of its span.
    static func likelyHasSlots(_ s: BlockSummary) -> Bool { s.sampleCount >= 12 * span(s) }

    private static func span(_ s: BlockSummary) -> Int {
        Int(SlotSummary.number(s.lastStart) - SlotSummary.number(s.firstStart) + 1)
    }
}
