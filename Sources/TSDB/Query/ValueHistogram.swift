/// One bucket's exact decimal values counted by mantissa, so percentiles need no sort: heart rate
/// has ~200 distinct values where a month holds ~140,000 samples. It holds one scale (fraction
/// digits) and a span of at most ``maxSpan`` mantissas; a value that does not fit is refused.
struct ValueHistogram {
    static let maxSpan = 65_536
    let scale: UInt8
    private var base: Int64
    private var counts: [Int32]
    private(set) var total = 0

    init(mantissa: Int64, scale: UInt8) {
        self.scale = scale
        base = mantissa
        counts = [1]
        total = 1
    }

    /// Counts mantissa `m`; false (nothing counted) for another scale or a span past ``maxSpan``.
    @inline(__always)
    mutating func add(_ m: Int64, scale s: UInt8) -> Bool {
        guard s == scale else { return false }
        let (offset, overflow) = m.subtractingReportingOverflow(base)
        if !overflow && offset >= 0 && offset < Int64(counts.count) {
            counts[Int(offset)] += 1
            total += 1
            return true
        }
        return widen(toInclude: m) && add(m, scale: s)
    }

    /// Counts the mantissas of samples `range` of a decoded block while each has this histogram's
    /// scale and fits (widening as needed): the loop of a percentile query, without a check of
    /// uniqueness or an optional per value. Returns the index of the first sample refused
    /// (`range.upperBound` when none was).
    mutating func add(
        _ mantissas: UnsafeBufferPointer<Int64>, tags: UnsafeBufferPointer<Int64>, _ range: Range<Int>
    ) -> Int {
        let tag = Int64(ValueTag.decimalBase + scale)
        var i = range.lowerBound
        while i < range.upperBound {
            let (base, size) = (self.base, UInt64(counts.count))
            let stop = counts.withUnsafeMutableBufferPointer { counts in
                var k = i
                while k < range.upperBound && tags[k] == tag {
                    // Wrapping: a mantissa far below the base lands past `size` too.
                    let offset = UInt64(bitPattern: mantissas[k] &- base)
                    guard offset < size else { break }
                    counts[Int(offset)] += 1
                    k += 1
                }
                return k
            }
            total += stop - i
            i = stop
            guard i < range.upperBound, tags[i] == tag, widen(toInclude: mantissas[i]) else { return i }
        }
        return i
    }

    /// Grows the counted span to include `m` (doubling, so growth stays amortised O(1)).
    private mutating func widen(toInclude m: Int64) -> Bool {
        let top = base + Int64(counts.count) - 1
        let (low, high) = (Swift.min(base, m), Swift.max(top, m))
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span < Int64(Self.maxSpan) else { return false }
        let needed = Int(high - low) + 1
        let size = Swift.min(Self.maxSpan, Swift.max(needed, counts.count * 2))
        // The room goes on the side `m` lies (mantissas have at most 18 digits: no overflow).
        let newBase = m < base ? low - Int64(size - needed) : low
        var grown = [Int32](repeating: 0, count: size)
        for (i, c) in counts.enumerated() where c > 0 { grown[Int(base - newBase) + i] = c }
        (base, counts) = (newBase, grown)
        return true
    }

    private func value(_ index: Int) -> Double {
        Double(base + Int64(index)) / ExactDecimal.powersOfTen[Int(scale)]
    }

    /// The values of ascending ranks `k` and `k + 1` (the second nil past the last).
    func values(atRank k: Int) -> (Double, Double?) {
        var seen = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += Int(c)
            guard seen > k else { continue }
            if seen > k + 1 { return (value(i), value(i)) }
            guard let next = counts[(i + 1)...].firstIndex(where: { $0 > 0 }) else { return (value(i), nil) }
            return (value(i), value(next))
        }
        preconditionFailure("rank \(k) of \(total) values")
    }

    /// Every counted value, ascending.
    func appendValues(to out: inout [Double]) {
        for (i, c) in counts.enumerated() where c > 0 {
            out.append(contentsOf: repeatElement(value(i), count: Int(c)))
        }
    }
}
