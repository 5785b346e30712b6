/// A block's totals either side of one bucket edge from its slot summaries (Formats/segment-v3.md
/// §6.1) when its values are whole numbers: the slots before the edge are added up and the later
/// side is the block's index entry (§6) less them, so a day in another zone than the one blocks end
/// in reads the few quarter hours on one side of its midnight, not the block's samples.
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

        /// Reads the slot at `i` and moves to it; returns it and its maximum mantissa.
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

        /// The number of the slot at `i`, read without moving.
        @inline(__always)
        func nextSlot(_ base: UnsafeRawPointer) -> Int64 {
            var (j, ok) = (i, true)
            return slot &+ 1 &+ Int64(bitPattern: SlotRunReader.varint(base, &j, &ok))
        }
    }

    /// The totals of the block `summary` (whose values total `whole`, ``SegmentReader/wholeNumbers(_:)``)
    /// before and from `edge`, a slot boundary strictly inside it, from its `n` slots at `bytes[start...]`
    /// (its scale byte first), and the position after them. The later slots are read only when the
    /// earlier side holds an extreme of the block (the later side's own is then sought); otherwise
    /// they are stepped over by counting the ends of their fields. Nil for slots at a scale other than
    /// 0, or anything unusual (as ``SlotRunReader/read(_:end:at:count:summary:lo:hi:bucketEnd:into:)``):
    /// the caller reads the block another way, which names what is wrong. Bytes from `regionEnd` to
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
        let limit = bytes.count - SlotRunReader.room
        var walk = Walk(i: start + 1, slot: firstSlot - 1)
        var before = ValueTotals()
        while walk.read < n && walk.i <= limit && walk.nextSlot(base) < edgeSlot {
            let (samples, deviations, maximum) = walk.step(base)
            before.count &+= Int(truncatingIfNeeded: samples)
            before.sum &+= walk.minimum &* Int64(truncatingIfNeeded: samples) &+ Int64(truncatingIfNeeded: deviations)
            before.minimum = Swift.min(before.minimum, walk.minimum)
            before.maximum = Swift.max(before.maximum, maximum)
        }
        // Stopped at the first slot from the edge on: one lies there, since edge <= lastStart.
        guard walk.ok, walk.read >= 1, walk.read < n, walk.i <= limit, before.count < whole.count,
            before.minimum >= whole.minimum, before.maximum <= whole.maximum
        else { return nil }
        var after = ValueTotals(
            count: whole.count - before.count, minimum: whole.minimum, maximum: whole.maximum,
            sum: whole.sum &- before.sum)
        let (seekMinimum, seekMaximum) = (before.minimum == whole.minimum, before.maximum == whole.maximum)
        if seekMinimum || seekMaximum {
            // The later side's own extremes, sought until each equals the block's (none lies beyond).
            var (low, high) = (Int64.max, Int64.min)
            while walk.read < n && walk.i <= limit
                && (seekMinimum && low != whole.minimum || seekMaximum && high != whole.maximum)
            {
                high = Swift.max(high, walk.step(base).maximum)
                low = Swift.min(low, walk.minimum)
            }
            let found = !(seekMinimum && low != whole.minimum || seekMaximum && high != whole.maximum)
            guard walk.ok, walk.read == n || found, low >= whole.minimum, high <= whole.maximum else { return nil }
            if seekMinimum { after.minimum = low }
            if seekMaximum { after.maximum = high }
        }
        var end = walk.i
        if walk.read < n {
            guard let stepped = SlotRunReader.endOfFields(bytes, at: walk.i, count: 7 * (n - walk.read)) else {
                return nil
            }
            end = stepped
        }
        guard walk.slot <= lastSlot, walk.read < n || walk.slot == lastSlot, end <= regionEnd,
            after.sum >= after.minimum &* Int64(after.count),
            after.sum <= after.maximum &* Int64(after.count)
        else { return nil }
        return (before, after, end)
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
