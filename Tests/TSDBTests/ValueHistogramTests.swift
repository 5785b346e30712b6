import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Percentiles from counted mantissas (``ValueHistogram``) against sorting every value.
@Suite struct ValueHistogramTests {
    /// numpy's default / DuckDB's quantile_cont on the sorted values.
    func oracle(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let i = Int(position)
        let fraction = position - Double(i)
        return i + 1 < sorted.count ? sorted[i] + (sorted[i + 1] - sorted[i]) * fraction : sorted[i]
    }

    enum Shape: CaseIterable {
        case heartRate, descending, mixedScales, wideSpan, withNumberTexts, single
    }

    @Test(arguments: Shape.allCases, [1, 2, 3])
    func percentilesEqualSortingEveryValue(shape: Shape, seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var acc = Accumulator()
        var all: [Double] = []
        let n = shape == .single ? 1 : Int.random(in: 2...5000, using: &rng)
        for i in 0..<n {
            var (m, scale): (Int64, UInt8) = (Int64.random(in: 40...200, using: &rng), 0)
            switch shape {
            case .heartRate, .single, .withNumberTexts: break
            case .descending: m = 100_000 - Int64(i) * 3
            case .mixedScales: if i % 97 == 50 { (m, scale) = (m * 10 + 5, 1) }
            case .wideSpan: if i == n / 2 { m = 70_000 }
            }
            let v = Double(m) / ExactDecimal.powersOfTen[Int(scale)]
            all.append(v)
            if shape == .withNumberTexts && i % 500 == 250 {
                acc.add(v, keepValue: true)
            } else {
                acc.add(v, mantissa: m, scale: scale)
            }
        }
        for s in [Statistic.p50, .p90, .p95, .p99] {
            #expect(acc.value(s, cumulativeSum: nil, style: .discreteArithmetic) == oracle(all, s.quantile!), "\(s)")
        }
        #expect(acc.count == n)
    }

    /// A bucket's accumulator is reset for the next bucket rather than replaced: after any mix of
    /// values (kept in the histogram, spilled to the list, energies), a reset one gives every
    /// statistic exactly as a new one fed the same values.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func aResetAccumulatorEqualsANewOne(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        func feed(_ acc: inout Accumulator, _ count: Int, spill: Bool) {
            for i in 0..<count {
                let m = Int64.random(in: 40...200, using: &rng)
                if spill && i == count / 2 {
                    acc.add(Double(m) + 0.25, keepValue: true)
                } else {
                    acc.add(Double(m), mantissa: m, scale: 0)
                }
                acc.addEnergy(Double(m))
            }
            if Bool.random(using: &rng) { acc.addValueless() }
        }
        var reused = Accumulator()
        feed(&reused, Int.random(in: 1...300, using: &rng), spill: seed % 2 == 0)
        for s in [Statistic.p50, .p99] { _ = reused.value(s, cumulativeSum: nil, style: .discreteArithmetic) }
        reused.reset()
        var fresh = Accumulator()
        let state = rng
        feed(&reused, Int.random(in: 1...300, using: &rng), spill: seed > 2)
        rng = state
        feed(&fresh, Int.random(in: 1...300, using: &rng), spill: seed > 2)
        for style in [AggregationStyle.discreteArithmetic, .discreteEquivalentContinuousLevel] {
            for s in Statistic.allCases {
                let (a, b) = (
                    reused.value(s, cumulativeSum: nil, style: style), fresh.value(s, cumulativeSum: nil, style: style)
                )
                #expect(a == b, "\(s) \(style)")
            }
        }
        #expect(reused.count == fresh.count && reused.valueCount == fresh.valueCount)
    }

    @Test func aHistogramRefusesWhatItCannotHoldExactly() {
        var h = ValueHistogram(mantissa: 72, scale: 0)
        let added = [h.add(73, scale: 0), h.add(10, scale: 0)]
        let otherScale = h.add(720, scale: 1)
        let pastTheSpan = h.add(72 + Int64(ValueHistogram.maxSpan), scale: 0)
        let atTheEdge = h.add(10 + Int64(ValueHistogram.maxSpan) - 1, scale: 0)
        #expect(added == [true, true] && !otherScale && !pastTheSpan && atTheEdge)
        #expect(h.total == 4)
        #expect(h.values(atRank: 0) == (10, 72) && h.values(atRank: 3).1 == nil)
    }
}
