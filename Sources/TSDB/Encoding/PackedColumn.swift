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
    /// The runs located are `storage[0 ..< runCount]`; the storage only grows, so that locating a
    /// column neither allocates nor checks the array's uniqueness once per run (appending them was
    /// ~15% of the year's UTC days, which locate three columns in each of 350 blocks).
    private var storage: [PackedRun] = []
    private var runCount = 0
    var runs: ArraySlice<PackedRun> { storage[..<runCount] }

    /// Values whose magnitude is below this add up to no more than 2^47 over a block (65,536 values),
    /// so sums are exact in a Double; larger values are left to the decoder.
    static let valueBound: Int64 = 1 << 31

    /// Reads a column of `count` values at `reader` (which must sit on a buffer with
    /// ``IntColumn/readSlack`` readable bytes after its end) and moves past it.
    mutating func locate(_ reader: inout ByteReader, count n: Int) throws(TSDBError) {
        runCount = 0
        count = n
        let raw = try reader.u8("column encoding")
        switch IntColumn.Encoding(rawValue: raw) {
        case .frameOfReference:
            deltas = false
            try locateRuns(&reader, numbers: n, size: Swift.max(n, 1))
        case .deltaFrameOfReference:
            guard n > 0 else { throw reader.fail("delta-FOR column with no values") }
            (deltas, first) = (true, try reader.varint("delta-FOR first value"))
            try locateRuns(&reader, numbers: n - 1, size: Swift.max(n - 1, 1))
        case .deltaMiniblocks:
            guard n > 1 else { throw reader.fail("miniblock column with fewer than 2 values") }
            (deltas, first) = (true, try reader.varint("miniblock first value"))
            try locateRuns(&reader, numbers: n - 1, size: IntColumn.miniblockSize)
        case nil:
            throw reader.fail(
                "unknown integer column encoding \(raw), expected 0 (FOR), 1 (delta-FOR) or 2 (miniblocks)")
        }
    }

    /// Locates the runs of `numbers` packed numbers, `size` to a run (the last may have fewer; no
    /// numbers are one empty run).
    private mutating func locateRuns(_ reader: inout ByteReader, numbers: Int, size: Int) throws(TSDBError) {
        let needed = numbers == 0 ? 1 : (numbers + size - 1) / size
        if storage.count < needed {
            storage = Array(repeating: PackedRun(reference: 0, width: 0, bytes: reader.start, count: 0), count: needed)
        }
        try storage.withUnsafeMutableBufferPointer { (runs) throws(TSDBError) in
            var start = 0
            for k in 0..<needed {
                let count = Swift.min(size, numbers - start)
                runs[k] = try Self.run(&reader, count: count)
                start += count
            }
        }
        runCount = needed
    }

    @inline(__always)
    private static func run(_ reader: inout ByteReader, count: Int) throws(TSDBError) -> PackedRun {
        let reference = try reader.varint("run reference")
        let width = Int(try reader.u8("bit width"))
        guard width <= 64 else { throw reader.fail("bit width \(width) is more than 64") }
        let packed = try reader.bytes(IntColumn.packedByteCount(count: count, width: width), "packed numbers")
        // A column of width 0 has no bytes; its numbers are never loaded.
        return PackedRun(reference: reference, width: width, bytes: packed.baseAddress ?? reader.start, count: count)
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
        let spread = Double(last &- first)
        let share = spread > 0 ? Swift.min(Swift.max(Double(limit &- first) / spread, 0), 1) : 0
        let guess = Int(Double(count - 1) * share)
        return fromEnd
            ? countBackward(below: limit, last: last, guess: guess) : countForward(below: limit, guess: guess)
    }

    /// Whole runs, then groups of eight deltas, are followed by their sums (the unpacking loop for
    /// their width, ~3 instructions a delta) while they end below `limit`; only the group holding the
    /// answer is walked delta by delta. Walking them all one by one took ~20 instructions a delta:
    /// 3.8M of the year's 13.5M in Lord Howe days added up either side (the edge mid-block). From
    /// the run where the values would reach `limit` if evenly spread (`guess`) on, runs go by groups
    /// from their start: a whole run's sum would likely overshoot (a UTC day's edge an hour into a
    /// block).
    private func countForward(below limit: Int64, guess: Int) -> Int {
        var v = first
        guard v < limit else { return 0 }
        var index = 0  // v is value `index`
        for run in runs {
            var j = 0
            var step = index + run.count < guess ? run.count : Self.group
            while j < run.count {
                let end = run.followed(j..<Swift.min(j + step, run.count), from: v)
                if end < limit {
                    (v, index, j) = (end, index + Swift.min(step, run.count - j), j + step)
                    continue
                }
                if step > Self.group {
                    step = Self.group
                    continue
                }
                for k in j..<Swift.min(j + step, run.count) {
                    v = v &+ run.value(k)
                    index += 1
                    if v >= limit { return index }
                }
                j += step
            }
        }
        return count
    }

    /// As ``countForward(below:guess:)``, from the last value back.
    private func countBackward(below limit: Int64, last: Int64, guess: Int) -> Int {
        var v = last
        guard v >= limit else { return count }
        var index = count - 1  // v is value `index`
        for run in runs.reversed() {
            var j = run.count  // deltas j... of this run are behind
            var step = index - run.count > guess ? run.count : Self.group
            while j > 0 {
                let low = Swift.max(j - step, 0)
                let start = v &- run.followed(low..<j, from: 0)
                if start >= limit {
                    (v, index, j) = (start, index - (j - low), low)
                    continue
                }
                if step > Self.group {
                    step = Self.group
                    continue
                }
                for k in stride(from: j - 1, through: low, by: -1) {
                    // Delta `index` leads from value `index - 1` to value `index`.
                    v = v &- run.value(k)
                    if v < limit { return index }
                    index -= 1
                }
                j = low
            }
        }
        return 0
    }

    /// Deltas followed a group at a time, once a whole run's sum crosses the limit.
    private static let group = 8

    /// Totals of values `0 ..< split` and `split ..< count`, or nil when a value's magnitude
    /// reaches ``valueBound``. With `whole`, the totals of all the values (a block's index entry),
    /// the side with fewer values is added up first, and the other is the whole less it: when the
    /// fewer hold one of the whole's extremes, the rest may too or not, so only its smallest and
    /// largest are found (a day's lowest heart rate is often in the night hours another zone's day
    /// takes from the wearer's). Deltas before a later fewer side are only followed to its start.
    func totals(split: Int, whole: ValueTotals?) -> (before: ValueTotals, after: ValueTotals)? {
        let whole = whole?.count == count ? whole : nil
        var (before, after) = (ValueTotals(), ValueTotals())
        var running: Int64 = 0
        if split <= count - split {
            add(0..<split, running: &running, to: &before)
            if let whole, let rest = rest(of: whole, less: before, split..<count, running: running) {
                return (before, rest)
            }
            add(split..<count, running: &running, to: &after)
        } else {
            if deltas { running = value(before: split) }
            add(split..<count, running: &running, to: &after)
            if let whole, let rest = rest(of: whole, less: after, 0..<split, running: 0) { return (rest, after) }
            add(0..<split, running: &running, to: &before)
        }
        return Self.bounded(before, after) ? (before, after) : nil
    }

    /// Adds values `range` to `totals`. For deltas, `running` holds the value before the range
    /// (unless it starts at 0) and ends on the range's last value.
    private func add(_ range: Range<Int>, running: inout Int64, to totals: inout ValueTotals) {
        guard deltas else { return runs[0].addValues(range, to: &totals) }
        guard !range.isEmpty else { return }
        if range.lowerBound == 0 {
            running = first
            totals.add(first)
        }
        forDeltas(Swift.max(range.lowerBound, 1)..<range.upperBound) { run, numbers in
            run.addDeltas(numbers, running: &running, to: &totals)
        }
    }

    /// Value `index - 1` of a delta column (`index` ≥ 1): its deltas added up, with no minimum,
    /// maximum or sum kept of the values they reach.
    private func value(before index: Int) -> Int64 {
        var running = first
        forDeltas(1..<index) { run, numbers in running = run.followed(numbers, from: running) }
        return running
    }

    /// Calls `body` with each run holding deltas of values `range` (1 ..< count), and the numbers
    /// in that run that lead to them, in order.
    @inline(__always)
    private func forDeltas(_ range: Range<Int>, _ body: (PackedRun, Range<Int>) -> Void) {
        var first = 1
        for run in runs {
            let (low, high) = (Swift.max(range.lowerBound - first, 0), Swift.min(range.upperBound - first, run.count))
            if low < high { body(run, low..<high) }
            first += run.count
            if first >= range.upperBound { return }
        }
    }

    /// The totals of values `range` (the side that is not `fewer`) as `whole` less `fewer`, when
    /// the figures can be (the whole's come from an index entry: a sum the extremes cannot make is
    /// not used). An extreme of the whole that `fewer` does not hold is the rest's; one it holds the
    /// rest may hold too or not, so the rest's own is sought (from `running`, the value before
    /// `range` for deltas), and the search ends at the first value equal to the whole's, beyond
    /// which none lies: a day's lowest heart rate is often in the night hours another zone's day
    /// takes from the wearer's, and whole beats per minute repeat.
    private func rest(of whole: ValueTotals, less fewer: ValueTotals, _ range: Range<Int>, running: Int64)
        -> ValueTotals?
    {
        guard fewer.minimum >= whole.minimum, fewer.maximum <= whole.maximum, Self.bounded(fewer, whole) else {
            return nil
        }
        var rest = ValueTotals(
            count: whole.count - fewer.count, minimum: whole.minimum, maximum: whole.maximum,
            sum: whole.sum &- fewer.sum)
        switch (fewer.minimum == whole.minimum, fewer.maximum == whole.maximum) {
        case (true, true):
            (rest.minimum, rest.maximum) = seek(range, running: running, Bounds<KeepBoth>(whole))
        case (true, false): rest.minimum = seek(range, running: running, Bounds<KeepMinimum>(whole)).minimum
        case (false, true): rest.maximum = seek(range, running: running, Bounds<KeepMaximum>(whole)).maximum
        case (false, false): break
        }
        guard rest.sum >= rest.minimum &* Int64(rest.count), rest.sum <= rest.maximum &* Int64(rest.count) else {
            return nil
        }
        return rest
    }

    /// The extremes `Kept` of values `range` (not empty), sought until they reach `bounds`; for
    /// deltas, `running` is the value before the range (unless it starts at 0).
    private func seek<Kept: KeptExtremes>(_ range: Range<Int>, running: Int64, _ bounds: Bounds<Kept>)
        -> (minimum: Int64, maximum: Int64)
    {
        guard deltas else {
            var values = ValueExtremes()
            runs[0].visit(range, &values)
            return (values.minimum, values.maximum)
        }
        var seeker = ExtremesSeeker(running: range.lowerBound == 0 ? first : running, bounds: bounds)
        if range.lowerBound == 0 { seeker.reach(first) }
        forDeltas(Swift.max(range.lowerBound, 1)..<range.upperBound) { run, numbers in
            if !seeker.isDone { run.visit(numbers, &seeker) }
        }
        return (seeker.minimum, seeker.maximum)
    }

    private static func bounded(_ a: ValueTotals, _ b: ValueTotals) -> Bool {
        Swift.min(a.minimum, b.minimum) > -valueBound && Swift.max(a.maximum, b.maximum) < valueBound
    }
}

/// What a loop over a run's packed numbers does with each: a FOR value, or a delta.
protocol PackedNumberVisitor {
    mutating func take(_ number: Int64)
    /// Whether the numbers left can be skipped, asked before each group of eight.
    var isDone: Bool { get }
}

extension PackedNumberVisitor {
    var isDone: Bool { false }
}

/// Adds FOR values to totals, which the adder holds while a loop runs.
private struct ValueAdder: PackedNumberVisitor {
    var totals: ValueTotals

    @inline(__always) mutating func take(_ number: Int64) { totals.add(number) }
}

/// Follows deltas from `running`, adding each value reached to totals.
private struct DeltaAdder: PackedNumberVisitor {
    var running: Int64
    var totals: ValueTotals

    @inline(__always) mutating func take(_ number: Int64) {
        running &+= number
        totals.add(running)
    }
}

/// The smallest and largest FOR values.
private struct ValueExtremes: PackedNumberVisitor {
    var minimum = Int64.max
    var maximum = Int64.min

    @inline(__always) mutating func take(_ number: Int64) {
        minimum = Swift.min(minimum, number)
        maximum = Swift.max(maximum, number)
    }
}

/// Which of the smallest and largest values a search keeps: a type, so that each search's loop
/// keeps only its own.
protocol KeptExtremes {
    static var minimum: Bool { get }
    static var maximum: Bool { get }
}

enum KeepMinimum: KeptExtremes {
    static var minimum: Bool { true }
    static var maximum: Bool { false }
}

enum KeepMaximum: KeptExtremes {
    static var minimum: Bool { false }
    static var maximum: Bool { true }
}

enum KeepBoth: KeptExtremes {
    static var minimum: Bool { true }
    static var maximum: Bool { true }
}

/// The lowest and highest values there are (a block's), at which a search for them can stop.
struct Bounds<Kept: KeptExtremes> {
    let floor: Int64
    let ceiling: Int64

    init(_ whole: ValueTotals) { (floor, ceiling) = (whole.minimum, whole.maximum) }
}

/// Follows deltas from `running`, keeping the smallest or largest value reached, or both (no count
/// or sum: the rest of a block whose index entry has those); done once they reach `bounds`.
private struct ExtremesSeeker<Kept: KeptExtremes>: PackedNumberVisitor {
    var running: Int64
    let bounds: Bounds<Kept>
    var minimum = Int64.max
    var maximum = Int64.min

    init(running: Int64, bounds: Bounds<Kept>) { (self.running, self.bounds) = (running, bounds) }

    @inline(__always) mutating func take(_ number: Int64) {
        running &+= number
        reach(running)
    }

    @inline(__always) mutating func reach(_ value: Int64) {
        if Kept.minimum { minimum = Swift.min(minimum, value) }
        if Kept.maximum { maximum = Swift.max(maximum, value) }
    }

    var isDone: Bool {
        (!Kept.minimum || minimum <= bounds.floor) && (!Kept.maximum || maximum >= bounds.ceiling)
    }
}

/// Follows deltas from `running` and nothing else: the way to a later side's first value.
private struct DeltaFollower: PackedNumberVisitor {
    var running: Int64

    @inline(__always) mutating func take(_ number: Int64) { running &+= number }
}

extension PackedRun {
    /// Adds values `reference + p` of numbers `range` to `totals` (FOR).
    func addValues(_ range: Range<Int>, to totals: inout ValueTotals) {
        var adder = ValueAdder(totals: totals)
        visit(range, &adder)
        totals = adder.totals
    }

    /// Adds the values reached by deltas `reference + p` of numbers `range` from `running` on
    /// (which ends at the last of them) to `totals`.
    func addDeltas(_ range: Range<Int>, running: inout Int64, to totals: inout ValueTotals) {
        var adder = DeltaAdder(running: running, totals: totals)
        visit(range, &adder)
        (running, totals) = (adder.running, adder.totals)
    }

    /// `running` plus the deltas `reference + p` of numbers `range`: the references times their
    /// count, and the packed numbers summed eight at a time for widths to 8 (``packedSum``).
    func followed(_ range: Range<Int>, from running: Int64) -> Int64 {
        let total = running &+ Int64(range.count) &* reference
        switch width {
        case 0: return total
        case 1: return total &+ packedSum(range, IntColumn.Width<1>.self)
        case 2: return total &+ packedSum(range, IntColumn.Width<2>.self)
        case 3: return total &+ packedSum(range, IntColumn.Width<3>.self)
        case 4: return total &+ packedSum(range, IntColumn.Width<4>.self)
        case 5: return total &+ packedSum(range, IntColumn.Width<5>.self)
        case 6: return total &+ packedSum(range, IntColumn.Width<6>.self)
        case 7: return total &+ packedSum(range, IntColumn.Width<7>.self)
        case 8: return total &+ packedSum(range, IntColumn.Width<8>.self)
        default:
            var follower = DeltaFollower(running: running)
            visit(range, &follower)
            return follower.running
        }
    }

    /// The sum of packed numbers `range` of `w` bits. Eight of them fill `w` bytes, read as one
    /// word and folded in three steps: neighbours added into four sums of `2w` bits, those into
    /// two of `4w`, those into one (~22 instructions for eight numbers with the loop, where taking
    /// them one by one was ~4 each: a block's values followed to a later bucket's edge, as
    /// Asia/Kathmandu days need, were 12% of the year's daily query in those days, callgrind).
    @inline(__always)
    private func packedSum<let w: Int>(_ range: Range<Int>, _: IntColumn.Width<w>.Type) -> Int64 {
        @inline(__always) func ones(_ bits: Int) -> UInt64 { bits >= 64 ? ~0 : (1 << UInt64(bits)) &- 1 }
        let mask = ones(w)
        @inline(__always) func number(_ i: Int) -> UInt64 {
            let bit = i &* w
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
            return word >> UInt64(bit & 7) & mask
        }
        var (sum, i, end): (UInt64, Int, Int) = (0, range.lowerBound, range.upperBound)
        while i < end && i & 7 != 0 {
            sum &+= number(i)
            i &+= 1
        }
        let group = ones(8 * w)
        let pairs = mask | mask << UInt64(2 * w) | mask << UInt64(4 * w) | mask << UInt64(6 * w)
        let quads = ones(2 * w) | ones(2 * w) << UInt64(4 * w)
        var at = bytes + (i >> 3) &* w
        while i &+ 8 <= end {
            let x = UInt64(littleEndian: at.loadUnaligned(as: UInt64.self)) & group
            let two = (x & pairs) &+ (x >> UInt64(w) & pairs)
            let four = (two & quads) &+ (two >> UInt64(2 * w) & quads)
            sum &+= (four & ones(4 * w)) &+ (four >> UInt64(4 * w))
            at += w
            i &+= 8
        }
        while i < end {
            sum &+= number(i)
            i &+= 1
        }
        return Int64(bitPattern: sum)
    }

    /// Heart rate's values and deltas take 1–16 bits: each width gets its own copy of the loop, where
    /// the shifts and masks are constants (as ``IntColumn``'s unpacking does).
    fileprivate func visit<V: PackedNumberVisitor>(_ range: Range<Int>, _ visitor: inout V) {
        guard !range.isEmpty else { return }
        switch width {
        case 1: visit(range, IntColumn.Width<1>.self, &visitor)
        case 2: visit(range, IntColumn.Width<2>.self, &visitor)
        case 3: visit(range, IntColumn.Width<3>.self, &visitor)
        case 4: visit(range, IntColumn.Width<4>.self, &visitor)
        case 5: visit(range, IntColumn.Width<5>.self, &visitor)
        case 6: visit(range, IntColumn.Width<6>.self, &visitor)
        case 7: visit(range, IntColumn.Width<7>.self, &visitor)
        case 8: visit(range, IntColumn.Width<8>.self, &visitor)
        case 9: visit(range, IntColumn.Width<9>.self, &visitor)
        case 10: visit(range, IntColumn.Width<10>.self, &visitor)
        case 11: visit(range, IntColumn.Width<11>.self, &visitor)
        case 12: visit(range, IntColumn.Width<12>.self, &visitor)
        default:
            var local = visitor
            for i in range { local.take(value(i)) }
            visitor = local
        }
    }

    /// Eight numbers of `w` bits take exactly `w` bytes, so from a multiple of eight on, number `k`
    /// of each group of eight lies at the same bit offset: constants in the copy for one width.
    @inline(__always)
    private func visit<let w: Int, V: PackedNumberVisitor>(
        _ range: Range<Int>, _: IntColumn.Width<w>.Type, _ visitor: inout V
    ) {
        let mask: UInt64 = (1 << UInt64(w)) - 1
        let reference = self.reference
        var local = visitor
        @inline(__always) func take(_ at: UnsafeRawPointer, bit: Int) {
            let word = UInt64(littleEndian: at.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
            local.take(reference &+ Int64(bitPattern: (word >> UInt64(bit & 7)) & mask))
        }
        var i = range.lowerBound
        let end = range.upperBound
        while i < end && i & 7 != 0 {
            take(bytes, bit: i &* w)
            i &+= 1
        }
        var group = bytes + (i >> 3) &* w
        while i &+ 8 <= end {
            if local.isDone {
                visitor = local
                return
            }
            for k in 0..<8 { take(group, bit: k * w) }
            group += w
            i &+= 8
        }
        while i < end {
            take(bytes, bit: i &* w)
            i &+= 1
        }
        visitor = local
    }
}
