#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Running statistics of one bucket.
///
/// The variance uses Welford's update per value and Chan et al.'s pairwise merge for block
/// summaries (which store each block's sum of squared deviations from its own mean), both on
/// values shifted by a reference taken from the data, so the standard deviation stays exact for
/// large values with a small spread (1e12 + {0, 1, 2}), where even Welford's running mean would
/// round at the scale of the values.
struct Accumulator {
    /// Samples, numeric or not (`count` counts workouts and category samples too).
    var count = 0
    /// Samples with a numeric value.
    var valueCount = 0
    var sum = 0.0
    /// The shift: the first value seen (or a block's minimum).
    var reference: Double?
    /// Mean of `value - reference`.
    var shiftedMean = 0.0
    /// Sum of squared deviations from the mean.
    var m2 = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var first: Double?
    var last: Double?
    var values: [Double] = []
    /// Σ 10^(v/10), for the equivalent continuous level of sound levels.
    var energy = 0.0

    @inline(__always)
    mutating func add(_ v: Double, keepValue: Bool) {
        count += 1
        valueCount += 1
        sum += v
        let x = v - (reference ?? v)
        if reference == nil { reference = v }
        let delta = x - shiftedMean
        shiftedMean += delta / Double(valueCount)
        m2 += delta * (x - shiftedMean)
        minimum = Swift.min(minimum, v)
        maximum = Swift.max(maximum, v)
        if first == nil { first = v }
        last = v
        if keepValue { values.append(v) }
    }

    /// Adds a sound level's energy (only for equivalent-continuous-level types).
    mutating func addEnergy(_ level: Double) { energy += pow(10, level / 10) }

    /// A sample without a numeric value: it counts, but has no value.
    mutating func addValueless() { count += 1 }

    mutating func merge(_ s: BlockSummary) {
        count += s.sampleCount
        guard s.valueCount > 0 else { return }
        let n = Double(valueCount), nb = Double(s.valueCount)
        if reference == nil { reference = s.minValue }
        // The block's mean relative to the reference: exact when the sum is (integer values).
        let meanB = (s.sum - nb * reference!) / nb
        let delta = meanB - shiftedMean
        let total = n + nb
        shiftedMean += delta * nb / total
        m2 += s.sumOfSquaredDeviations + delta * delta * n * nb / total
        valueCount += s.valueCount
        sum += s.sum
        minimum = Swift.min(minimum, s.minValue)
        maximum = Swift.max(maximum, s.maxValue)
    }

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
            return (Swift.max(0, m2) / Double(valueCount - 1)).squareRoot()
        case .p50, .p90, .p95, .p99:
            // Exact, with linear interpolation between closest ranks (numpy's default, DuckDB's quantile_cont).
            guard !values.isEmpty, let q = s.quantile else { return nil }
            if values.count > 1 { values.sort() }
            let position = q * Double(values.count - 1)
            let i = Int(position)
            let fraction = position - Double(i)
            return i + 1 < values.count ? values[i] + (values[i + 1] - values[i]) * fraction : values[i]
        }
    }
}
