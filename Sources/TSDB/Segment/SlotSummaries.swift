/// Summary of the samples of one block whose start lies in one 15-minute slot of UTC time
/// (Formats/segment-v3.md §6.1). Buckets of a quarter hour or more, in any zone whose offset is
/// a multiple of 15 minutes, are unions of whole slots, so their count, minimum, maximum, sum,
/// mean and variance come from these without decoding the block.
public struct SlotSummary: Sendable, Equatable {
    /// Start of the slot, µs since the epoch (UTC); the slot is `[start, start + SlotSummary.micros)`.
    public var start: Int64
    public var sampleCount: Int
    /// Samples whose value is a number.
    public var valueCount: Int
    /// Over numeric values; `+inf`/`-inf`/0/0 when `valueCount` is 0.
    public var minValue: Double
    public var maxValue: Double
    public var sum: Double
    /// Σ (v − mean)² over the slot's numeric values.
    public var sumOfSquaredDeviations: Double

    /// §6.1 Slot length: 15 minutes, the granularity of every UTC offset in use.
    public static let micros: Int64 = 900_000_000

    /// The slot number of instant `t` (slot 0 starts at the epoch).
    static func number(_ t: Int64) -> Int64 { ISO8601.floorDivide(t, micros).0 }
}

extension SlotSummary {
    /// A stored slot (or several merged) as statistics of values, dividing by the block's scale.
    init(_ s: StoredSlot, scale: UInt8) {
        self.init(
            start: s.start, sampleCount: s.samples, valueCount: s.values, minValue: .infinity, maxValue: -.infinity,
            sum: 0, sumOfSquaredDeviations: 0)
        guard s.values > 0 else { return }
        let divisor = ExactDecimal.powersOfTen[Int(scale)]
        let v = Double(s.values)
        minValue = Double(s.minimum) / divisor
        maxValue = Double(s.minimum + Int64(s.range)) / divisor
        // The mantissas' sum, exactly when it fits in 64 bits.
        let (base, o1) = s.minimum.multipliedReportingOverflow(by: Int64(s.values))
        let (total, o2) = base.addingReportingOverflow(Int64(bitPattern: s.deviations))
        let exact = !(o1 || o2) && s.deviations <= UInt64(Int64.max)
        sum = (exact ? Double(total) : v * Double(s.minimum) + Double(s.deviations)) / divisor
        let d = Double(s.deviations)
        sumOfSquaredDeviations = Swift.max(0, Double(s.squares) - d * d / v) / (divisor * divisor)
    }
}

/// One slot as the region stores it (§6.1): exact integers at the block's scale. Slots that fall
/// in one bucket are merged as integers (``absorb(_:)``) and turned into doubles once per bucket.
struct StoredSlot: Equatable {
    /// The slot's number (``SlotSummary/number(_:)``) of its first slot.
    var number: Int64
    var samples: Int
    var values: Int
    /// The smallest mantissa, and the largest minus it (0 and 0 without values).
    var minimum: Int64 = 0
    var range: UInt64 = 0
    /// Σ (m − minimum) and Σ (m − minimum)² over the mantissas.
    var deviations: UInt64 = 0
    var squares: UInt64 = 0

    var start: Int64 { number * SlotSummary.micros }

    /// Adds a later slot of the same block, moving both to the smaller minimum; false, and nothing
    /// changed, when a figure would pass 64 bits (the caller merges them as doubles instead).
    mutating func absorb(_ other: StoredSlot) -> Bool {
        guard other.values > 0 else {
            samples += other.samples
            return true
        }
        guard values > 0 else {
            (minimum, range, deviations, squares) = (other.minimum, other.range, other.deviations, other.squares)
            (samples, values) = (samples + other.samples, other.values)
            return true
        }
        let low = Swift.min(minimum, other.minimum)
        guard let mine = Self.shifted(values, deviations, squares, by: UInt64(minimum - low)),
            let theirs = Self.shifted(other.values, other.deviations, other.squares, by: UInt64(other.minimum - low))
        else { return false }
        let (d, o1) = mine.0.addingReportingOverflow(theirs.0)
        let (q, o2) = mine.1.addingReportingOverflow(theirs.1)
        guard !(o1 || o2) else { return false }
        let high = Swift.max(minimum + Int64(range), other.minimum + Int64(other.range))
        (minimum, range, deviations, squares) = (low, UInt64(high - low), d, q)
        (samples, values) = (samples + other.samples, values + other.values)
        return true
    }

    /// Σ(m − low) and Σ(m − low)² from Σ(m − min) = `d` and Σ(m − min)² = `q`, where min − low = `s`:
    /// d + n·s and q + 2·s·d + n·s² (nil past 64 bits).
    private static func shifted(_ n: Int, _ d: UInt64, _ q: UInt64, by s: UInt64) -> (UInt64, UInt64)? {
        guard s > 0 else { return (d, q) }
        let (ns, o1) = UInt64(n).multipliedReportingOverflow(by: s)
        let (sd, o2) = s.multipliedReportingOverflow(by: d)
        let (sd2, o3) = sd.multipliedReportingOverflow(by: 2)
        let (nss, o4) = ns.multipliedReportingOverflow(by: s)
        let (d2, o5) = d.addingReportingOverflow(ns)
        let (q1, o6) = q.addingReportingOverflow(sd2)
        let (q2, o7) = q1.addingReportingOverflow(nss)
        return o1 || o2 || o3 || o4 || o5 || o6 || o7 ? nil : (d2, q2)
    }
}

/// Consecutive slots of one block added up as integers, for statistics that need no spread:
/// samples, values, extreme mantissas and the mantissas' exact sum.
enum SlotTotals {
    /// The totals of `slots[range]` as statistics of values at `scale` (their squared deviations
    /// are not known: 0). Nil when the sum passes 64 bits (the caller merges the slots as
    /// ``StoredSlot/absorb(_:)`` does).
    ///
    /// Totals in locals, not a struct: a struct's extremes went through memory and were read back
    /// as one 16-byte vector, which the CPU cannot forward from the two 8-byte stores just made (a
    /// fifth of the slot merge of five years of 15-minute buckets in perf).
    static func summary(_ slots: borrowing [StoredSlot], _ range: Range<Int>, scale: UInt8) -> SlotSummary? {
        var (samples, values) = (0, 0)
        var (minimum, maximum, sum) = (Int64.max, Int64.min, Int64(0))
        for i in range {
            let s = slots[i]
            samples += s.samples
            guard s.values > 0 else { continue }
            values += s.values
            // Σ m over the slot is minimum·values + Σ(m − minimum).
            let (base, o1) = s.minimum.multipliedReportingOverflow(by: Int64(s.values))
            let (total, o2) = base.addingReportingOverflow(Int64(bitPattern: s.deviations))
            let (running, o3) = sum.addingReportingOverflow(total)
            guard !(o1 || o2 || o3), s.deviations <= UInt64(Int64.max) else { return nil }
            sum = running
            minimum = Swift.min(minimum, s.minimum)
            maximum = Swift.max(maximum, s.minimum + Int64(s.range))
        }
        return summary(samples: samples, values: values, minimum: minimum, maximum: maximum, sum: sum, scale: scale)
    }

    /// Totals of mantissas at `scale` as statistics of values (squared deviations unknown: 0).
    static func summary(samples: Int, values: Int, minimum: Int64, maximum: Int64, sum: Int64, scale: UInt8)
        -> SlotSummary
    {
        guard values > 0 else {
            return SlotSummary(
                start: 0, sampleCount: samples, valueCount: 0, minValue: .infinity, maxValue: -.infinity, sum: 0,
                sumOfSquaredDeviations: 0)
        }
        // Whole numbers (scale 0: heart rate, steps) skip three divisions by 1, whose latency
        // showed in every bucket made of slots: five heavy years in 15-minute buckets 11.65 -> 11.22 ms.
        guard scale > 0 else {
            return SlotSummary(
                start: 0, sampleCount: samples, valueCount: values, minValue: Double(minimum),
                maxValue: Double(maximum), sum: Double(sum), sumOfSquaredDeviations: 0)
        }
        let divisor = ExactDecimal.powersOfTen[Int(scale)]
        return SlotSummary(
            start: 0, sampleCount: samples, valueCount: values, minValue: Double(minimum) / divisor,
            maxValue: Double(maximum) / divisor, sum: Double(sum) / divisor, sumOfSquaredDeviations: 0)
    }
}

/// The slot summaries of every block of a segment, decoded from the slot region (§6.1).
struct SlotTable: Sendable {
    var slots: [SlotSummary] = []
    /// Block `b`'s slots are `slots[ranges[b]]`; an empty range means the block has none.
    var ranges: [Range<Int>] = []
}

/// A segment's decompressed slot region read block by block, in increasing block order: the
/// blocks a query skips are stepped over, and only one block's slots are held at a time.
struct SlotStream {
    /// The decompressed region followed by ``SlotRunReader/room`` zero bytes, so that its last
    /// block's slots are read as quickly as any (the reader's loads go past the region's end).
    private let padded: [UInt8]
    /// The region's length, without the padding.
    private let count: Int
    private let offset: Int
    /// The segment's block summaries: a block whose samples all have values has seven fields a slot.
    private let summaries: [BlockSummary]
    private var position = 0
    private var nextBlock = 0

    /// A region of `count` bytes, which `fill` writes (decompressing it), followed by the padding.
    init(
        count: Int, offset: Int, summaries: [BlockSummary],
        filling fill: (UnsafeMutableRawBufferPointer) throws(TSDBError) -> Void
    ) throws(TSDBError) {
        var failure: TSDBError?
        self.padded = [UInt8](unsafeUninitializedCapacity: count + SlotRunReader.room) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            let (region, padding) = (bytes[..<count], bytes[count...])
            UnsafeMutableRawBufferPointer(rebasing: padding).initializeMemory(as: UInt8.self, repeating: 0)
            do throws(TSDBError) {
                try fill(UnsafeMutableRawBufferPointer(rebasing: region))
            } catch {
                failure = error
                UnsafeMutableRawBufferPointer(rebasing: region).initializeMemory(as: UInt8.self, repeating: 0)
            }
            initialized = buffer.count
        }
        if let failure { throw failure }
        self.count = count
        self.offset = offset
        self.summaries = summaries
    }

    /// Calls `body` with the region (without its padding) and the padded bytes.
    private func withRegion<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R) -> R {
        padded.withUnsafeBytes { padded in body(UnsafeRawBufferPointer(rebasing: padded[..<count]), padded) }
    }

    /// Steps over block `b`'s slots on the way to a later block's (they are checked when decoded):
    /// by counting the ends of its fields when every sample of the block has a value, field by
    /// field otherwise or near the region's end.
    private func skip(block b: Int, _ r: inout ByteReader) throws(TSDBError) {
        let s = summaries[b]
        if s.valueCount == s.sampleCount, let end = SlotRunReader.endOfValuedBlock(r.buffer, at: r.position) {
            return try r.skip(end - r.position, "slots")
        }
        try SlotRegion.skipBlock(&r)
    }

    /// Replaces `slots` with block `b`'s (empty when it has none) and returns their scale; `b` must
    /// exceed earlier calls'.
    mutating func slots(ofBlock b: Int, summary: BlockSummary, into slots: inout [StoredSlot]) throws(TSDBError)
        -> UInt8
    {
        precondition(b >= nextBlock, "slot blocks are read in increasing order")
        slots.removeAll(keepingCapacity: true)
        let start = position
        let offset = self.offset
        var skipped = nextBlock
        var scale: UInt8 = 0
        let read: Result<Int, TSDBError> = withRegion { bytes, _ in
            var r = ByteReader(
                bytes, baseOffset: offset, context: "slot region (offsets within its decompressed bytes)")
            do throws(TSDBError) {
                try r.skip(start, "slots already read")
                while skipped < b {
                    try skip(block: skipped, &r)
                    skipped += 1
                }
                let n = try r.count("slot count", limit: r.remaining)
                if n > 0 { scale = try SlotRegion.decodeBlock(&r, count: n, block: b, summary: summary, into: &slots) }
                return .success(r.position)
            } catch {
                return .failure(error)
            }
        }
        position = try read.get()
        nextBlock = b + 1
        return scale
    }
}

/// What ``SlotStream`` made of a block's slots when asked to add them up.
enum SlotRunsOutcome: Equatable {
    /// Added up into runs, at this scale.
    case summed(scale: UInt8)
    /// The block has no slot summaries (it is read past).
    case noSlots
    /// Left for ``SlotStream/slots(ofBlock:summary:into:)`` to read and check (nothing read).
    case declined
}

extension SlotStream {
    /// Block `b`'s slots in `[lo, hi)` added up per bucket (``SlotRunReader``) into `runs`, which
    /// are emptied first; `b` must exceed earlier calls'.
    mutating func runs(
        ofBlock b: Int, summary: BlockSummary, lo: Int64, hi: Int64, bucketEnd: (Int64) -> Int64,
        into runs: inout [SlotRun]
    ) throws(TSDBError) -> SlotRunsOutcome {
        runs.removeAll(keepingCapacity: true)
        let read = try quickly(block: b) { padded, end, at, n in
            SlotRunReader.read(
                padded, end: end, at: at, count: n, summary: summary, lo: lo, hi: hi, bucketEnd: bucketEnd,
                into: &runs
            ).map { ($0.end, $0.scale) }
        }
        guard let read else { return .noSlots }
        return read.map { .summed(scale: $0) } ?? .declined
    }

    /// Block `b`'s totals either side of `edge` from its slots (``SlotSides``), its values totalling
    /// `whole`: nil when it has none, `.some(nil)` when they are left for a checked reading.
    mutating func sides(ofBlock b: Int, summary: BlockSummary, whole: ValueTotals, edge: Int64) throws(TSDBError)
        -> (before: ValueTotals, after: ValueTotals)??
    {
        try quickly(block: b) { padded, end, at, n in
            SlotSides.totals(padded, end: end, at: at, count: n, summary: summary, whole: whole, edge: edge)
                .map { ($0.end, ($0.before, $0.after)) }
        }
    }

    /// Block `b`'s slot count read and its slots handed to `read` (the padded region, the region's
    /// end, the position after the count, the count), which gives the position after them and what
    /// it made, or nil to leave them for a checked reading (the stream stays before the block).
    /// Nil when the block has no slots; `b` must exceed earlier calls'.
    private mutating func quickly<R>(
        block b: Int, _ read: (UnsafeRawBufferPointer, Int, Int, Int) -> (end: Int, made: R)?
    ) throws(TSDBError) -> R?? {
        precondition(b >= nextBlock, "slot blocks are read in increasing order")
        let (start, offset, skipped) = (position, self.offset, nextBlock)
        let outcome: Result<(Int, Int, R??), TSDBError> = withRegion { bytes, padded in
            var r = ByteReader(
                bytes, baseOffset: offset, context: "slot region (offsets within its decompressed bytes)")
            do throws(TSDBError) {
                try r.skip(start, "slots already read")
                for k in skipped..<b { try skip(block: k, &r) }
                let blockStart = r.position
                let n = try r.count("slot count", limit: r.remaining)
                guard n > 0 else { return .success((r.position, b + 1, nil)) }
                guard let (end, made) = read(padded, bytes.count, r.position, n) else {
                    return .success((blockStart, b, .some(nil)))
                }
                return .success((end, b + 1, .some(made)))
            } catch {
                return .failure(error)
            }
        }
        let made: R??
        (position, nextBlock, made) = try outcome.get()
        return made
    }
}

extension SlotStream {
    /// The first `count` blocks' slot records as stored, stepped over without decoding (they are
    /// copied into a segment that keeps those blocks).
    func bytes(ofBlocks count: Int) throws(TSDBError) -> [UInt8] {
        let offset = self.offset
        let end: Result<Int, TSDBError> = withRegion { bytes, _ in
            var r = ByteReader(
                bytes, baseOffset: offset, context: "slot region (offsets within its decompressed bytes)")
            do throws(TSDBError) {
                for _ in 0..<count { try SlotRegion.skipBlock(&r) }
                return .success(r.position)
            } catch {
                return .failure(error)
            }
        }
        return Array(padded[0..<(try end.get())])
    }
}

/// §6.1 Encoding and decoding of the slot region, one block after another.
enum SlotRegion {
    /// A mantissa is usable when its magnitude is at most 2^53, so it converts to a `Double` exactly.
    static let mantissaLimit: Int64 = 1 << 53

    /// §6.1 Blocks averaging fewer samples per occupied slot get none: a slot takes ~9 bytes, so
    /// sparse types (steps, energy, weight) and a watch's resting heart rate (~10 a quarter hour:
    /// slots were 40% of a realistic year's heart-rate bytes with 4 as the limit) would pay heavily
    /// for slots, and their blocks decode quickly.
    static let minimumSamplesPerSlot = 12

    /// Appends block `block`'s slot summaries: a count of 0 when its values cannot be summarised
    /// exactly as integers (a number kept as text, mantissas beyond 2^53, sums past 64 bits) or
    /// the block is sparse (``minimumSamplesPerSlot``).
    static func encodeBlock(_ block: UnsafeBufferPointer<PackedSample>, into w: inout ByteWriter) {
        // Dense first: `integerSlots` makes the same slots that `isDense` counts.
        guard isDense(block), let (scale, slots) = integerSlots(block) else {
            w.uvarint(0)
            return
        }
        w.uvarint(UInt64(slots.count))
        w.u8(scale)
        var previousSlot = SlotSummary.number(block.first!.start) - 1
        var previousMin: Int64 = 0
        for s in slots {
            w.uvarint(UInt64(s.slot - previousSlot - 1))
            w.uvarint(UInt64(s.samples))
            w.uvarint(UInt64(s.samples - s.values))
            previousSlot = s.slot
            guard s.values > 0 else { continue }
            w.varint(s.min &- previousMin)
            w.uvarint(UInt64(s.max - s.min))
            w.uvarint(s.deviations)
            w.uvarint(s.squaredDeviations)
            previousMin = s.min
        }
    }

    /// Whether the block's samples average at least ``minimumSamplesPerSlot`` per occupied slot,
    /// counted before any slot's statistics: most blocks of a realistic year are sparser, and
    /// summarising their slots only to drop them was 4% of the year's compaction (callgrind).
    private static func isDense(_ block: UnsafeBufferPointer<PackedSample>) -> Bool {
        let allowed = block.count / minimumSamplesPerSlot
        var occupied = 0
        var previous = Int64.min
        for s in block {
            let slot = SlotSummary.number(s.start)
            guard slot != previous else { continue }
            occupied += 1
            if occupied > allowed { return false }
            previous = slot
        }
        return true
    }

    /// One slot while encoding, in mantissas at the block's scale.
    private struct IntegerSlot {
        var slot: Int64
        var samples = 0, values = 0
        var min = Int64.max, max = Int64.min
        /// Σ (m − min) and Σ (m − min)².
        var deviations: UInt64 = 0, squaredDeviations: UInt64 = 0
    }

    /// The block's slots with integer statistics at one scale (the most fraction digits of any
    /// value), or nil when that is not exact.
    private static func integerSlots(_ block: UnsafeBufferPointer<PackedSample>) -> (UInt8, [IntegerSlot])? {
        var scale: UInt8 = 0
        for s in block where s.valueTag >= ValueTag.decimalBase || s.valueTag == ValueTag.numberText {
            guard s.valueTag != ValueTag.numberText else { return nil }
            scale = Swift.max(scale, s.valueTag - ValueTag.decimalBase)
        }
        func mantissa(_ s: PackedSample) -> Int64? {
            let factor = SegmentFormat.powersOfTen[Int(scale - (s.valueTag - ValueTag.decimalBase))]
            let (m, overflow) = s.mantissa.multipliedReportingOverflow(by: factor)
            return overflow || m.magnitude > mantissaLimit.magnitude ? nil : m
        }
        var slots: [IntegerSlot] = []
        var i = 0
        while i < block.count {
            var slot = IntegerSlot(slot: SlotSummary.number(block[i].start))
            var j = i
            while j < block.count && SlotSummary.number(block[j].start) == slot.slot {
                slot.samples += 1
                if block[j].valueTag >= ValueTag.decimalBase {
                    guard let m = mantissa(block[j]) else { return nil }
                    slot.values += 1
                    slot.min = Swift.min(slot.min, m)
                    slot.max = Swift.max(slot.max, m)
                }
                j += 1
            }
            for k in i..<j where block[k].valueTag >= ValueTag.decimalBase {
                let d = UInt64(mantissa(block[k])! - slot.min)
                let (square, o1) = d.multipliedReportingOverflow(by: d)
                let (sum, o2) = slot.deviations.addingReportingOverflow(d)
                let (squares, o3) = slot.squaredDeviations.addingReportingOverflow(square)
                guard !(o1 || o2 || o3) else { return nil }
                (slot.deviations, slot.squaredDeviations) = (sum, squares)
            }
            slots.append(slot)
            i = j
        }
        return (scale, slots)
    }

    /// Decodes the region (already decompressed) against the blocks' summaries, checking that
    /// each block's slots account for exactly its samples, values, extremes and time span.
    static func decode(_ raw: UnsafeRawBufferPointer, summaries: [BlockSummary], offset: Int) throws(TSDBError)
        -> SlotTable
    {
        var r = ByteReader(raw, baseOffset: offset, context: "slot region (offsets within its decompressed bytes)")
        var table = SlotTable()
        table.ranges.reserveCapacity(summaries.count)
        // A slot takes at least 3 bytes: reserving for that many appends without regrowing.
        table.slots.reserveCapacity(raw.count / 3)
        var stored: [StoredSlot] = []
        for (b, summary) in summaries.enumerated() {
            let first = table.slots.count
            let n = try r.count("slot count", limit: r.remaining)
            if n > 0 {
                stored.removeAll(keepingCapacity: true)
                let scale = try decodeBlock(&r, count: n, block: b, summary: summary, into: &stored)
                table.slots += stored.map { SlotSummary($0, scale: scale) }
            }
            table.ranges.append(first..<table.slots.count)
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) unexpected bytes after the last block's slots") }
        return table
    }

    /// Steps over one block's slots without decoding them (they are checked when decoded).
    static func skipBlock(_ r: inout ByteReader) throws(TSDBError) {
        let n = try r.count("slot count", limit: r.remaining)
        guard n > 0 else { return }
        _ = try r.u8("scale")
        for _ in 0..<n {
            _ = try r.uvarint("slot gap")
            let samples = try r.uvarint("slot samples")
            let valueless = try r.uvarint("slot valueless samples")
            guard samples > valueless else { continue }
            for _ in 0..<4 { _ = try r.uvarint("slot statistic") }
        }
    }

    /// Decodes block `b`'s `n` slots (its count already read) into `slots`, checking them against
    /// the block's summary; returns their scale.
    static func decodeBlock(
        _ r: inout ByteReader, count n: Int, block b: Int, summary: BlockSummary, into slots: inout [StoredSlot]
    ) throws(TSDBError) -> UInt8 {
        func bad(_ what: String) -> TSDBError { r.fail("block \(b): \(what)") }
        let scale = try r.u8("scale")
        guard scale <= 18 else { throw bad("slot scale \(scale) > 18") }
        let lastSlot = SlotSummary.number(summary.lastStart)
        var slot = SlotSummary.number(summary.firstStart) - 1
        var previousMin: Int64 = 0
        var (samples, values) = (0, 0)
        var (low, high) = (Int64.max, Int64.min)
        let limit = UInt64(SlotRegion.mantissaLimit)
        for k in 0..<n {
            let gap = try r.uvarint("slot gap")
            let room = lastSlot - slot - 1
            guard room >= 0, gap <= UInt64(room), k > 0 || gap == 0 else { throw bad("slot \(k) out of the block") }
            slot += 1 + Int64(gap)
            let count = try r.uvarint("slot samples")
            let valueless = try r.uvarint("slot valueless samples")
            guard count >= 1, count <= UInt64(summary.sampleCount - samples), valueless <= count else {
                throw bad("slot \(k) holds \(count) samples (\(valueless) valueless), more than the block")
            }
            var s = StoredSlot(number: slot, samples: Int(count), values: Int(count - valueless))
            if s.values > 0 {
                let (minimum, o1) = previousMin.addingReportingOverflow(try r.varint("slot minimum"))
                let range = try r.uvarint("slot range")
                let deviations = try r.uvarint("slot deviations")
                let squares = try r.uvarint("slot squared deviations")
                let (bound, o2) = range.multipliedReportingOverflow(by: UInt64(s.values))
                guard !o1, minimum.magnitude <= limit, range <= 2 * limit, o2 || deviations <= bound,
                    (minimum + Int64(range)).magnitude <= limit
                else { throw bad("slot \(k) statistics out of range") }
                previousMin = minimum
                (s.minimum, s.range, s.deviations, s.squares) = (minimum, range, deviations, squares)
                (low, high) = (Swift.min(low, minimum), Swift.max(high, minimum + Int64(range)))
            }
            samples += s.samples
            values += s.values
            slots.append(s)
        }
        guard samples == summary.sampleCount, values == summary.valueCount, slot == lastSlot else {
            throw bad(
                "slots hold \(samples) samples and \(values) values up to slot \(slot); the block summary says "
                    + "\(summary.sampleCount) and \(summary.valueCount) up to slot \(lastSlot)")
        }
        let divisor = ExactDecimal.powersOfTen[Int(scale)]
        let (lowest, highest) = (Double(low) / divisor, Double(high) / divisor)
        guard values == 0 || (lowest == summary.minValue && highest == summary.maxValue) else {
            throw bad(
                "slots' extremes \(lowest)…\(highest) differ from the block's "
                    + "\(summary.minValue)…\(summary.maxValue)")
        }
        return scale
    }
}

extension SegmentReader {
    /// Checks block `b`'s slot summaries against its decoded samples (`tsdb verify`): the same
    /// slots, counts and extremes, and sums equal to rounding.
    func checkSlots(of b: Int, decoded block: DecodedBlock, in table: SlotTable) throws(TSDBError) {
        let slots = table.slots[table.ranges[b]]
        guard !slots.isEmpty else { return }
        func bad(_ what: String) -> TSDBError {
            .corrupt("block \(b): \(what)", path: path, offset: slotRegion.offset)
        }
        var k = slots.startIndex
        var i = 0
        while i < block.count {
            let number = SlotSummary.number(block.starts[i])
            guard k < slots.endIndex, slots[k].start == number * SlotSummary.micros else {
                throw bad("no slot summary for the sample at \(ISO8601.format(block.starts[i], .zulu))")
            }
            var (samples, values, low, high, sum) = (0, 0, Double.infinity, -Double.infinity, 0.0)
            while i < block.count && SlotSummary.number(block.starts[i]) == number {
                samples += 1
                if let v = block.value(at: i, in: self) {
                    values += 1
                    (low, high, sum) = (Swift.min(low, v), Swift.max(high, v), sum + v)
                }
                i += 1
            }
            let s = slots[k]
            guard s.sampleCount == samples, s.valueCount == values,
                values == 0
                    || (s.minValue == low
                        && s.maxValue == high && abs(s.sum - sum) <= 1e-9 * Swift.max(1, abs(sum)))
            else {
                throw bad(
                    "slot at \(ISO8601.format(s.start, .zulu)) says \(s.sampleCount) samples, \(s.valueCount) values, "
                        + "\(s.minValue)…\(s.maxValue), sum \(s.sum); the block holds \(samples), \(values), "
                        + "\(low)…\(high), sum \(sum)")
            }
            k += 1
        }
        guard k == slots.endIndex else { throw bad("\(slots.endIndex - k) slot summaries without samples") }
    }
}
