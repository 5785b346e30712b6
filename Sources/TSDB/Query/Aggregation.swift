/// A statistic `tsdb query --stats` can compute.
public enum Statistic: String, Sendable, CaseIterable {
    case count, sum, min, max, mean, first, last, stddev, p50, p90, p95, p99

    /// The quantile of a percentile statistic.
    var quantile: Double? {
        switch self {
        case .p50: 0.5
        case .p90: 0.9
        case .p95: 0.95
        case .p99: 0.99
        default: nil
        }
    }

    public static func parseList(_ text: String) throws(TSDBError) -> [Statistic] {
        var out: [Statistic] = []
        for part in text.split(separator: ",") {
            guard let s = Statistic(rawValue: String(part).trimmingSpaces.lowercased()) else {
                throw TSDBError(.invalidInput, "unknown statistic \"\(part)\"; choose from " + allCases.map(\.rawValue).joined(separator: ","))
            }
            if !out.contains(s) { out.append(s) }
        }
        guard !out.isEmpty else { throw TSDBError(.invalidInput, "--stats needs at least one statistic") }
        return out
    }
}

/// Settings for ``Store/aggregate(_:from:to:options:)``.
public struct AggregateOptions: Sendable {
    public var bucket: BucketSpec = .none
    public var zone: TimeZoneRules = .utc
    /// First day of calendar weeks, ISO numbering: 1 = Monday … 7 = Sunday.
    public var weekStart = 1
    /// Statistics to compute; nil means the type's HealthKit-style default
    /// (cumulative: sum; discrete: count, min, max, mean).
    public var statistics: [Statistic]?
    /// `true` (default): an interval sample's sum (or a category's time) is split across the
    /// buckets it overlaps in proportion to time; `false`: it goes wholly to the bucket of its start.
    public var prorate = true
    /// Keep only samples whose source or device contains this text (case-insensitive).
    public var source: String?
    /// For cumulative and category types, count time covered by several sources once, taking it
    /// from the highest-priority source (see ``priority``).
    public var deduplicate = true
    /// Source priority, highest first: a sample's rank is the first entry its source or device
    /// contains (case-insensitive); samples matching none rank last.
    public var priority = ["Watch", "iPhone"]
    /// Emit buckets that have no data.
    public var fill = false

    public init() {}
}

/// One bucket of an aggregate.
public struct AggregateRow: Sendable, Equatable {
    /// Bucket bounds, µs since the epoch (UTC).
    public var start: Int64
    public var end: Int64
    /// Statistics by name; absent where undefined (the min of no samples, stddev of one).
    public var values: [Statistic: Double]
    /// Category types: seconds per category value.
    public var seconds: [Int64: Double]
}

public struct AggregateResult: Sendable {
    public var type: String
    public var kind: TypeCatalog.Kind
    public var statistics: [Statistic]
    /// Category values present in any row, ascending (category types only).
    public var categoryValues: [Int64]
    public var rows: [AggregateRow]
    /// Blocks answered from their stored summaries, and blocks decoded (to show the fast path works).
    public var blocksFromSummaries = 0
    public var blocksDecoded = 0

    /// The same result with only its first `n` rows.
    public func limited(to n: Int) -> AggregateResult {
        var copy = self
        copy.rows = Array(rows.prefix(n))
        return copy
    }
}

extension Store {
    /// Aggregates `type` over `[from, to)` (nil: the data's span) into buckets.
    ///
    /// Discrete statistics (count, min, max, mean, first, last, stddev, percentiles) take the
    /// samples whose start lies in a bucket. `sum` of a cumulative type is split across buckets by
    /// time overlap (unless `prorate` is off), and where samples from several sources overlap in
    /// time, only the highest-priority source's share of that time counts (``AggregateOptions``).
    /// Category types give the time per category value per bucket, split and de-duplicated the
    /// same way. A block lying wholly inside one bucket is answered from its stored summary when
    /// no statistic needs the individual values; only the other blocks are decoded.
    public func aggregate(_ type: String, from: Int64? = nil, to: Int64? = nil, options: AggregateOptions = AggregateOptions()) throws(TSDBError) -> AggregateResult {
        let kind = catalog.kind(of: type)
        let stats = options.statistics ?? (kind == .cumulative ? [.sum] : kind == .category ? [] : [.count, .min, .max, .mean])
        let entries = manifest.segments.filter { $0.type == type }
        let lo = from ?? (entries.map(\.firstStart).min() ?? 0)
        let hi = to ?? ((kind == .discrete ? entries.map(\.lastStart).max() : entries.map(\.maxEnd).max()).map { $0 + 1 } ?? 0)
        let edges = BucketEdges(spec: options.bucket, zone: options.zone, weekStart: options.weekStart, from: lo, to: hi)
        var result = AggregateResult(type: type, kind: kind, statistics: stats, categoryValues: [], rows: [])
        guard edges.count > 0 else { return result }

        var acc = [Accumulator](repeating: Accumulator(), count: edges.count)
        let needsValues = stats.contains { $0.quantile != nil }
        let needsOrder = stats.contains(.first) || stats.contains(.last)
        let intervalSum = (kind == .cumulative && stats.contains(.sum)) || kind == .category
        var intervals: [IntervalSample] = []
        let filter = options.source?.lowercased()
        let ranks = options.priority.map { $0.lowercased() }

        for segment in try segments(of: type, from: lo, to: hi, overlapping: intervalSum) {
            let matches = (segment.sources + segment.devices).map { text -> Bool in
                guard let filter else { return true }
                return text.string?.lowercased().contains(filter) ?? false
            }
            let rankOf = (0..<segment.sources.count).map { s -> [Int] in
                (0..<segment.devices.count).map { d in
                    let texts = [segment.sources[s].string, segment.devices[d].string].compactMap { $0?.lowercased() }
                    return ranks.firstIndex { r in texts.contains { $0.contains(r) } } ?? ranks.count
                }
            }
            var bucket = 0
            let block = DecodedBlock()
            for b in 0..<segment.blockCount {
                let s = segment.summaries[b]
                let reaches = intervalSum ? s.maxEnd > lo || s.firstStart >= lo : s.lastStart >= lo
                guard reaches, s.firstStart < hi else { continue }
                // Fast path: the whole block inside one bucket and the range, nothing per-sample needed.
                if filter == nil && !needsValues && !needsOrder && !intervalSum && s.firstStart >= lo && s.lastStart < hi,
                   let first = edges.index(of: s.firstStart), let last = edges.index(of: s.lastStart), first == last {
                    acc[first].merge(s)
                    result.blocksFromSummaries += 1
                    continue
                }
                var columns: ColumnSet = .values
                if intervalSum { columns.formUnion([.ends, .sources]) }
                if filter != nil { columns.formUnion(.sources) }
                try segment.decode(block: b, into: block, columns: columns)
                result.blocksDecoded += 1
                let starts = block.starts
                if !intervalSum && filter == nil {
                    // Tight loop for the common case: per-sample statistics, no source filter.
                    // The current bucket's accumulator is moved into a local and back only when
                    // the bucket changes.
                    let tags = block.valueTags, mantissas = block.mantissas
                    var current = bucket
                    var cur = Accumulator()
                    swap(&cur, &acc[current])
                    defer { swap(&cur, &acc[current]) }
                    for i in 0..<block.count {
                        let t = starts[i]
                        guard t >= lo, t < hi else { continue }
                        let tag = UInt8(truncatingIfNeeded: tags[i])
                        let v: Double
                        if tag == ValueTag.decimalBase {
                            v = Double(mantissas[i])
                        } else if tag > ValueTag.decimalBase {
                            v = Double(mantissas[i]) / ExactDecimal.powersOfTen[Int(tag - ValueTag.decimalBase)]
                        } else if let text = block.value(at: i, in: segment) {
                            v = text
                        } else {
                            continue
                        }
                        while edges.edges[bucket + 1] <= t { bucket += 1 }
                        while edges.edges[bucket] > t { bucket -= 1 }
                        if bucket != current {
                            swap(&cur, &acc[current])
                            current = bucket
                            swap(&cur, &acc[current])
                        }
                        cur.add(v, keepValue: needsValues)
                    }
                    continue
                }
                let ends = block.ends
                for i in 0..<block.count {
                    let t = starts[i]
                    let srcOK = filter == nil || matches[Int(block.sources[i])] || matches[segment.sources.count + Int(block.devices[i])]
                    guard srcOK else { continue }
                    if intervalSum && (ends[i] > lo || t >= lo) && t < hi {
                        let amount: Double
                        if kind == .category {
                            let tag = UInt8(truncatingIfNeeded: block.valueTags[i])
                            amount = tag == ValueTag.decimalBase ? Double(block.mantissas[i]) : .nan
                        } else {
                            amount = block.value(at: i, in: segment) ?? .nan
                        }
                        if !amount.isNaN {
                            intervals.append(IntervalSample(start: t, end: ends[i], amount: amount,
                                                            rank: rankOf[Int(block.sources[i])][Int(block.devices[i])]))
                        }
                    }
                    guard t >= lo, t < hi, kind != .category, let v = block.value(at: i, in: segment) else { continue }
                    while edges.edges[bucket + 1] <= t { bucket += 1 }
                    while edges.edges[bucket] > t { bucket -= 1 }
                    acc[bucket].add(v, keepValue: needsValues)
                }
            }
        }

        // Interval sums: de-duplicate by source priority, then split across buckets.
        var sums = [Double](repeating: 0, count: edges.count)
        var seconds = [[Int64: Double]](repeating: [:], count: edges.count)
        var categoryValues = Set<Int64>()
        if intervalSum {
            let pieces = options.deduplicate ? Self.uncoveredPieces(intervals) : intervals.map { ($0, $0.start, $0.end) }
            for (sample, a, b) in pieces {
                let length = Double(sample.end - sample.start)
                func credit(_ bucket: Int, _ share: Double) {
                    if kind == .category {
                        let v = Int64(sample.amount)
                        categoryValues.insert(v)
                        seconds[bucket][v, default: 0] += share * length / 1e6
                    } else {
                        sums[bucket] += share * sample.amount
                        acc[bucket].touched = true
                    }
                }
                if !options.prorate || b == a {
                    guard sample.start >= lo, sample.start < hi, let k = edges.index(of: sample.start) else { continue }
                    credit(k, length == 0 ? 1 : Double(b - a) / length)
                    continue
                }
                let a2 = max(a, lo), b2 = min(b, hi)
                guard b2 > a2, var k = edges.index(of: a2) else { continue }
                while k < edges.count && edges.edges[k] < b2 {
                    let overlap = min(b2, edges.edges[k + 1]) - max(a2, edges.edges[k])
                    if overlap > 0 { credit(k, Double(overlap) / length) }
                    k += 1
                }
            }
        }

        result.categoryValues = categoryValues.sorted()
        for k in 0..<edges.count {
            var a = acc[k]
            let hasData = a.count > 0 || a.touched || !seconds[k].isEmpty
            guard hasData || options.fill else { continue }
            var values: [Statistic: Double] = [:]
            for s in stats {
                if let v = a.value(s, cumulativeSum: kind == .cumulative ? sums[k] : nil) { values[s] = v }
            }
            result.rows.append(AggregateRow(start: edges.edges[k], end: edges.edges[k + 1], values: values, seconds: seconds[k]))
        }
        return result
    }

    /// The parts of each sample's interval not covered by a higher-priority source's samples.
    /// Returns (sample, pieceStart, pieceEnd); a point sample is kept unless a higher-priority
    /// interval strictly contains it.
    static func uncoveredPieces(_ samples: [IntervalSample]) -> [(IntervalSample, Int64, Int64)] {
        var out: [(IntervalSample, Int64, Int64)] = []
        var covered: [(Int64, Int64)] = [] // disjoint, sorted
        let byRank = Dictionary(grouping: samples, by: \.rank).sorted { $0.key < $1.key }
        for (_, group) in byRank {
            for s in group {
                var cursor = s.start
                // First covered interval that ends after the sample starts.
                var lo = 0, hi = covered.count
                while lo < hi { let mid = (lo + hi) / 2; if covered[mid].1 <= s.start { lo = mid + 1 } else { hi = mid } }
                var i = lo
                if s.start == s.end {
                    let inside = i < covered.count && covered[i].0 <= s.start && s.start < covered[i].1
                    if !inside { out.append((s, s.start, s.end)) }
                    continue
                }
                while i < covered.count && covered[i].0 < s.end {
                    if covered[i].0 > cursor { out.append((s, cursor, covered[i].0)) }
                    cursor = max(cursor, covered[i].1)
                    i += 1
                }
                if cursor < s.end { out.append((s, cursor, s.end)) }
            }
            // This rank's intervals now cover time for the ranks below it.
            let merged = (covered + group.filter { $0.end > $0.start }.map { ($0.start, $0.end) }).sorted { $0.0 < $1.0 }
            covered = []
            for iv in merged {
                if let last = covered.last, iv.0 <= last.1 { covered[covered.count - 1].1 = max(last.1, iv.1) } else { covered.append(iv) }
            }
        }
        return out
    }
}

struct IntervalSample {
    var start: Int64
    var end: Int64
    /// Value (cumulative) or category value (category).
    var amount: Double
    var rank: Int
}

/// Running statistics of one bucket.
struct Accumulator {
    var count = 0
    var sum = 0.0
    var sumOfSquares = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var first: Double?
    var last: Double?
    var values: [Double] = []
    var touched = false

    @inline(__always)
    mutating func add(_ v: Double, keepValue: Bool) {
        count += 1
        sum += v
        sumOfSquares += v * v
        minimum = Swift.min(minimum, v)
        maximum = Swift.max(maximum, v)
        if first == nil { first = v }
        last = v
        if keepValue { values.append(v) }
    }

    mutating func merge(_ s: BlockSummary) {
        guard s.valueCount > 0 else { return }
        count += s.valueCount
        sum += s.sum
        sumOfSquares += s.sumOfSquares
        minimum = Swift.min(minimum, s.minValue)
        maximum = Swift.max(maximum, s.maxValue)
    }

    mutating func value(_ s: Statistic, cumulativeSum: Double?) -> Double? {
        switch s {
        case .count: return Double(count)
        case .sum: return cumulativeSum ?? (count > 0 ? sum : nil)
        case .min: return count > 0 ? minimum : nil
        case .max: return count > 0 ? maximum : nil
        case .mean: return count > 0 ? sum / Double(count) : nil
        case .first: return first
        case .last: return last
        case .stddev:
            // Sample standard deviation (n − 1), as SQL's stddev/stddev_samp.
            guard count > 1 else { return nil }
            let mean = sum / Double(count)
            return (Swift.max(0, (sumOfSquares - Double(count) * mean * mean) / Double(count - 1))).squareRoot()
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
