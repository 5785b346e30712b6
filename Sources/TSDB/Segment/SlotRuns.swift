/// Consecutive slot summaries of one block that fall in one bucket, added up as exact integers
/// at the block's scale: all an aggregate needs of them when it asks for no spread.
struct SlotRun: Equatable {
    /// The first slot's start, µs since the epoch (UTC).
    var start: Int64
    var samples = 0
    var values = 0
    /// Over the mantissas of the values (`Int64.max`, `Int64.min` and 0 without values).
    var minimum = Int64.max
    var maximum = Int64.min
    var sum: Int64 = 0

    func summary(scale: UInt8) -> SlotSummary {
        SlotTotals.summary(
            samples: samples, values: values, minimum: minimum, maximum: maximum, sum: sum, scale: scale)
    }
}

/// Reads one block's slot summaries (Formats/segment-v3.md §6.1) and adds them up bucket by bucket
/// in the same pass, keeping none: an aggregate that needs no spread wants only each bucket's
/// totals. Reading every slot into a ``StoredSlot`` (with each field's bytes checked one by one)
/// and adding them up after took ~300 instructions a slot (callgrind, the year's daily heart rate
/// in UTC days: 13,473 slots, a quarter of the query). Fields are read with one bounds check a slot
/// and every check of ``SlotRegion/decodeBlock`` is folded into one flag: anything unusual (the
/// region's last bytes, a field longer than 8 bytes, a sum past 64 bits, a check that fails) gives
/// nil, and the block is read the checked way, which names what is wrong.
enum SlotRunReader {
    /// Room for the longest slot: seven varints of at most 10 bytes.
    static let room = 70
    /// The top bits of a slot's first five fields (§6.1: gap, samples, valueless, minimum, range):
    /// clear when each has one byte, as in most slots (a watch's heart rate, a few to ~120 samples
    /// a quarter hour within ~127 bpm); the deviations and the squared sum follow (``lastFields``).
    static let quickHead: UInt64 = 0x80_8080_8080

    /// The runs of block `summary`'s `n` slots at `bytes[start...]` (its scale byte first) that lie
    /// in `[lo, hi)`, cut at the ends of buckets (`bucketEnd(t)`: the end of the bucket holding
    /// `t`), appended to `runs`; and the position after the block's slots, and their scale. The
    /// caller knows that every slot lies wholly inside or outside `[lo, hi)` and inside one bucket.
    /// The region ends at `end`; bytes from there to `bytes.count` are padding (zeros), which lets
    /// the slots near its end be read as quickly as the others, and which no slot may reach into.
    static func read(
        _ bytes: UnsafeRawBufferPointer, end regionEnd: Int, at start: Int, count n: Int, summary: BlockSummary,
        lo: Int64, hi: Int64, bucketEnd: (Int64) -> Int64, into runs: inout [SlotRun]
    ) -> (end: Int, scale: UInt8)? {
        let kept = runs.count
        guard start < regionEnd, regionEnd <= bytes.count,
            let read = slots(
                bytes, at: start, count: n, summary: summary, lo: lo, hi: hi, bucketEnd: bucketEnd, into: &runs)
        else { return nil }
        guard read.end <= regionEnd else {
            runs.removeSubrange(kept...)
            return nil
        }
        return read
    }

    /// ``read(_:end:at:count:summary:lo:hi:bucketEnd:into:)`` but for the end: slots may reach past it.
    private static func slots(
        _ bytes: UnsafeRawBufferPointer, at start: Int, count n: Int, summary: BlockSummary, lo: Int64, hi: Int64,
        bucketEnd: (Int64) -> Int64, into runs: inout [SlotRun]
    ) -> (end: Int, scale: UInt8)? {
        guard let base = bytes.baseAddress, start < bytes.count else { return nil }
        let scale = bytes[start]
        let (firstSlot, lastSlot) = (SlotSummary.number(summary.firstStart), SlotSummary.number(summary.lastStart))
        var (i, slot, previousMin) = (start + 1, firstSlot - 1, Int64(0))
        var (samples, values, read) = (UInt64(0), UInt64(0), 0)
        var (low, high) = (Int64.max, Int64.min)
        var ok = scale <= 18
        var run = SlotRun(start: 0)
        var runEnd = Int64.min
        let kept = runs.count
        let limit = UInt64(SlotRegion.mantissaLimit)
        // A flaw found in a quick slot (below), checked once after the loop.
        var flawed = false
        while read < n && ok && bytes.count - i >= room {
            read += 1
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let (quickDeviations, length) = Self.lastFields(word, base + i)
            if length > 0 {
                // Five one-byte fields, values in the slot, deviations below 2^14, a squared sum of
                // at most four bytes: nothing here can overflow but the run's sum, and the other
                // checks (the slots' order, the counts, the mantissas' bounds) follow from the
                // block's after the loop.
                i &+= length
                let (gap, count, v) = (word & 0x7F, word >> 8 & 0x7F, (word >> 8 & 0x7F) &- (word >> 16 & 0x7F))
                flawed = flawed || (slot < firstSlot && gap != 0)
                slot &+= 1 &+ Int64(bitPattern: gap)
                (samples, values) = (samples &+ count, values &+ v)
                let minimum = previousMin &+ ZigZag.decode(word >> 24 & 0x7F)
                let range = word >> 32 & 0x7F
                let maximum = minimum &+ Int64(bitPattern: range)
                flawed = flawed || quickDeviations > range &* v
                previousMin = minimum
                (low, high) = (Swift.min(low, minimum), Swift.max(high, maximum))
                let slotStart = slot &* SlotSummary.micros
                guard slotStart >= lo && slotStart < hi else { continue }
                if slotStart >= runEnd {
                    if run.samples > 0 { runs.append(run) }
                    run = SlotRun(start: slotStart)
                    runEnd = bucketEnd(slotStart)
                }
                let (sum, overflow) = run.sum.addingReportingOverflow(minimum &* Int64(v) &+ Int64(quickDeviations))
                flawed = flawed || overflow
                (run.samples, run.values, run.sum) = (run.samples &+ Int(count), run.values &+ Int(v), sum)
                (run.minimum, run.maximum) = (Swift.min(run.minimum, minimum), Swift.max(run.maximum, maximum))
                continue
            }
            let gap = varint(base, &i, &ok)
            let room = lastSlot &- slot &- 1
            ok = ok && room >= 0 && gap <= UInt64(room) && (slot >= firstSlot || gap == 0)
            slot &+= 1 &+ Int64(bitPattern: gap)
            let count = varint(base, &i, &ok)
            let valueless = varint(base, &i, &ok)
            ok = ok && count >= 1 && count <= UInt64(summary.sampleCount) &- samples && valueless <= count
            samples &+= count
            values &+= count &- valueless
            let slotStart = slot &* SlotSummary.micros
            let counted = ok && slotStart >= lo && slotStart < hi
            if counted && slotStart >= runEnd {
                if run.samples > 0 { runs.append(run) }
                run = SlotRun(start: slotStart)
                runEnd = bucketEnd(slotStart)
            }
            if counted { run.samples += Int(count) }
            guard count > valueless else { continue }
            let v = count &- valueless
            let (minimum, o1) = previousMin.addingReportingOverflow(ZigZag.decode(varint(base, &i, &ok)))
            let range = varint(base, &i, &ok)
            let deviations = varint(base, &i, &ok)
            _ = varint(base, &i, &ok)  // the squared deviations: no spread asked for
            let (bound, o2) = range.multipliedReportingOverflow(by: v)
            let maximum = minimum &+ Int64(bitPattern: range)
            ok =
                ok && !o1 && minimum.magnitude <= limit && range <= 2 * limit && (o2 || deviations <= bound)
                && maximum.magnitude <= limit
            previousMin = minimum
            (low, high) = (Swift.min(low, minimum), Swift.max(high, maximum))
            guard counted else { continue }
            // Σ m over the slot is minimum·values + Σ(m − minimum), as SlotTotals adds it up.
            let (product, o3) = minimum.multipliedReportingOverflow(by: Int64(v))
            let (total, o4) = product.addingReportingOverflow(Int64(bitPattern: deviations))
            let (sum, o5) = run.sum.addingReportingOverflow(total)
            ok = ok && !(o3 || o4 || o5) && deviations <= UInt64(Int64.max)
            run.values += Int(v)
            run.sum = sum
            run.minimum = Swift.min(run.minimum, minimum)
            run.maximum = Swift.max(run.maximum, maximum)
        }
        if run.samples > 0 { runs.append(run) }
        let divisor = ExactDecimal.powersOfTen[Int(Swift.min(scale, 18))]
        let extremes = (Double(low) / divisor, Double(high) / divisor)
        ok =
            ok && !flawed && read == n && slot == lastSlot
            && (values == 0 || low.magnitude <= limit && high.magnitude <= limit)
            && samples == UInt64(summary.sampleCount) && values == UInt64(summary.valueCount)
            && (values == 0 || extremes == (summary.minValue, summary.maxValue))
        guard ok else {
            runs.removeSubrange(kept...)
            return nil
        }
        return (i, scale)
    }

    /// The deviations of the slot whose first eight bytes are `word` (at `at`) and the slot's
    /// length, when its first five fields have a byte each, its samples some values, and its last
    /// two fields at most two and four bytes; else length 0. The ends of those two are found eight
    /// bytes at a time, whether the deviations take one byte (a watch's slots: a year's heart rate)
    /// or two (a denser one's: 93% of five heavy years'); trying one byte first, from `word` alone,
    /// cost the heavy years' daily heart rate 5% more and saved the year nothing.
    @inline(__always)
    static func lastFields(_ word: UInt64, _ at: UnsafeRawPointer) -> (deviations: UInt64, length: Int) {
        // The first byte from the sixth on without its top bit set ends the deviations, the next the squared sum.
        let ends = ~UInt64(littleEndian: at.loadUnaligned(fromByteOffset: 5, as: UInt64.self)) & 0x80_8080_8080
        let (deviationsEnd, squaredEnd) = (ends.trailingZeroBitCount, (ends & (ends &- 1)).trailingZeroBitCount)
        guard word & quickHead == 0 && word >> 16 & 0x7F < word >> 8 & 0x7F && deviationsEnd <= 15 && squaredEnd < 64
        else { return (0, 0) }
        let deviations = deviationsEnd == 7 ? word >> 40 & 0x7F : word >> 40 & 0x7F | (word >> 41) & 0x3F80
        return (deviations, 6 + squaredEnd / 8)
    }

    /// The position after the slots of the block at `start` (its slot count first) when each of its
    /// slots has all seven fields (Formats/segment-v3.md §6.1: no sample of the block is without a
    /// value), found by counting the bytes that end a field, eight at a time; nil within ``room``
    /// bytes of the region's end or for a slot count longer than 8 bytes. Stepping field by field
    /// took ~72 instructions a slot: 13.1M of five heavy years' Europe/Paris days when every
    /// segment's region was opened, ~4M of their UTC days.
    static func endOfValuedBlock(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        guard let base = bytes.baseAddress, start >= 0, bytes.count - start >= room else { return nil }
        var (i, ok) = (start, true)
        let n = varint(base, &i, &ok)
        guard ok, n <= UInt64(bytes.count) else { return nil }
        guard n > 0 else { return i }
        return endOfFields(bytes, at: i + 1, count: 7 * Int(n))  // after the scale
    }

    /// The position after the `count` varints at `start` (`count` ≥ 1), found by counting the bytes
    /// that end one, eight at a time; nil when they reach within 8 bytes of the end of `bytes`.
    static func endOfFields(_ bytes: UnsafeRawBufferPointer, at start: Int, count: Int) -> Int? {
        guard let base = bytes.baseAddress, start >= 0, count >= 1 else { return nil }
        var (i, fields) = (start, count)
        while bytes.count - i >= 8 {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            var ends = ~word & 0x8080_8080_8080_8080
            // The ends' count as the sum of the bytes (ends >> 7), in the top byte of their
            // product with 0x0101...: the build's baseline x86-64 has no popcnt instruction, and
            // `nonzeroBitCount` took 24 instructions.
            let found = Int(((ends >> 7) &* 0x0101_0101_0101_0101) >> 56)
            guard found >= fields else {
                (fields, i) = (fields - found, i + 8)
                continue
            }
            for _ in 1..<fields { ends &= ends &- 1 }
            return i + ends.trailingZeroBitCount / 8 + 1
        }
        return nil
    }

    /// The varint at `i` (with ``room`` bytes readable there) from one 8-byte load; `ok` false, and
    /// nothing read, for one longer than 8 bytes.
    @inline(__always)
    static func varint(_ base: UnsafeRawPointer, _ i: inout Int, _ ok: inout Bool) -> UInt64 {
        let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if word & 0x80 == 0 {
            i += 1
            return word & 0x7F
        }
        if word & 0x8000 == 0 {
            i += 2
            return word & 0x7F | (word >> 1) & 0x3F80
        }
        let stops = ~word & 0x8080_8080_8080_8080
        guard stops != 0 else {
            ok = false
            return 0
        }
        let length = stops.trailingZeroBitCount / 8 + 1
        var v: UInt64 = 0
        for k in 0..<length { v |= (word >> UInt64(8 * k) & 0x7F) << UInt64(7 * k) }
        i += length
        return v
    }
}
