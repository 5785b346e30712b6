#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Running statistics of one bucket.
///
/// The variance works on values shifted by a reference taken from the data (the first value, or
/// a block's minimum): per value it keeps Σx and Σx² of the shifted values (no division in the
/// per-sample loop), and block summaries (each block's sum of squared deviations from its own
/// mean) merge with Chan et al.'s pairwise formula. So the standard deviation stays exact for
/// large values with a small spread (1e12 + {0, 1, 2}), where Σv² − (Σv)²/n gives 0.
struct Accumulator {
    /// Samples, numeric or not (`count` counts workouts and category samples too).
    var count = 0
    /// Samples with a numeric value.
    var valueCount = 0
    var sum = 0.0
    /// The shift: the first value seen (or a block's minimum).
    var reference: Double?
    /// Σx and Σx² of the shifted values x = value − reference.
    var shiftedSum = 0.0
    var shiftedSquares = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var first: Double?
    var last: Double?
    var values: [Double] = []
    /// The values kept for percentiles while they are exact decimals of one scale within a
    /// small span; moved into `values` (and nil for good: `values` is then non-empty) when one is not.
    var histogram: ValueHistogram?
    /// `values` is in ascending order (sorted once, for however many percentiles).
    var valuesSorted = false
    /// Σ 10^(v/10), for the equivalent continuous level of sound levels.
    var energy = 0.0

    @inline(__always)
    mutating func add(_ v: Double, keepValue: Bool) {
        count += 1
        valueCount += 1
        sum += v
        let x = v - (reference ?? v)
        if reference == nil { reference = v }
        shiftedSum += x
        shiftedSquares += x * x
        minimum = Swift.min(minimum, v)
        maximum = Swift.max(maximum, v)
        if first == nil { first = v }
        last = v
        if keepValue {
            spillHistogram()
            values.append(v)
        }
    }

    /// Adds a value kept for percentiles, given as its decimal mantissa and scale too.
    @inline(__always)
    mutating func add(_ v: Double, mantissa: Int64, scale: UInt8) {
        add(v, keepValue: false)
        if values.isEmpty {
            if histogram == nil {
                histogram = ValueHistogram(mantissa: mantissa, scale: scale)
                return
            }
            if histogram!.add(mantissa, scale: scale) { return }
            spillHistogram()
        }
        values.append(v)
    }

    /// Adds samples `range` of a decoded block (values and value tags decoded), in order, exactly
    /// as ``add(_:keepValue:)`` one by one would, with the running figures held in locals.
    mutating func add(
        _ block: DecodedBlock, _ range: Range<Int>, in segment: SegmentReader, keepValues: Bool, spread: Bool
    ) {
        guard !range.isEmpty else { return }
        if block.uniformValueTag == ValueTag.decimalBase
            && addWholeNumbers(UnsafeBufferPointer(rebasing: block.mantissas[range]), spread: spread)
        {
            if keepValues { keep(block, range, in: segment) }
            return
        }
        let tags = UnsafeBufferPointer(block.valueTags)
        let mantissas = UnsafeBufferPointer(block.mantissas)
        var (samples, numeric, total, low, high) = (count, valueCount, sum, minimum, maximum)
        var (shifted, squares) = (shiftedSum, shiftedSquares)
        var (reference, first, last) = (reference, first, last)
        for i in range {
            let tag = UInt8(truncatingIfNeeded: tags[i])
            let v: Double
            if tag == ValueTag.decimalBase {
                v = Double(mantissas[i])
            } else if tag > ValueTag.decimalBase {
                v = Double(mantissas[i]) / ExactDecimal.powersOfTen[Int(tag - ValueTag.decimalBase)]
            } else if let text = block.value(at: i, in: segment) {
                v = text
            } else {
                samples += 1
                continue
            }
            samples += 1
            numeric += 1
            total += v
            if reference == nil { reference = v }
            let x = v - reference!
            shifted += x
            squares += x * x
            low = Swift.min(low, v)
            high = Swift.max(high, v)
            if first == nil { first = v }
            last = v
        }
        (count, valueCount, sum, minimum, maximum) = (samples, numeric, total, low, high)
        (shiftedSum, shiftedSquares) = (shifted, squares)
        (self.reference, self.first, self.last) = (reference, first, last)
        if keepValues { keep(block, range, in: segment) }
    }

    /// Adds whole-number values exactly as ``add(_:keepValue:)`` one by one would, in integers:
    /// while every partial sum stays below 2^52 in magnitude, each Double addition of whole
    /// numbers is exact, so one addition of the integer total gives the same bits. Heart rate's
    /// sums, shifted sums and squares stay far below that. Without `spread` (no standard deviation
    /// asked for) the shifted sums are left alone, as ``merge(_:spread:)-(BlockSummary,_)`` does.
    /// Adds nothing and returns false when a bound does not hold (or a running figure is not a
    /// whole number).
    private mutating func addWholeNumbers(_ values: UnsafeBufferPointer<Int64>, spread: Bool) -> Bool {
        let bound = Self.exactBound
        guard Self.isWhole(sum) else { return false }
        let (lowest, highest, total) = values.extremesAndTotal()
        let n = Double(values.count)
        guard lowest > -(1 << 52) && highest < 1 << 52,
            abs(sum) + n * Swift.max(-Double(lowest), Double(highest)) < bound
        else { return false }
        if spread {
            guard let (shifted, squares) = shiftedWholeNumbers(values, lowest: lowest, highest: highest) else {
                return false
            }
            shiftedSum += Double(shifted)
            shiftedSquares += Double(squares)
        }
        count += values.count
        valueCount += values.count
        sum += Double(total)
        minimum = Swift.min(minimum, Double(lowest))
        maximum = Swift.max(maximum, Double(highest))
        if first == nil { first = Double(values[0]) }
        last = Double(values[values.count - 1])
        return true
    }

    /// Below this magnitude every sum of whole numbers is exact in a Double (with a factor of two
    /// to spare for the bound checks' own rounding).
    private static let exactBound = 0x1p52

    private static func isWhole(_ x: Double) -> Bool { x == x.rounded(.towardZero) && abs(x) < exactBound }

    /// Σx and Σx² of `values` shifted by the reference (taking the first value when there is
    /// none yet), when they are exact; nil (and no reference taken) when not.
    private mutating func shiftedWholeNumbers(_ values: UnsafeBufferPointer<Int64>, lowest: Int64, highest: Int64)
        -> (Int64, Int64)?
    {
        let bound = Self.exactBound
        let shift = reference ?? Double(values[0])
        let spread = Swift.max(abs(Double(lowest) - shift), abs(Double(highest) - shift))
        let n = Double(values.count)
        guard Self.isWhole(shift), Self.isWhole(shiftedSum), Self.isWhole(shiftedSquares),
            abs(shiftedSum) + n * spread < bound, shiftedSquares + n * spread * spread < bound
        else { return nil }
        let r = Int64(shift)
        var (shifted, squares) = (Int64(0), Int64(0))
        for v in values {
            let x = v &- r
            shifted &+= x
            squares &+= x &* x
        }
        reference = shift
        return (shifted, squares)
    }

    /// Keeps the values of samples `range` for percentiles: counted while they fit the
    /// histogram, else listed (as ``add(_:mantissa:scale:)`` and ``add(_:keepValue:)`` do).
    private mutating func keep(_ block: DecodedBlock, _ range: Range<Int>, in segment: SegmentReader) {
        let tags = UnsafeBufferPointer(block.valueTags)
        let mantissas = UnsafeBufferPointer(block.mantissas)
        var i = range.lowerBound
        while i < range.upperBound {
            let tag = UInt8(truncatingIfNeeded: tags[i])
            if values.isEmpty && tag >= ValueTag.decimalBase {
                if histogram == nil {
                    histogram = ValueHistogram(mantissa: mantissas[i], scale: tag - ValueTag.decimalBase)
                    i += 1
                    continue
                }
                i = histogram!.add(mantissas, tags: tags, i..<range.upperBound)
                guard i < range.upperBound else { return }
            }
            if let v = block.value(at: i, in: segment) {
                spillHistogram()
                values.append(v)
            }
            i += 1
        }
    }

    private mutating func spillHistogram() {
        histogram?.appendValues(to: &values)
        histogram = nil
    }

    /// Back to a new accumulator's state, keeping the kept values' memory for the next bucket.
    /// Replacing the whole struct released its arrays and wrote every field anew, once per
    /// bucket: five years of minute buckets took 5% longer (136 against 130 ms), and so did
    /// `self = Accumulator()` with the values' array swapped out and back (137 against 132 ms). So
    /// the fields are listed here: a new one must be too (`aResetAccumulatorEqualsANewOne` checks).
    @inline(__always)  // once per row: a call was ~30 instructions a row of a year's minute buckets
    mutating func reset() {
        (count, valueCount, sum, reference, shiftedSum, shiftedSquares) = (0, 0, 0, nil, 0, 0)
        (minimum, maximum, first, last, valuesSorted, energy) = (.infinity, -.infinity, nil, nil, false, 0)
        if !values.isEmpty { values.removeAll(keepingCapacity: true) }
        if histogram != nil { histogram = nil }
    }

    /// Sorts `values` once (values that fit a ``ValueHistogram`` never get here).
    mutating func sortValues() {
        guard !valuesSorted else { return }
        valuesSorted = true
        values.sort()
    }

    /// Sum of squared deviations from the mean.
    var sumOfSquaredDeviations: Double {
        valueCount > 0 ? shiftedSquares - shiftedSum * shiftedSum / Double(valueCount) : 0
    }

    /// Adds a sound level's energy (only for equivalent-continuous-level types).
    mutating func addEnergy(_ level: Double) { energy += pow(10, level / 10) }

    /// A sample without a numeric value: it counts, but has no value.
    mutating func addValueless() { count += 1 }

    /// Adds a block's samples from its summary; without `spread` (no standard deviation asked for)
    /// only counts, extremes and the sum.
    mutating func merge(_ s: BlockSummary, spread: Bool) {
        merge(
            samples: s.sampleCount, values: s.valueCount, minimum: s.minValue, maximum: s.maxValue, sum: s.sum,
            squaredDeviations: spread ? s.sumOfSquaredDeviations : nil)
    }

    /// Adds samples from slot summaries; as ``merge(_:spread:)-(BlockSummary,_)``.
    mutating func merge(_ s: SlotSummary, spread: Bool) {
        merge(
            samples: s.sampleCount, values: s.valueCount, minimum: s.minValue, maximum: s.maxValue, sum: s.sum,
            squaredDeviations: spread ? s.sumOfSquaredDeviations : nil)
    }

    /// Adds whole-number values added up from a block's columns, each sample with a value, without
    /// the spread (``SegmentReader/sideTotals(block:edge:scratch:)``, and `addUpByBucket`).
    mutating func merge(wholeNumbers t: ValueTotals) {
        merge(
            samples: t.count, values: t.count, minimum: Double(t.minimum), maximum: Double(t.maximum),
            sum: Double(t.sum), squaredDeviations: nil)
    }

    /// Adds a summarised group of samples: counts, extremes, sum and Σ(v − mean)² about its own mean
    /// (nil: the spread is not tracked, and the figures behind it stay unused).
    private mutating func merge(
        samples: Int, values: Int, minimum groupMin: Double, maximum groupMax: Double, sum groupSum: Double,
        squaredDeviations: Double?
    ) {
        count += samples
        guard values > 0 else { return }
        guard let squaredDeviations else {
            valueCount += values
            sum += groupSum
            (minimum, maximum) = (Swift.min(minimum, groupMin), Swift.max(maximum, groupMax))
            return
        }
        let n = Double(valueCount)
        let nb = Double(values)
        if reference == nil { reference = groupMin }
        // Chan's merge of (n, mean, M2) pairs, means relative to the reference. The group's is
        // exact when its sum is (integer values).
        let meanA = n > 0 ? shiftedSum / n : 0
        let meanB = (groupSum - nb * reference!) / nb
        let delta = meanB - meanA
        let total = n + nb
        let mean = meanA + delta * nb / total
        let m2 = sumOfSquaredDeviations + squaredDeviations + delta * delta * n * nb / total
        shiftedSum = mean * total
        shiftedSquares = m2 + shiftedSum * mean
        valueCount += values
        sum += groupSum
        self.minimum = Swift.min(self.minimum, groupMin)
        self.maximum = Swift.max(self.maximum, groupMax)
    }

    /// The count, sum and extremes alone: what rows of count, sum, min, max and a plain mean show
    /// (a year's hourly rows took ~170 instructions a row through ``value(_:cumulativeSum:style:)``).
    /// Setting them leaves the rest as it is, which such rows never read.
    var basicTotals: BasicTotals {
        get { BasicTotals(count: count, valueCount: valueCount, sum: sum, minimum: minimum, maximum: maximum) }
        set {
            (count, valueCount, sum, minimum, maximum) = (
                newValue.count, newValue.valueCount, newValue.sum, newValue.minimum, newValue.maximum
            )
        }
    }

    @inline(__always)
    mutating func value(_ s: Statistic, cumulativeSum: Double?, style: AggregationStyle) -> Double? {
        switch s {
        case .count: return Double(count)
        case .sum: return cumulativeSum ?? (valueCount > 0 ? sum : nil)
        case .min: return valueCount > 0 ? minimum : nil
        case .max: return valueCount > 0 ? maximum : nil
        case .mean:
            guard valueCount > 0 else { return nil }
            if style == .discreteEquivalentContinuousLevel { return 10 * log10(energy / Double(valueCount)) }
            return sum / Double(valueCount)
        case .first: return first
        case .last: return last
        case .stddev:
            // Sample standard deviation (n − 1), as SQL's stddev/stddev_samp.
            guard valueCount > 1 else { return nil }
            return (Swift.max(0, sumOfSquaredDeviations) / Double(valueCount - 1)).squareRoot()
        case .p50, .p90, .p95, .p99:
            // Exact, with linear interpolation between closest ranks (numpy's default, DuckDB's quantile_cont).
            if let h = histogram, let q = s.quantile {
                let position = q * Double(h.total - 1)
                let (low, high) = h.values(atRank: Int(position))
                let fraction = position - Double(Int(position))
                return high.map { low + ($0 - low) * fraction } ?? low
            }
            guard !values.isEmpty, let q = s.quantile else { return nil }
            sortValues()
            let position = q * Double(values.count - 1)
            let i = Int(position)
            let fraction = position - Double(i)
            return i + 1 < values.count ? values[i] + (values[i + 1] - values[i]) * fraction : values[i]
        }
    }
}
