/// An interval sample of a cumulative or category type, as aggregates and nights use it.
struct IntervalSample {
    var start: Int64
    var end: Int64
    /// Value (cumulative) or category value (category).
    var amount: Double
    /// Index into the query's table of (source, device) pairs.
    var sourceKey: Int32
    /// Lower is counted first: the source's rank, then the value's precedence within a source.
    var rank: (source: Int32, value: Int32) = (0, 0)
}

/// A piece of a sample's interval that counts: `[start, end)` of `sample`.
struct CountedPiece {
    var sample: IntervalSample
    var start: Int64
    var end: Int64
}

/// Which samples count where several cover the same time (README, "Overlapping samples"): every (source, device)
/// pair gets its own rank, so no stretch of time counts twice.
struct SourceRanking {
    /// Priority entries, lowercased: a pair's rank is the first entry its source or device contains.
    let priority: [String]
    /// Category values in the order they claim time within one source (SleepAnalysis: awake, deep,
    /// REM, core, unspecified, then in bed); other values after these, ascending.
    let valueOrder: [Int64]

    static let sleepValueOrder: [Int64] = [2, 4, 5, 3, 1, 0]

    init(priority: [String], type: String) {
        self.priority = priority.map { $0.lowercased() }
        valueOrder = type == "HKCategoryTypeIdentifierSleepAnalysis" ? Self.sleepValueOrder : []
    }

    /// Ranks for the pairs: priority entry first, then source text, then device text (bytewise),
    /// so the order is total and does not depend on the store's layout.
    func ranks(of pairs: [(source: String, device: String)]) -> [Int32] {
        let keyed = pairs.enumerated().map { i, pair -> (Int, Int, String, String) in
            let texts = [pair.source.lowercased(), pair.device.lowercased()]
            let entry = priority.firstIndex { p in texts.contains { $0.contains(p) } } ?? priority.count
            return (i, entry, pair.source, pair.device)
        }
        let order = keyed.sorted { a, b in
            if a.1 != b.1 { return a.1 < b.1 }
            if a.2 != b.2 { return a.2.utf8.lexicographicallyPrecedes(b.2.utf8) }
            return a.3.utf8.lexicographicallyPrecedes(b.3.utf8)
        }
        var ranks = [Int32](repeating: 0, count: pairs.count)
        for (rank, item) in order.enumerated() { ranks[item.0] = Int32(rank) }
        return ranks
    }

    func valueRank(_ value: Int64) -> Int32 {
        if let i = valueOrder.firstIndex(of: value) { return Int32(i) }
        return Int32(valueOrder.count) + Int32(clamping: value)
    }

    /// The parts of each sample's interval that count: going from the highest rank down, and
    /// within a rank in start order, a sample counts only where nothing counted before covers
    /// it. A point sample counts unless an interval counted before contains it. The pieces are
    /// disjoint and returned in start order.
    static func countedPieces(_ samples: [IntervalSample]) -> [CountedPiece] {
        var out: [CountedPiece] = []
        var covered: [(Int64, Int64)] = []  // disjoint, sorted
        let groups = Dictionary(grouping: samples) { Int64($0.rank.source) << 32 | Int64($0.rank.value) }
        for key in groups.keys.sorted() {
            let group = groups[key]!.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
            var claimedUntil = Int64.min  // earlier samples of this group cover up to here
            var claimed: [(Int64, Int64)] = []
            for s in group {
                var i = firstEnding(after: s.start, in: covered)
                if s.start == s.end {
                    let inGroup = s.start < claimedUntil
                    let inCovered = i < covered.count && covered[i].0 <= s.start
                    if !inGroup && !inCovered { out.append(CountedPiece(sample: s, start: s.start, end: s.end)) }
                    continue
                }
                var cursor = max(s.start, claimedUntil)
                while cursor < s.end && i < covered.count && covered[i].0 < s.end {
                    if covered[i].0 > cursor { out.append(CountedPiece(sample: s, start: cursor, end: covered[i].0)) }
                    cursor = max(cursor, covered[i].1)
                    i += 1
                }
                if cursor < s.end { out.append(CountedPiece(sample: s, start: cursor, end: s.end)) }
                if s.end > claimedUntil {
                    let from = max(s.start, claimedUntil)
                    if let last = claimed.last, last.1 >= from {
                        claimed[claimed.count - 1].1 = s.end
                    } else {
                        claimed.append((from, s.end))
                    }
                    claimedUntil = s.end
                }
            }
            covered = merge(covered, claimed)
        }
        return out.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    }

    static func firstEnding(after t: Int64, in covered: [(Int64, Int64)]) -> Int {
        var lo = 0
        var hi = covered.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if covered[mid].1 <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The union of two sorted lists of disjoint intervals.
    static func merge(_ a: [(Int64, Int64)], _ b: [(Int64, Int64)]) -> [(Int64, Int64)] {
        var out: [(Int64, Int64)] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            let next: (Int64, Int64)
            if j >= b.count || (i < a.count && a[i].0 <= b[j].0) {
                next = a[i]
                i += 1
            } else {
                next = b[j]
                j += 1
            }
            if let last = out.last, next.0 <= last.1 {
                out[out.count - 1].1 = max(last.1, next.1)
            } else {
                out.append(next)
            }
        }
        return out
    }
}
