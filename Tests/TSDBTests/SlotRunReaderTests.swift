import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// The reader that adds a block's slot summaries up per bucket as it reads them (SlotRunReader)
/// against the checked reading (SlotRegion.decodeBlock) with the slots added up after: the same
/// runs, or nil (left to the checked reading); and nil whenever the checked reading finds damage.
@Suite struct SlotRunReaderTests {
    /// A segment's decompressed slot region and its blocks' summaries.
    func region(_ samples: [Sample], blockSamples: Int) throws -> (bytes: [UInt8], summaries: [BlockSummary]) {
        let folder = TemporaryFolder("slot-runs")
        defer { folder.cleanup() }
        folder.write(bytes: encodeSegment(samples, blockSamples: blockSamples, codec: .none), to: "x.seg")
        let reader = try SegmentReader(path: folder.path + "/x.seg")
        return (try reader.slotStream().bytes(ofBlocks: reader.blockCount), reader.summaries)
    }

    /// The end of the bucket of `width` µs (from the epoch) holding `t`.
    static func bucketEnd(_ t: Int64, width: Int64) -> Int64 { (ISO8601.floorDivide(t, width).0 + 1) * width }

    /// A block's slots in `[lo, hi)` added up per bucket, by brute force.
    static func runs(_ slots: [StoredSlot], lo: Int64, hi: Int64, width: Int64) -> [SlotRun] {
        var runs: [SlotRun] = []
        for s in slots where s.start >= lo && s.start < hi {
            if runs.isEmpty || s.start >= bucketEnd(runs[runs.count - 1].start, width: width) {
                runs.append(SlotRun(start: s.start))
            }
            runs[runs.count - 1].samples += s.samples
            guard s.values > 0 else { continue }
            runs[runs.count - 1].values += s.values
            runs[runs.count - 1].sum += s.minimum * Int64(s.values) + Int64(s.deviations)
            runs[runs.count - 1].minimum = min(runs[runs.count - 1].minimum, s.minimum)
            runs[runs.count - 1].maximum = max(runs[runs.count - 1].maximum, s.minimum + Int64(s.range))
        }
        return runs
    }

    /// Block after block of `bytes` from its start, both readings of each, until one of the
    /// checked readings fails: the fast one must then give nil, and else nil or the same runs.
    /// The fast one reads the region `padded` with ``SlotRunReader/room`` zeros, as ``SlotStream``
    /// holds it, or not. Returns how many blocks the fast reading added up.
    @discardableResult
    func compareReadings(
        _ bytes: [UInt8], _ summaries: [BlockSummary], lo: Int64, hi: Int64, width: Int64, padded: Bool = true
    ) -> Int {
        var summed = 0
        let region = bytes + [UInt8](repeating: 0, count: padded ? SlotRunReader.room : 0)
        region.withUnsafeBytes { whole in
            let buffer = UnsafeRawBufferPointer(rebasing: whole[..<bytes.count])
            var r = ByteReader(buffer, context: "slot region")
            for (b, summary) in summaries.enumerated() {
                guard let n = try? r.count("slot count", limit: r.remaining) else { return }
                guard n > 0 else { continue }
                let start = r.position
                var fast: [SlotRun] = []
                let quick = SlotRunReader.read(
                    whole, end: bytes.count, at: start, count: n, summary: summary, lo: lo, hi: hi,
                    bucketEnd: { Self.bucketEnd($0, width: width) }, into: &fast)
                var slots: [StoredSlot] = []
                guard let scale = try? SlotRegion.decodeBlock(&r, count: n, block: b, summary: summary, into: &slots)
                else {
                    #expect(quick == nil, "block \(b): the fast reading took what the checked one refuses")
                    return
                }
                guard let quick else { continue }
                summed += 1
                #expect(quick.end == r.position && quick.scale == scale, "block \(b)")
                #expect(fast == Self.runs(slots, lo: lo, hi: hi, width: width), "block \(b)")
            }
        }
        return summed
    }

    @Test(arguments: [(1, 64), (2, 500), (3, 4096), (4, 1000)])
    func runsEqualTheCheckedReadingAddedUp(seed: UInt64, blockSamples: Int) throws {
        var rng = SplitMix64(seed: seed)
        let samples = SlotSummaryTests.series(6000, seed: seed, maxStep: Int64.random(in: 2...40, using: &rng))
        let (bytes, summaries) = try region(samples, blockSamples: blockSamples)
        let grid = SlotSummary.micros
        let (first, last) = (samples[0].start.microseconds / grid, samples[5999].start.microseconds / grid)
        var summed = 0
        for _ in 0..<20 {
            let width = grid * [1, 2, 4, 12, 96].randomElement(using: &rng)!
            let lo = Int64.random(in: first - 2...last, using: &rng) * grid
            let hi = lo + Int64.random(in: 1...(last - first + 4), using: &rng) * grid
            summed += compareReadings(bytes, summaries, lo: lo, hi: hi, width: width)
        }
        #expect(summed > 0, "the fast reading added nothing up")
    }

    /// Heart rate every 20–100 s (slots of short fields, read from two loads) with bursts
    /// every 1–3 s (over 127 samples a slot), jumps of ±100 (a two-byte minimum) and null values:
    /// slots of both shapes in one region, each read as the checked reading reads it.
    static func mixedShapes(_ n: Int, seed: UInt64) -> [Sample] {
        var rng = SplitMix64(seed: seed)
        var (t, value, burst) = (SlotSummaryTests.march2025, Int64(70), 0)
        return (0..<n).map { i in
            if burst == 0 && Int.random(in: 0..<200, using: &rng) == 0 { burst = 400 }
            burst = max(0, burst - 1)
            t += Int64.random(in: burst > 0 ? 1...3 : 20...100, using: &rng) * 1_000_000
            let jump = Int.random(in: 0..<150, using: &rng) == 0 ? Int64.random(in: -100...100, using: &rng) : 0
            value = min(max(value + jump + Int64.random(in: -4...4, using: &rng), 40), 190)
            let stamp = Timestamp(microseconds: t, form: TimeForm(offsetMinutes: 60, fractionDigits: 0, isZulu: false))
            return Sample(
                type: SlotSummaryTests.type, start: stamp, end: stamp,
                value: i % 37 == 5 ? .null : .decimal(ExactDecimal(mantissa: value, scale: 0)),
                unit: .text("count/min"), source: .text("watch"), device: .absent, metadata: .absent)
        }
    }

    /// Whether the checked reading's `slot` (after a slot of minimum `previous`) is stored as five
    /// one-byte fields, deviations of one or two bytes and a squared sum of one to four
    /// (``SlotRunReader/quickHead``).
    static func quickShaped(_ slot: StoredSlot, after previous: Int64) -> Bool {
        slot.samples < 128 && slot.values > 0 && slot.samples - slot.values < 128
            && ZigZag.encode(slot.minimum - previous) < 128 && slot.range < 128 && slot.deviations < 1 << 14
            && slot.squares < 1 << 28
    }

    @Test(arguments: [(UInt64(8), 1000), (9, 4096)])
    func shortFieldedSlotsAndOthersReadAlike(seed: UInt64, blockSamples: Int) throws {
        let samples = Self.mixedShapes(20_000, seed: seed)
        let (bytes, summaries) = try region(samples, blockSamples: blockSamples)
        var (quick, other, withSlots) = (0, 0, 0)
        try bytes.withUnsafeBytes { buffer in
            var r = ByteReader(buffer, context: "slot region")
            for (b, summary) in summaries.enumerated() {
                let n = try r.count("slot count", limit: r.remaining)
                if n > 0 { withSlots += 1 }
                var slots: [StoredSlot] = []
                if n > 0 { _ = try SlotRegion.decodeBlock(&r, count: n, block: b, summary: summary, into: &slots) }
                var previous: Int64 = 0
                for slot in slots {
                    if Self.quickShaped(slot, after: previous) { quick += 1 } else { other += 1 }
                    if slot.values > 0 { previous = slot.minimum }
                }
            }
        }
        #expect(quick > other && other > 20, "\(quick) quick-shaped slots, \(other) others")
        let grid = SlotSummary.micros
        let (first, last) = (samples[0].start.microseconds / grid, samples[samples.count - 1].start.microseconds / grid)
        var rng = SplitMix64(seed: seed)
        // Padded, every block with slots is read quickly, the region's last too; unpadded, not the last.
        var summed = compareReadings(bytes, summaries, lo: .min / 2, hi: .max / 2, width: 4 * grid)
        #expect(summed == withSlots)
        #expect(
            compareReadings(bytes, summaries, lo: .min / 2, hi: .max / 2, width: 4 * grid, padded: false) < withSlots)
        for _ in 0..<20 {
            let width = grid * [1, 4, 96].randomElement(using: &rng)!
            let lo = Int64.random(in: first - 2...last, using: &rng) * grid
            let hi = lo + Int64.random(in: 1...(last - first + 4), using: &rng) * grid
            summed += compareReadings(bytes, summaries, lo: lo, hi: hi, width: width)
        }
        #expect(summed > summaries.count, "the fast reading added up \(summed) blocks")
    }

    /// Every byte of a region changed in turn (with the CRC made right again, as only a writer's
    /// bug or damage with a fresh CRC could): whatever the checked reading refuses, the fast one
    /// must not take; what both take, they must read alike.
    @Test func damageTheCheckedReadingRefusesIsNeverTaken() throws {
        let samples = SlotSummaryTests.series(1500, seed: 21, maxStep: 8)
        let (bytes, summaries) = try region(samples, blockSamples: 500)
        #expect(compareReadings(bytes, summaries, lo: .min / 2, hi: .max / 2, width: 3_600_000_000) > 0)
        for i in bytes.indices {
            for flip: UInt8 in [0x01, 0x02, 0x10, 0x40, 0x80, 0xFF] {
                var damaged = bytes
                damaged[i] ^= flip
                for padded in [true, false] {
                    compareReadings(
                        damaged, summaries, lo: .min / 2, hi: .max / 2, width: 3_600_000_000, padded: padded)
                }
            }
        }
    }

    /// Blocks whose samples all have values: counting the ends of their slots' fields ends where
    /// stepping over them field by field does, for every block but those near the region's end.
    @Test(arguments: [(UInt64(5), 64), (6, 500), (7, 4096)])
    func countingFieldEndsStepsOverABlockAsFieldByFieldDoes(seed: UInt64, blockSamples: Int) throws {
        let samples = SideTotalsTests.wholeNumbers(6000, seed: seed, maxStep: 6)
        let (bytes, summaries) = try region(samples, blockSamples: blockSamples)
        try bytes.withUnsafeBytes { buffer in
            var r = ByteReader(buffer, context: "slot region")
            for (b, summary) in summaries.enumerated() {
                #expect(summary.valueCount == summary.sampleCount)
                let (start, end) = (r.position, SlotRunReader.endOfValuedBlock(buffer, at: r.position))
                try SlotRegion.skipBlock(&r)
                #expect(end == r.position || (end == nil && bytes.count - start < SlotRunReader.room), "block \(b)")
            }
        }
    }
}
