/// One run of a column's packed numbers (Formats/segment-v3.md §5.1), located in a block's
/// decompressed bytes but not unpacked: the whole column for FOR and delta-FOR, one miniblock of
/// up to 128 deltas for delta miniblocks.
struct PackedRun {
    var reference: Int64
    var width: Int
    /// The packed bytes, with ``IntColumn/readSlack`` readable bytes after them.
    var bytes: UnsafeRawPointer
    var count: Int

    /// Packed number `i` (`0 ..< count`).
    @inline(__always)
    func number(_ i: Int) -> UInt64 {
        guard width > 0 else { return 0 }
        let bit = i * width
        let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
        let shift = UInt64(bit & 7)
        guard width > 56 else { return (word >> shift) & ((1 << UInt64(width)) - 1) }
        // Up to 64 bits from bit 7 of a byte reach into a ninth byte.
        var v = word >> shift
        if shift > 0 { v |= UInt64(bytes.load(fromByteOffset: (bit >> 3) + 8, as: UInt8.self)) << (64 - shift) }
        return width == 64 ? v : v & ((1 << UInt64(width)) - 1)
    }

    /// Number `i`'s value: `reference + p` (a value of FOR, a delta of the others).
    @inline(__always)
    func value(_ i: Int) -> Int64 { reference &+ Int64(bitPattern: number(i)) }
}

/// The smallest and largest of some whole-number values, their sum and how many they are.
struct ValueTotals: Equatable {
    var count = 0
    var minimum = Int64.max
    var maximum = Int64.min
    var sum: Int64 = 0

    @inline(__always)
    mutating func add(_ v: Int64) {
        count += 1
        minimum = Swift.min(minimum, v)
        maximum = Swift.max(maximum, v)
        sum &+= v
    }
}

/// An integer column (§5.1) with its headers read and its runs located, for finding where its
/// values cross a limit, or adding them up, without unpacking them into memory: an aggregate that
/// needs a block's totals either side of one bucket edge reads it this way (``SegmentReader``'s
/// `sideTotals`). Reused from block to block (its runs keep their memory).
struct PackedColumn {
    /// Deltas (delta-FOR and miniblocks): value 0 is `first`, and value `i` the one before plus
    /// delta `i` (the runs' numbers in order). Otherwise FOR: one run whose numbers are the values.
    private(set) var deltas = false
    private(set) var first: Int64 = 0
    private(set) var count = 0
    private(set) var runs: [PackedRun] = []

    /// Values whose magnitude is below this add up to no more than 2^47 over a block (65,536 values),
    /// so sums are exact in a Double; larger values are left to the decoder.
    static let valueBound: Int64 = 1 << 31

    /// Reads a column of `count` values at `reader` (which must sit on a buffer with
    /// ``IntColumn/readSlack`` readable bytes after its end) and moves past it.
    mutating func locate(_ reader: inout ByteReader, count n: Int) throws(TSDBError) {
        runs.removeAll(keepingCapacity: true)
        count = n
        let raw = try reader.u8("column encoding")
        switch IntColumn.Encoding(rawValue: raw) {
        case .frameOfReference:
            deltas = false
            try run(&reader, count: n)
        case .deltaFrameOfReference:
            guard n > 0 else { throw reader.fail("delta-FOR column with no values") }
            (deltas, first) = (true, try reader.varint("delta-FOR first value"))
            try run(&reader, count: n - 1)
        case .deltaMiniblocks:
            guard n > 1 else { throw reader.fail("miniblock column with fewer than 2 values") }
            (deltas, first) = (true, try reader.varint("miniblock first value"))
            var start = 1
            while start < n {
                let size = Swift.min(IntColumn.miniblockSize, n - start)
                try run(&reader, count: size)
                start += size
            }
        case nil:
            throw reader.fail(
                "unknown integer column encoding \(raw), expected 0 (FOR), 1 (delta-FOR) or 2 (miniblocks)")
        }
    }

    private mutating func run(_ reader: inout ByteReader, count: Int) throws(TSDBError) {
        let reference = try reader.varint("run reference")
        let width = Int(try reader.u8("bit width"))
        guard width <= 64 else { throw reader.fail("bit width \(width) is more than 64") }
        let packed = try reader.bytes(IntColumn.packedByteCount(count: count, width: width), "packed numbers")
        // A column of width 0 has no bytes; its numbers are never loaded.
        let bytes = packed.baseAddress ?? UnsafeRawPointer(reader.buffer.baseAddress!)
        runs.append(PackedRun(reference: reference, width: width, bytes: bytes, count: count))
    }

    /// Every value is `value` (FOR of width 0).
    func isUniform(_ value: Int64) -> Bool {
        !deltas && runs.count == 1 && runs[0].width == 0 && runs[0].reference == value
    }

    /// How many values come before the first that is ≥ `limit`, for values in ascending order (a
    /// block's start offsets): FOR by bisection, deltas by walking from the end nearer the answer
    /// (`fromEnd`, from `last`, the column's last value, which the caller knows).
    func count(below limit: Int64, last: Int64, fromEnd: Bool) -> Int {
        guard deltas else {
            let run = runs[0]
            var (low, high) = (0, count)
            while low < high {
                let middle = (low + high) / 2
                if run.value(middle) < limit { low = middle + 1 } else { high = middle }
            }
            return low
        }
        return fromEnd ? countBackward(below: limit, last: last) : countForward(below: limit)
    }

    private func countForward(below limit: Int64) -> Int {
        var v = first
        guard v < limit else { return 0 }
        var index = 0
        for run in runs {
            for j in 0..<run.count {
                v = v &+ run.value(j)
                index += 1
                if v >= limit { return index }
            }
        }
        return count
    }

    private func countBackward(below limit: Int64, last: Int64) -> Int {
        var v = last
        guard v >= limit else { return count }
        var index = count - 1
        for run in runs.reversed() {
            for j in stride(from: run.count - 1, through: 0, by: -1) {
                // Delta `index` leads from value `index - 1` to value `index`.
                v = v &- run.value(j)
                if v < limit { return index }
                index -= 1
            }
        }
        return 0
    }

    /// Totals of values `0 ..< split` and `split ..< count`, or nil when a value's magnitude
    /// reaches ``valueBound``. With `whole`, the totals of all the values (a block's index entry),
    /// the side with fewer values is added up alone where that is cheaper (the first, or either of
    /// FOR) and the other taken as the rest: it holds the whole's extremes when the fewer hold
    /// neither. (When they hold one, the rest may too or not, and both sides are added up.)
    func totals(split: Int, whole: ValueTotals?) -> (before: ValueTotals, after: ValueTotals)? {
        if let whole, whole.count == count, split <= count - split || !deltas,
            let sides = fewerAndRest(split: split, whole: whole)
        {
            return sides
        }
        var before = ValueTotals()
        var after = ValueTotals()
        if deltas {
            var v = first
            var index = 1
            if split > 0 { before.add(v) } else { after.add(v) }
            for run in runs {
                let cut = Swift.min(Swift.max(split - index, 0), run.count)
                run.addDeltas(0..<cut, running: &v, to: &before)
                run.addDeltas(cut..<run.count, running: &v, to: &after)
                index += run.count
            }
        } else {
            runs[0].addValues(0..<split, to: &before)
            runs[0].addValues(split..<count, to: &after)
        }
        return Self.bounded(before, after) ? (before, after) : nil
    }

    private func fewerAndRest(split: Int, whole: ValueTotals) -> (before: ValueTotals, after: ValueTotals)? {
        let fewerFirst = split <= count - split
        var fewer = ValueTotals()
        if !deltas {
            runs[0].addValues(fewerFirst ? 0..<split : split..<count, to: &fewer)
        } else {
            // The first `split` values: value 0 is `first`, then the runs' deltas until there are enough.
            var v = first
            if split > 0 { fewer.add(v) }
            for run in runs where fewer.count < split {
                run.addDeltas(0..<Swift.min(split - fewer.count, run.count), running: &v, to: &fewer)
            }
        }
        guard fewer.minimum > whole.minimum, fewer.maximum < whole.maximum else { return nil }
        let rest = ValueTotals(
            count: count - fewer.count, minimum: whole.minimum, maximum: whole.maximum, sum: whole.sum &- fewer.sum)
        // The whole's figures come from the index entry: a sum its extremes cannot make is not used.
        guard Self.bounded(fewer, whole), rest.sum >= whole.minimum &* Int64(rest.count),
            rest.sum <= whole.maximum &* Int64(rest.count)
        else { return nil }
        return fewerFirst ? (fewer, rest) : (rest, fewer)
    }

    private static func bounded(_ a: ValueTotals, _ b: ValueTotals) -> Bool {
        Swift.min(a.minimum, b.minimum) > -valueBound && Swift.max(a.maximum, b.maximum) < valueBound
    }
}

extension PackedRun {
    /// Adds values `reference + p` of numbers `range` to `totals` (FOR).
    func addValues(_ range: Range<Int>, to totals: inout ValueTotals) {
        var unused: Int64 = 0
        add(range, deltas: false, running: &unused, to: &totals)
    }

    /// Adds the values reached by deltas `reference + p` of numbers `range` from `running` on
    /// (which ends at the last of them) to `totals`.
    func addDeltas(_ range: Range<Int>, running: inout Int64, to totals: inout ValueTotals) {
        add(range, deltas: true, running: &running, to: &totals)
    }

    /// Heart rate's values and deltas take 1–16 bits: each width gets its own copy of the loop, where
    /// the shifts and masks are constants (as ``IntColumn``'s unpacking does).
    private func add(_ range: Range<Int>, deltas: Bool, running: inout Int64, to totals: inout ValueTotals) {
        guard !range.isEmpty else { return }
        switch width {
        case 1: add(range, IntColumn.Width<1>.self, deltas, &running, &totals)
        case 2: add(range, IntColumn.Width<2>.self, deltas, &running, &totals)
        case 3: add(range, IntColumn.Width<3>.self, deltas, &running, &totals)
        case 4: add(range, IntColumn.Width<4>.self, deltas, &running, &totals)
        case 5: add(range, IntColumn.Width<5>.self, deltas, &running, &totals)
        case 6: add(range, IntColumn.Width<6>.self, deltas, &running, &totals)
        case 7: add(range, IntColumn.Width<7>.self, deltas, &running, &totals)
        case 8: add(range, IntColumn.Width<8>.self, deltas, &running, &totals)
        case 9: add(range, IntColumn.Width<9>.self, deltas, &running, &totals)
        case 10: add(range, IntColumn.Width<10>.self, deltas, &running, &totals)
        case 11: add(range, IntColumn.Width<11>.self, deltas, &running, &totals)
        case 12: add(range, IntColumn.Width<12>.self, deltas, &running, &totals)
        default:
            var (v, low, high, sum) = (running, totals.minimum, totals.maximum, totals.sum)
            for i in range {
                v = deltas ? v &+ value(i) : value(i)
                (low, high, sum) = (Swift.min(low, v), Swift.max(high, v), sum &+ v)
            }
            (running, totals.minimum, totals.maximum, totals.sum) = (v, low, high, sum)
            totals.count += range.count
        }
    }

    /// Eight numbers of `w` bits take exactly `w` bytes, so from a multiple of eight on, number `k`
    /// of each group of eight lies at the same bit offset: constants in the copy for one width.
    @inline(__always)
    private func add<let w: Int>(
        _ range: Range<Int>, _: IntColumn.Width<w>.Type, _ deltas: Bool, _ running: inout Int64,
        _ totals: inout ValueTotals
    ) {
        let mask: UInt64 = (1 << UInt64(w)) - 1
        let reference = self.reference
        var (v, low, high, sum) = (running, totals.minimum, totals.maximum, totals.sum)
        @inline(__always) func take(_ at: UnsafeRawPointer, bit: Int) {
            let word = UInt64(littleEndian: at.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
            let number = reference &+ Int64(bitPattern: (word >> UInt64(bit & 7)) & mask)
            v = deltas ? v &+ number : number
            (low, high, sum) = (Swift.min(low, v), Swift.max(high, v), sum &+ v)
        }
        var i = range.lowerBound
        let end = range.upperBound
        while i < end && i & 7 != 0 {
            take(bytes, bit: i &* w)
            i &+= 1
        }
        var group = bytes + (i >> 3) &* w
        while i &+ 8 <= end {
            for k in 0..<8 { take(group, bit: k * w) }
            group += w
            i &+= 8
        }
        while i < end {
            take(bytes, bit: i &* w)
            i &+= 1
        }
        (running, totals.minimum, totals.maximum, totals.sum) = (v, low, high, sum)
        totals.count += range.count
    }
}
