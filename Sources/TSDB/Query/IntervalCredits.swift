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

/// A piece of a sample's interval that counts: `[start, end)` of the sample `[sampleStart,
/// sampleEnd)` of `amount`. Only what spreading it over buckets needs: a year of daily steps holds
/// two arrays of these, and their pages were most of its time.
struct CountedPiece {
    var start: Int64
    var end: Int64
    var sampleStart: Int64
    var sampleEnd: Int64
    /// The sample's value (cumulative) or category value (category).
    var amount: Double

    init(_ sample: IntervalSample, start: Int64, end: Int64) {
        (self.start, self.end) = (start, end)
        (sampleStart, sampleEnd, amount) = (sample.start, sample.end, sample.amount)
    }

    /// The whole sample.
    init(_ sample: IntervalSample) { self.init(sample, start: sample.start, end: sample.end) }
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
            let entry = priority.firstIndex { p in texts.contains { $0.containsText(p) } } ?? priority.count
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
    /// disjoint and returned in (start, end) order; pieces alike in both keep their rank's order.
    ///
    /// Ranks are grouped by a counting sort over the few distinct ones (no hashing per sample), a
    /// rank's samples already in time order (the store gives them so) are not sorted again, what
    /// earlier ranks covered is walked alongside rather than searched, and the ranks' pieces are
    /// merged rather than sorted: a year of steps from a phone and a watch took 23 M
    /// instructions here, mostly hashing, sorting, searching and growing arrays.
    static func countedPieces(_ samples: [IntervalSample]) -> [CountedPiece] {
        let groups = RankGroups(samples)
        var pieces: [CountedPiece] = []
        // Room for what one or two ranks can make (below), so no group's room moves the pieces:
        // the second claims at most its members and the first's stretches, each at most one.
        pieces.reserveCapacity(samples.count * min(groups.count, 2) + 1)
        var groupEnds: [Int] = []
        var covered: [(Int64, Int64)] = []  // disjoint, sorted
        var claimed: [(Int64, Int64)] = []
        for g in 0..<groups.count {
            claimed.removeAll(keepingCapacity: true)
            samples.withUnsafeBufferPointer { samples in
                groups.order[groups.range(g)].withUnsafeBufferPointer { members in
                    covered.withUnsafeBufferPointer { covered in
                        // Each member ends at most one piece of its own, and each stretch covered
                        // before at most one (the members' parts are disjoint), so the room holds them.
                        Room.append(to: &pieces, atMost: members.count + covered.count) { pieces in
                            Room.append(to: &claimed, atMost: members.count) { claimed in
                                claim(members, of: samples, covered: covered, claimed: &claimed, into: &pieces)
                            }
                        }
                    }
                }
            }
            // What the last rank claims covers nothing after it; the first's is all there is.
            if g + 1 < groups.count { covered = covered.isEmpty ? claimed : merge(covered, claimed) }
            groupEnds.append(pieces.count)
        }
        return mergedInTimeOrder(pieces, groupEnds: groupEnds)
    }

    /// One rank's samples (`members`, their places in `samples`), in (start, end) order: the
    /// pieces where nothing counted before (`covered`, or earlier samples of the rank) lies, added
    /// to `pieces`; what the rank covers added to `claimed`. The first interval of `covered`
    /// ending after a sample's start only moves forward, since the starts do.
    private static func claim(
        _ members: UnsafeBufferPointer<Int32>, of samples: UnsafeBufferPointer<IntervalSample>,
        covered: UnsafeBufferPointer<(Int64, Int64)>, claimed: inout Room<(Int64, Int64)>,
        into pieces: inout Room<CountedPiece>
    ) {
        var claimedUntil = Int64.min  // earlier samples of this group cover up to here
        var firstEnding = 0
        for m in members {
            let s = samples[Int(m)]
            while firstEnding < covered.count && covered[firstEnding].1 <= s.start { firstEnding += 1 }
            var i = firstEnding
            if s.start == s.end {
                let inGroup = s.start < claimedUntil
                let inCovered = i < covered.count && covered[i].0 <= s.start
                if !inGroup && !inCovered { pieces.append(CountedPiece(s, start: s.start, end: s.end)) }
                continue
            }
            var cursor = max(s.start, claimedUntil)
            while cursor < s.end && i < covered.count && covered[i].0 < s.end {
                if covered[i].0 > cursor { pieces.append(CountedPiece(s, start: cursor, end: covered[i].0)) }
                cursor = max(cursor, covered[i].1)
                i += 1
            }
            if cursor < s.end { pieces.append(CountedPiece(s, start: cursor, end: s.end)) }
            if s.end > claimedUntil {
                let from = max(s.start, claimedUntil)
                if claimed.count > 0, claimed.last.1 >= from {
                    claimed.last.1 = s.end
                } else {
                    claimed.append((from, s.end))
                }
                claimedUntil = s.end
            }
        }
    }

    /// The pieces of every group (`groupEnds`: where each group ends), each group's already in
    /// (start, end) order, merged into that order; ties go to the earlier group, so the result is
    /// what a stable sort of all of them gives.
    private static func mergedInTimeOrder(_ pieces: [CountedPiece], groupEnds: [Int]) -> [CountedPiece] {
        guard groupEnds.count > 1 else { return pieces }
        // Among many groups (many sources), choosing each piece's group would be slow: sorted then.
        guard groupEnds.count <= 16 else { return pieces.sorted { ($0.start, $0.end) < ($1.start, $1.end) } }
        if groupEnds.count == 2 { return mergedInTimeOrder(pieces, split: groupEnds[0]) }
        var heads = [0] + groupEnds.dropLast()
        return [CountedPiece](unsafeUninitializedCapacity: pieces.count) { out, written in
            pieces.withUnsafeBufferPointer { p in
                heads.withUnsafeMutableBufferPointer { heads in
                    groupEnds.withUnsafeBufferPointer { ends in
                        for n in 0..<p.count {
                            // Strictly before: a tie stays with the earlier group.
                            var best = -1
                            for g in 0..<heads.count where heads[g] < ends[g] {
                                if best < 0 || before(p[heads[g]], p[heads[best]]) { best = g }
                            }
                            (out.baseAddress! + n).initialize(to: p[heads[best]])
                            heads[best] += 1
                        }
                    }
                }
            }
            written = pieces.count
        }
    }

    /// ``mergedInTimeOrder(_:groupEnds:)`` of two groups, the first ending at `split`.
    private static func mergedInTimeOrder(_ pieces: [CountedPiece], split: Int) -> [CountedPiece] {
        [CountedPiece](unsafeUninitializedCapacity: pieces.count) { out, written in
            pieces.withUnsafeBufferPointer { p in
                var (i, j) = (0, split)
                for n in 0..<p.count {
                    let fromSecond = i == split || (j < p.count && before(p[j], p[i]))
                    (out.baseAddress! + n).initialize(to: p[fromSecond ? j : i])
                    if fromSecond { j += 1 } else { i += 1 }
                }
            }
            written = pieces.count
        }
    }

    @inline(__always)
    private static func before(_ a: CountedPiece, _ b: CountedPiece) -> Bool { (a.start, a.end) < (b.start, b.end) }

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

/// Samples grouped by rank (source rank, then value rank), groups in rank order, each group in
/// (start, end) order; samples alike in both keep their order, as a stable sort keeps it. Held as
/// the samples' places (4 bytes each, not a copy of 40).
struct RankGroups {
    /// The samples' places, group after group.
    private(set) var order: [Int32] = []
    private var ends: [Int] = []
    var count: Int { ends.count }

    /// Where group `g`'s samples are in ``order``.
    func range(_ g: Int) -> Range<Int> { (g == 0 ? 0 : ends[g - 1])..<ends[g] }

    init(_ input: [IntervalSample]) {
        precondition(input.count <= Int(Int32.max), "more interval samples than 32-bit places reach")
        if let two = Self.atMostTwoInOrder(input) {
            self = two
            return
        }
        let (keys, groupOf) = Self.groups(input)
        // Each group's place in rank order, then a counting sort by it (stable).
        var place = [Int](repeating: 0, count: keys.count)
        for (p, g) in keys.indices.sorted(by: { keys[$0] < keys[$1] }).enumerated() { place[g] = p }
        var next = [Int](repeating: 0, count: keys.count + 1)
        for g in groupOf { next[place[Int(g)] + 1] += 1 }
        for p in 0..<keys.count { next[p + 1] += next[p] }
        ends = Array(next.dropFirst())
        // Whether a group's samples come in (start, end) order, checked as they are placed.
        var inOrder = [Bool](repeating: true, count: keys.count)
        order = [Int32](unsafeUninitializedCapacity: input.count) { out, written in
            input.withUnsafeBufferPointer { s in
                groupOf.withUnsafeBufferPointer { groupOf in
                    place.withUnsafeBufferPointer { place in
                        next.withUnsafeMutableBufferPointer { next in
                            inOrder.withUnsafeMutableBufferPointer { inOrder in
                                let firsts = Array(next.prefix(keys.count))
                                for i in 0..<groupOf.count {
                                    let p = place[Int(groupOf[i])]
                                    let at = next[p]
                                    if at > firsts[p] {
                                        let last = s[Int(out[at - 1])]
                                        if (s[i].start, s[i].end) < (last.start, last.end) { inOrder[p] = false }
                                    }
                                    out[at] = Int32(i)
                                    next[p] = at + 1
                                }
                            }
                        }
                    }
                }
            }
            written = input.count
        }
        // Each group in (start, end) order, unless it is already.
        input.withUnsafeBufferPointer { s in
            func before(_ a: Int32, _ b: Int32) -> Bool {
                (s[Int(a)].start, s[Int(a)].end) < (s[Int(b)].start, s[Int(b)].end)
            }
            for g in 0..<count where !inOrder[g] { order[range(g)].sort(by: before) }
        }
    }

    /// The groups in one pass when there are at most two keys (a watch and a phone) and each's
    /// samples come in (start, end) order, as the store gives them; nil otherwise. The first key's
    /// places are written from the front and the other's from the back, then turned around. The
    /// general way (keys, then places, then a counting sort) made the year's daily steps 17.20 M
    /// instructions on one thread; this way, 15.77 M (callgrind, whole processes).
    private static func atMostTwoInOrder(_ input: [IntervalSample]) -> RankGroups? {
        guard let first = input.first else { return RankGroups() }
        let n = input.count
        var keys = (key(first), Int64.min)
        var seconds = 0
        var fits = true
        let order = [Int32](unsafeUninitializedCapacity: n) { out, written in
            input.withUnsafeBufferPointer { s in
                var (front, back) = (0, n)
                var lastFirst = (Int64.min, Int64.min)
                var lastSecond = (Int64.min, Int64.min)
                for i in 0..<n {
                    let k = key(s[i])
                    let span = (s[i].start, s[i].end)
                    if k == keys.0 {
                        if span < lastFirst { fits = false }
                        lastFirst = span
                        out[front] = Int32(i)
                        front += 1
                    } else if back == n || k == keys.1 {
                        if span < lastSecond { fits = false }
                        (keys.1, lastSecond) = (k, span)
                        back -= 1
                        out[back] = Int32(i)
                    } else {
                        fits = false
                    }
                    if !fits { break }
                }
                if fits { out[back..<n].reverse() }
                seconds = n - back
            }
            // Only an answer in order is kept (and filled in).
            written = fits ? n : 0
        }
        guard fits else { return nil }
        var groups = RankGroups()
        let firsts = n - seconds
        guard seconds > 0 else {
            (groups.order, groups.ends) = (order, [n])
            return groups
        }
        if keys.0 < keys.1 {
            (groups.order, groups.ends) = (order, [firsts, n])
        } else {
            groups.order = Array(order[firsts...]) + order[..<firsts]
            groups.ends = [seconds, n]
        }
        return groups
    }

    private init() {}

    /// The distinct keys in the order first met, and each sample's group (its key's place there):
    /// found by a look along the keys while they are few (a phone and a watch: two), then by
    /// hashing. A call per change of key, looking along an array, and a pass of its own to see
    /// whether each group was in order made the grouping of the year's daily steps 2.42 M
    /// instructions; this way, 2.05 M (callgrind).
    private static func groups(_ input: [IntervalSample]) -> (keys: [Int64], groupOf: [Int32]) {
        var keys: [Int64] = []
        var many: [Int64: Int32] = [:]  // past `few` distinct keys
        let few = 16
        let groupOf = [Int32](unsafeUninitializedCapacity: input.count) { out, written in
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: few) { known in
                var knownCount = 0
                input.withUnsafeBufferPointer { input in
                    for i in 0..<input.count {
                        let key = Self.key(input[i])
                        var g = 0
                        while g < knownCount && known[g] != key { g += 1 }
                        if g == knownCount {
                            if knownCount < few {
                                known[g] = key
                                knownCount += 1
                                keys.append(key)
                            } else if let found = many[key] {
                                g = Int(found)
                            } else {
                                g = keys.count
                                keys.append(key)
                                many[key] = Int32(g)
                            }
                        }
                        out[i] = Int32(g)
                    }
                }
            }
            written = input.count
        }
        return (keys, groupOf)
    }

    /// The order of ranks: as ``SourceRanking/countedPieces(_:)`` has always keyed them.
    private static func key(_ s: IntervalSample) -> Int64 { Int64(s.rank.source) << 32 | Int64(s.rank.value) }
}
