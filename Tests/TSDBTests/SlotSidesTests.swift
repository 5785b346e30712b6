import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A block's totals either side of a quarter-hour edge from the slots before it (SlotSides)
/// against brute force over the block's decoded samples, at every edge inside every block; and,
/// with the region's bytes damaged, never an answer that the bytes it read do not support.
@Suite struct SlotSidesTests {
    /// A segment's slot region, its blocks' summaries, and each block's (start, mantissa) pairs.
    struct Fixture {
        var bytes: [UInt8]
        var summaries: [BlockSummary]
        var samples: [[(start: Int64, value: Int64)]]
    }

    func fixture(_ samples: [Sample], blockSamples: Int) throws -> Fixture {
        let folder = TemporaryFolder("slot-sides")
        defer { folder.cleanup() }
        folder.write(bytes: encodeSegment(samples, blockSamples: blockSamples, codec: .none), to: "x.seg")
        let reader = try SegmentReader(path: folder.path + "/x.seg")
        let block = DecodedBlock()
        let decoded = try (0..<reader.blockCount).map { b in
            try reader.decode(block: b, into: block)
            return (0..<block.count).map { (block.starts[$0], block.mantissas[$0]) }
        }
        return Fixture(
            bytes: try reader.slotStream().bytes(ofBlocks: reader.blockCount), summaries: reader.summaries,
            samples: decoded)
    }

    /// The totals of `samples` starting before `edge`, and of the rest.
    static func bruteForce(_ samples: [(start: Int64, value: Int64)], edge: Int64) -> (ValueTotals, ValueTotals) {
        var (before, after) = (ValueTotals(), ValueTotals())
        for s in samples {
            if s.start < edge { before.add(s.value) } else { after.add(s.value) }
        }
        return (before, after)
    }

    /// The quarter-hour edges strictly inside block `s`: those a day in some zone can put there.
    static func edges(_ s: BlockSummary) -> [Int64] {
        let (first, last) = (SlotSummary.number(s.firstStart), SlotSummary.number(s.lastStart))
        return first < last ? (first + 1...last).map { $0 * SlotSummary.micros } : []
    }

    /// Calls `body` with each block that has slots: its number, the position after its slot count,
    /// the count, and the checked reading of its slots (nil when it refuses them, which ends the walk).
    static func eachBlock(
        _ bytes: [UInt8], _ summaries: [BlockSummary],
        _ body: (Int, Int, Int, [StoredSlot]?) -> Void
    ) {
        bytes.withUnsafeBytes { buffer in
            var r = ByteReader(buffer, context: "slot region")
            for (b, summary) in summaries.enumerated() {
                guard let n = try? r.count("slot count", limit: r.remaining) else { return }
                guard n > 0 else { continue }
                let start = r.position
                var slots: [StoredSlot] = []
                let checked = try? SlotRegion.decodeBlock(&r, count: n, block: b, summary: summary, into: &slots)
                body(b, start, n, checked == nil ? nil : slots)
                if checked == nil { return }
            }
        }
    }

    /// `SlotSides.totals` of block `b` at `edge` in `bytes` (padded as ``SlotStream`` holds it).
    static func sides(_ bytes: [UInt8], _ summary: BlockSummary, at start: Int, count n: Int, edge: Int64)
        -> (before: ValueTotals, after: ValueTotals, end: Int)?
    {
        guard let whole = SegmentReader.wholeNumbers(summary) else { return nil }
        return (bytes + [UInt8](repeating: 0, count: SlotRunReader.room)).withUnsafeBytes {
            SlotSides.totals($0, end: bytes.count, at: start, count: n, summary: summary, whole: whole, edge: edge)
        }
    }

    @Test(arguments: [(UInt64(1), 600, Int64(4)), (2, 1000, 9), (3, 4096, 2), (4, 300, 6)])
    func everyEdgeInsideEveryBlockGivesTheDecodedSamplesTotals(seed: UInt64, blockSamples: Int, maxStep: Int64)
        throws
    {
        let f = try fixture(
            SideTotalsTests.wholeNumbers(8000, seed: seed, maxStep: maxStep), blockSamples: blockSamples)
        var (answered, walkedForExtremes, blocks) = (0, 0, 0)
        Self.eachBlock(f.bytes, f.summaries) { b, start, n, slots in
            blocks += 1
            #expect(slots != nil, "block \(b): the checked reading refused an undamaged region")
            var end: Int?
            for edge in Self.edges(f.summaries[b]) {
                guard let got = Self.sides(f.bytes, f.summaries[b], at: start, count: n, edge: edge) else {
                    Issue.record("block \(b), edge \(edge): declined")
                    continue
                }
                let (before, after) = Self.bruteForce(f.samples[b], edge: edge)
                #expect(got.before == before && got.after == after, "block \(b), edge \(edge)")
                #expect(end == nil || got.end == end, "block \(b): the slots end in one place")
                end = got.end
                answered += 1
                if before.minimum == after.minimum || before.maximum == after.maximum { walkedForExtremes += 1 }
            }
        }
        #expect(blocks > 1 && answered > blocks, "\(answered) edges in \(blocks) blocks with slots")
        #expect(walkedForExtremes > 0, "no edge made the later side's extremes be sought")
    }

    /// The sides' end is where the checked reading ends the block's slots.
    @Test func theSlotsAreLeftWhereTheCheckedReadingLeavesThem() throws {
        let f = try fixture(SideTotalsTests.wholeNumbers(20_000, seed: 7, maxStep: 40), blockSamples: 1000)
        var compared = 0
        f.bytes.withUnsafeBytes { buffer in
            var r = ByteReader(buffer, context: "slot region")
            for (b, summary) in f.summaries.enumerated() {
                guard let n = try? r.count("slot count", limit: r.remaining), n > 0 else { continue }
                let start = r.position
                var slots: [StoredSlot] = []
                #expect((try? SlotRegion.decodeBlock(&r, count: n, block: b, summary: summary, into: &slots)) != nil)
                for edge in Self.edges(summary) {
                    let got = Self.sides(f.bytes, summary, at: start, count: n, edge: edge)
                    #expect(got?.end == r.position, "block \(b), edge \(edge)")
                    compared += 1
                }
            }
        }
        #expect(compared > 100)
    }

    @Test func edgesOffTheQuarterHourGridAndOutsideTheBlockAreDeclined() throws {
        let f = try fixture(SideTotalsTests.wholeNumbers(3000, seed: 8, maxStep: 4), blockSamples: 1000)
        var tried = 0
        Self.eachBlock(f.bytes, f.summaries) { b, start, n, _ in
            let s = f.summaries[b]
            guard let edge = Self.edges(s).first else { return }
            for off in [
                edge + 1, edge - 60_000_000, s.firstStart,
                SlotSummary.number(s.lastStart + SlotSummary.micros)
                    * SlotSummary.micros,
            ] {
                #expect(Self.sides(f.bytes, s, at: start, count: n, edge: off) == nil, "block \(b), edge \(off)")
                tried += 1
            }
        }
        #expect(tried > 0)
    }

    /// Decimal values with a fraction (scale > 0) are declined: the entry's totals are not whole.
    @Test func blocksAtAScaleOtherThanZeroAreDeclined() throws {
        let samples = SideTotalsTests.wholeNumbers(3000, seed: 9, maxStep: 4).map { s in
            var s = s
            if case .decimal(let d) = s.value { s.value = .decimal(ExactDecimal(mantissa: d.mantissa * 10, scale: 1)) }
            return s
        }
        let f = try fixture(samples, blockSamples: 1000)
        var tried = 0
        Self.eachBlock(f.bytes, f.summaries) { b, start, n, _ in
            let s = f.summaries[b]
            guard let whole = SegmentReader.wholeNumbers(s), let edge = Self.edges(s).first else { return }
            let got = (f.bytes + [UInt8](repeating: 0, count: SlotRunReader.room)).withUnsafeBytes {
                SlotSides.totals($0, end: f.bytes.count, at: start, count: n, summary: s, whole: whole, edge: edge)
            }
            #expect(got == nil, "block \(b)")
            tried += 1
        }
        #expect(tried > 0)
    }

    /// The samples and the mantissas' sum of the slots before `edge` of the `n` at `start`, and of
    /// those from it on, read field by field with no check (what the bytes say); the later side is
    /// nil where the bytes end or a field is unreadable, and both are when that happens earlier.
    static func sidesSaid(_ bytes: [UInt8], at start: Int, count n: Int, summary: BlockSummary, edge: Int64)
        -> (before: (samples: Int, sum: Int64)?, after: (samples: Int, sum: Int64)?)
    {
        bytes.withUnsafeBytes { buffer in
            var r = ByteReader(buffer, context: "slot region")
            var (slot, minimum) = (SlotSummary.number(summary.firstStart) - 1, Int64(0))
            var sides = [(samples: 0, sum: Int64(0)), (samples: 0, sum: Int64(0))]
            var reachedEdge = false
            do {
                try r.skip(start + 1, "the scale and what precedes it")
                for _ in 0..<n {
                    slot &+= 1 &+ Int64(truncatingIfNeeded: try r.uvarint("gap"))
                    reachedEdge = reachedEdge || slot >= SlotSummary.number(edge)
                    let count = Int64(truncatingIfNeeded: try r.uvarint("samples"))
                    _ = try r.uvarint("valueless")
                    minimum &+= try r.varint("minimum")
                    _ = try r.uvarint("range")
                    let deviations = Int64(truncatingIfNeeded: try r.uvarint("deviations"))
                    _ = try r.uvarint("squared")
                    let k = reachedEdge ? 1 : 0
                    sides[k].samples &+= Int(count)
                    sides[k].sum &+= minimum &* count &+ deviations
                }
            } catch {
                return (reachedEdge ? sides[0] : nil, nil)
            }
            return (sides[0], sides[1])
        }
    }

    /// Every byte of a region changed in turn (as only a writer's bug, or damage with its CRC made
    /// right, could): an answer is either the undamaged one (the change lay in slots stepped over,
    /// or in fields of the side not added up, which the answer does not take from) or one side is
    /// what the damaged slots say and the other the block's entry less it. (The region's CRC is
    /// what finds damage, and `tsdb verify` checks every slot against the samples: reading only the
    /// slots before an edge cannot check that a block's slots add up to its entry.)
    @Test func damageGivesNoAnswerTheBytesReadDoNotSay() throws {
        let f = try fixture(SideTotalsTests.wholeNumbers(6000, seed: 10, maxStep: 4), blockSamples: 3000)
        var cases: [(b: Int, start: Int, n: Int, edge: Int64, right: (before: ValueTotals, after: ValueTotals))] = []
        Self.eachBlock(f.bytes, f.summaries) { b, start, n, _ in
            for edge in Self.edges(f.summaries[b]) {
                guard let got = Self.sides(f.bytes, f.summaries[b], at: start, count: n, edge: edge) else { continue }
                cases.append((b, start, n, edge, (got.before, got.after)))
            }
        }
        #expect(cases.count > 10)
        var (unchanged, changed, declined) = (0, 0, 0)
        for i in f.bytes.indices {
            for flip: UInt8 in [0x01, 0x04, 0x40, 0x80] {
                var damaged = f.bytes
                damaged[i] ^= flip
                for c in cases where i >= c.start {
                    let s = f.summaries[c.b]
                    guard let got = Self.sides(damaged, s, at: c.start, count: c.n, edge: c.edge) else {
                        declined += 1
                        continue
                    }
                    if got.before == c.right.before && got.after == c.right.after {
                        unchanged += 1
                        continue
                    }
                    changed += 1
                    // One side is what the bytes say, the other the block's entry less it.
                    let said = Self.sidesSaid(damaged, at: c.start, count: c.n, summary: s, edge: c.edge)
                    let whole = SegmentReader.wholeNumbers(s)!
                    let beforeSaid = said.before.map { $0.samples == got.before.count && $0.sum == got.before.sum }
                    let afterSaid = said.after.map { $0.samples == got.after.count && $0.sum == got.after.sum }
                    #expect(
                        (beforeSaid == true || afterSaid == true)
                            && got.after.count == whole.count - got.before.count
                            && got.after.sum == whole.sum - got.before.sum,
                        "byte \(i) ^ \(flip), block \(c.b), edge \(c.edge): an answer the bytes do not say")
                }
            }
        }
        #expect(unchanged > 0 && declined > 0, "\(unchanged) unchanged, \(changed) changed, \(declined) declined")
    }
}
