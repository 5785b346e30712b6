/// A block's totals either side of one bucket edge from its slot summaries (Formats/segment-v3.md
/// §6.1) when its values are whole numbers: the slots on the side with fewer of them are added up
/// and the other side is the block's index entry (§6) less them, so a day in another zone than the
/// one blocks end in reads a few quarter hours around its midnight, not the block's samples.
enum SlotSides {
    /// A slot's fields but its squared sum, in a block whose samples all have values.
    struct ValuedSlot {
        var gap: UInt64
        var samples: UInt64
        var minimumDelta: Int64
        var range: UInt64
        var deviations: UInt64
    }

    /// Where a walk through one block's slots stands: at byte `i`, after slot number `slot` (whose
    /// minimum mantissa is `minimum`), `read` slots read. Slot fields are checked against bounds
    /// that keep every sum below 2^63 (`ok`); the totals, against the block's after the walk.
    struct Walk {
        var i: Int
        var slot: Int64
        var minimum: Int64 = 0
        var read = 0
        var ok = true

        /// Samples a slot may hold, and its minimum's change and range: far beyond a block's
        /// (65,536 samples, extremes within ±2^31), small enough that nothing added up wraps.
        static let fieldBound: UInt64 = 1 << 33
        /// Slots between two of a block's: 2^24 quarter hours are 479 years.
        static let gapBound: UInt64 = 1 << 24

        /// Reads the slot at `i` and moves to it; returns its samples, its deviations and its
        /// maximum mantissa (its minimum is then `minimum`).
        @inline(__always)
        mutating func step(_ base: UnsafeRawPointer) -> (samples: UInt64, deviations: UInt64, maximum: Int64) {
            let s = SlotSides.valuedSlot(base, &i, &ok)
            ok =
                ok && s.gap < Self.gapBound && (read > 0 || s.gap == 0) && s.samples &- 1 < Self.fieldBound
                && s.minimumDelta.magnitude < Self.fieldBound && s.range < Self.fieldBound
                && s.deviations <= s.range &* s.samples
            slot &+= 1 &+ Int64(bitPattern: s.gap)
            minimum &+= s.minimumDelta
            read += 1
            return (s.samples, s.deviations, minimum &+ Int64(bitPattern: s.range))
        }

        /// Reads the slot at `i` for its samples and extremes alone and moves to it; returns its
        /// samples and maximum mantissa. A slot of five one-byte fields (gap, samples, valueless,
        /// minimum, range) and two more within eight bytes, as most are, is read from two loads
        /// (~85 instructions with the loop around it, against ~130 to add one up); any other as
        /// ``step(_:)`` reads it.
        @inline(__always)
        mutating func skim(_ base: UnsafeRawPointer) -> (samples: UInt64, maximum: Int64) {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let ends =
                ~UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i + 5, as: UInt64.self))
                & 0x8080_8080_8080_8080
            // The end of the last two fields: the second byte from the sixth on without its top bit.
            let second = (ends & (ends &- 1)).trailingZeroBitCount
            guard word & SlotRunReader.quickHead == 0, word >> 16 & 0x7F == 0, second < 64 else {
                let (samples, _, maximum) = step(base)
                return (samples, maximum)
            }
            let (gap, samples) = (word & 0x7F, word >> 8 & 0x7F)
            ok = ok && (read > 0 || gap == 0) && samples >= 1
            slot &+= 1 &+ Int64(bitPattern: gap)
            minimum &+= ZigZag.decode(word >> 24 & 0x7F)
            read += 1
            i &+= 6 &+ second / 8
            return (samples, minimum &+ Int64(bitPattern: word >> 32 & 0x7F))
        }
    }

    /// The totals of the block `summary` (whose values total `whole`,
    /// ``SegmentReader/wholeNumbers(_:)``) before and from `edge`, a slot boundary strictly inside
    /// it, from its `n` slots at `bytes[start...]` (its scale byte first), and the position after
    /// them. The side with fewer slots is added up, the other is the block's less it
    /// (``earlierAddedUp`` and ``laterAddedUp``). Nil for slots at a scale other than 0, or anything
    /// unusual (as ``SlotRunReader/read(_:end:at:count:summary:lo:hi:bucketEnd:into:)``): the caller
    /// reads the block another way, which names what is wrong. Bytes from `regionEnd` to
    /// `bytes.count` are padding (``SlotRunReader/room`` zeros).
    static func totals(
        _ bytes: UnsafeRawBufferPointer, end regionEnd: Int, at start: Int, count n: Int, summary: BlockSummary,
        whole: ValueTotals, edge: Int64
    ) -> (before: ValueTotals, after: ValueTotals, end: Int)? {
        let (firstSlot, lastSlot) = (SlotSummary.number(summary.firstStart), SlotSummary.number(summary.lastStart))
        let edgeSlot = SlotSummary.number(edge)
        guard let base = bytes.baseAddress, start >= 0, start < regionEnd, regionEnd <= bytes.count,
            bytes[start] == 0, edge == edgeSlot &* SlotSummary.micros, firstSlot < edgeSlot, edgeSlot <= lastSlot,
            whole.count == summary.sampleCount, n >= 2
        else { return nil }
        let block = Block(
            base: base, limit: bytes.count - SlotRunReader.room, count: n, whole: whole, edgeSlot: edgeSlot,
            lastSlot: lastSlot)
        var walk = Walk(i: start + 1, slot: firstSlot - 1)
        let sides =
            lastSlot - edgeSlot < edgeSlot - firstSlot
            ? laterAddedUp(block, &walk) : earlierAddedUp(block, &walk, bytes)
        guard let (before, after, end) = sides, walk.slot <= lastSlot, walk.read < n || walk.slot == lastSlot,
            end <= regionEnd, after.sum >= after.minimum &* Int64(after.count),
            after.sum <= after.maximum &* Int64(after.count)
        else { return nil }
        return (before, after, end)
    }

    /// What the two ways of adding up a block's sides read it with.
    struct Block {
        let base: UnsafeRawPointer
        /// The last position at which a slot may begin (``SlotRunReader/room`` bytes readable).
        let limit: Int
        let count: Int
        let whole: ValueTotals
        let edgeSlot: Int64
        let lastSlot: Int64
    }

    /// The earlier side added up, and the later side the block's less it. The later slots are read
    /// only when the earlier side holds an extreme of the block (the later side's own is then
    /// sought, ``Walk/skim(_:)``), and otherwise stepped over by counting the ends of their fields.
    private static func earlierAddedUp(_ b: Block, _ outer: inout Walk, _ bytes: UnsafeRawBufferPointer)
        -> (ValueTotals, ValueTotals, Int)?
    {
        // A local walk, kept in registers (the caller's is in memory), handed back at the end.
        var walk = outer
        defer { outer = walk }
        let (n, whole) = (b.count, b.whole)
        var before = ValueTotals()
        while walk.read < n && walk.i <= b.limit {
            // A slot from the edge on is read and then given back: cheaper than reading its gap twice.
            let kept = walk
            let (samples, deviations, maximum) = walk.step(b.base)
            guard walk.slot < b.edgeSlot else {
                walk = kept
                break
            }
            before.add(slotOf: samples, minimum: walk.minimum, maximum: maximum, deviations: deviations)
        }
        // Stopped at the first slot from the edge on: one lies there, since edge <= lastStart.
        guard walk.ok, walk.read >= 1, walk.read < n, walk.i <= b.limit, before.count < whole.count,
            before.minimum >= whole.minimum, before.maximum <= whole.maximum
        else { return nil }
        var after = ValueTotals(
            count: whole.count - before.count, minimum: whole.minimum, maximum: whole.maximum,
            sum: whole.sum &- before.sum)
        let (seekMinimum, seekMaximum) = (before.minimum == whole.minimum, before.maximum == whole.maximum)
        if seekMinimum || seekMaximum {
            // The later side's own extremes, sought until each equals the block's (none lies beyond).
            var (low, high) = (Int64.max, Int64.min)
            while walk.read < n && walk.i <= b.limit
                && (seekMinimum && low != whole.minimum || seekMaximum && high != whole.maximum)
            {
                high = Swift.max(high, walk.skim(b.base).maximum)
                low = Swift.min(low, walk.minimum)
            }
            let found = !(seekMinimum && low != whole.minimum || seekMaximum && high != whole.maximum)
            guard walk.ok, walk.read == n || found, low >= whole.minimum, high <= whole.maximum else { return nil }
            if seekMinimum { after.minimum = low }
            if seekMaximum { after.maximum = high }
        }
        guard walk.read < n else { return (before, after, walk.i) }
        guard let end = SlotRunReader.endOfFields(bytes, at: walk.i, count: 7 * (n - walk.read)) else { return nil }
        return (before, after, end)
    }

    /// The later side added up, and the earlier side the block's less it; the earlier slots are
    /// read for their samples and extremes alone (``Walk/skim(_:)``). Every slot is read: the checks
    /// of a whole block's slots apply (§6.1).
    private static func laterAddedUp(_ b: Block, _ outer: inout Walk) -> (ValueTotals, ValueTotals, Int)? {
        var walk = outer
        defer { outer = walk }
        let (n, whole) = (b.count, b.whole)
        var (samples, low, high) = (UInt64(0), Int64.max, Int64.min)
        while walk.read < n && walk.i <= b.limit {
            let kept = walk
            let slot = walk.skim(b.base)
            guard walk.slot < b.edgeSlot else {
                walk = kept
                break
            }
            (samples, high) = (samples &+ slot.samples, Swift.max(high, slot.maximum))
            low = Swift.min(low, walk.minimum)
        }
        let earlier = walk.read
        var after = ValueTotals()
        while walk.read < n && walk.i <= b.limit {
            let (count, deviations, maximum) = walk.step(b.base)
            after.add(slotOf: count, minimum: walk.minimum, maximum: maximum, deviations: deviations)
        }
        guard walk.ok, earlier >= 1, earlier < n, walk.read == n, walk.slot == b.lastSlot, after.count >= 1,
            after.count < whole.count, samples == UInt64(whole.count - after.count),
            Swift.min(low, after.minimum) == whole.minimum, Swift.max(high, after.maximum) == whole.maximum
        else { return nil }
        let before = ValueTotals(
            count: whole.count - after.count, minimum: low, maximum: high, sum: whole.sum &- after.sum)
        return (before, after, walk.i)
    }

    /// The slot at `i` (with ``SlotRunReader/room`` bytes readable there), `i` moved past it; `ok`
    /// false for a slot with samples without values or a field longer than 8 bytes.
    @inline(__always)
    static func valuedSlot(_ base: UnsafeRawPointer, _ i: inout Int, _ ok: inout Bool) -> ValuedSlot {
        let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let (quickDeviations, length) = SlotRunReader.lastFields(word, base + i)
        guard length > 0 else { return slowSlot(base, &i, &ok) }
        i &+= length
        ok = ok && word >> 16 & 0x7F == 0
        return ValuedSlot(
            gap: word & 0x7F, samples: word >> 8 & 0x7F, minimumDelta: ZigZag.decode(word >> 24 & 0x7F),
            range: word >> 32 & 0x7F, deviations: quickDeviations)
    }

    /// ``valuedSlot(_:_:_:)`` field by field, for a slot whose fields are not all short.
    @inline(never)
    private static func slowSlot(_ base: UnsafeRawPointer, _ i: inout Int, _ ok: inout Bool) -> ValuedSlot {
        let gap = SlotRunReader.varint(base, &i, &ok)
        let samples = SlotRunReader.varint(base, &i, &ok)
        let valueless = SlotRunReader.varint(base, &i, &ok)
        ok = ok && valueless == 0  // no sample without a value
        let minimumDelta = ZigZag.decode(SlotRunReader.varint(base, &i, &ok))
        let range = SlotRunReader.varint(base, &i, &ok)
        let deviations = SlotRunReader.varint(base, &i, &ok)
        _ = SlotRunReader.varint(base, &i, &ok)  // the squared deviations: no spread asked for
        return ValuedSlot(gap: gap, samples: samples, minimumDelta: minimumDelta, range: range, deviations: deviations)
    }
}

extension ValueTotals {
    /// Adds a slot of `samples` mantissas from `minimum` to `maximum` whose Σ(m − minimum) is
    /// `deviations` (§6.1), wrapping: the walk's bounds and checks keep real totals far from it.
    @inline(__always)
    mutating func add(slotOf samples: UInt64, minimum: Int64, maximum: Int64, deviations: UInt64) {
        count &+= Int(truncatingIfNeeded: samples)
        sum &+= minimum &* Int64(truncatingIfNeeded: samples) &+ Int64(truncatingIfNeeded: deviations)
        self.minimum = Swift.min(self.minimum, minimum)
        self.maximum = Swift.max(self.maximum, maximum)
    }
}
