/// One night of sleep (``Store/sleepNights(from:to:options:)``).
public struct SleepNight: Sendable, Equatable {
    /// The wake-up date, `YYYY-MM-DD` in the query's zone.
    public var date: String
    /// First and last instant of any sleep sample in the night (µs, UTC).
    public var bedtime: Int64
    public var wakeTime: Int64
    /// Time covered by any sleep sample (in bed or a stage), overlaps counted once.
    public var inBedSeconds: Double
    /// Time in an asleep stage (unspecified, core, deep, REM).
    public var asleepSeconds: Double
    /// Seconds per SleepAnalysis value (0 inBed, 1 asleepUnspecified, 2 awake, 3 core, 4 deep, 5 REM).
    public var secondsByValue: [Int64: Double]
}

extension Store {
    static let sleepType = "HKCategoryTypeIdentifierSleepAnalysis"

    /// Nights whose wake-up date lies in `[from, to)` (nil: the data's span). A night runs from
    /// noon to noon in `options.zone`. Overlapping samples count once, from the highest-ranked
    /// sample (``AggregateOptions/priority``, and within one source awake, deep, REM, core,
    /// unspecified, then in bed), exactly as `aggregate` counts SleepAnalysis time, so per night
    /// the stages add up to the time asleep, which is at most the time in bed.
    public func sleepNights(
        from: Int64? = nil, to: Int64? = nil,
        options: AggregateOptions = AggregateOptions()
    ) throws(TSDBError) -> [SleepNight] {
        let entries = segmentEntries(of: Self.sleepType)
        guard let dataStart = entries.map(\.firstStart).min(), let dataEnd = entries.map(\.maxEnd).max() else {
            return []
        }
        let zone = options.zone
        func localDay(_ t: Int64) -> Int64 { BucketWalker.localDay(t, zone) }
        func noon(_ day: Int64) -> Int64 { Self.noon(day, zone) }
        // Open or far-reaching bounds are cut to the nights that can hold data.
        let firstDay = max(localDay(from ?? dataStart), localDay(dataStart))
        let lastDay = min(localDay((to ?? dataEnd + 86_400_000_000) - 1), localDay(dataEnd) + 1)
        guard lastDay >= firstDay else { return [] }
        let cuts = nightPieces(
            firstDay, lastDay, of: entries, from: noon(firstDay - 1), to: noon(lastDay), options: options)
        guard cuts.count > 2 else { return try nights(firstDay, lastDay, options: options) }
        // Long ranges on two cores (``InOrderPieces``), cut between nights: a night's pieces are
        // those of the samples reaching into it, read by whichever piece holds the night.
        var nights: [SleepNight] = []
        try InOrderPieces.run(
            count: cuts.count - 1,
            stream: { (i) throws(TSDBError) in nights += try self.nights(cuts[i], cuts[i + 1] - 1, options: options) },
            hold: { (i) throws(TSDBError) in try self.nights(cuts[i], cuts[i + 1] - 1, options: options) },
            handOut: { nights += $0 })
        return nights
    }

    /// The instant (µs) of local noon on `day`: the night of wake-up day D is [noon of D-1, noon
    /// of D).
    private static func noon(_ day: Int64, _ zone: TimeZoneRules) -> Int64 {
        zone.utc(fromLocal: day * 86_400 + 43_200) * 1_000_000
    }

    /// Wake-up days cutting `firstDay...lastDay` into pieces of about equal days for two cores,
    /// each piece `[cuts[i], cuts[i + 1])`; no cut (`[firstDay, lastDay + 1]`) when the samples
    /// of the months (`entries`, SleepAnalysis') reaching into the nights (`[lo, hi)`) are too
    /// few (twice ``AggregatePieces/minimumIntervalSamples``), else as many as
    /// ``AggregatePieces/intervalPieces(_:)`` and no more than half the days.
    func nightPieces(
        _ firstDay: Int64, _ lastDay: Int64, of entries: [Manifest.SegmentEntry], from lo: Int64, to hi: Int64,
        options: AggregateOptions
    ) -> [Int64] {
        let samples = entries.lazy.filter { $0.maxEnd > lo && $0.firstStart < hi }.reduce(0) {
            $0 + Int($1.sampleCount)
        }
        let days = lastDay - firstDay + 1
        let enough = samples / AggregatePieces.minimumIntervalSamples
        guard options.threads > 1, enough >= 2, days >= 4 else { return [firstDay, lastDay + 1] }
        let pieces = Int64(min(AggregatePieces.intervalPieces(samples), Int(days / 2)))
        return (0...pieces).map { firstDay + days * $0 / pieces }
    }

    /// The nights of wake-up days `firstDay...lastDay`, in order.
    private func nights(_ firstDay: Int64, _ lastDay: Int64, options: AggregateOptions) throws(TSDBError)
        -> [SleepNight]
    {
        let zone = options.zone
        func localDay(_ t: Int64) -> Int64 { BucketWalker.localDay(t, zone) }
        func noon(_ day: Int64) -> Int64 { Self.noon(day, zone) }
        let windowStart = noon(firstDay - 1)
        let windowEnd = noon(lastDay)
        let batches = try IntervalSampleBatches(
            self, type: Self.sleepType, kind: .category, from: windowStart, to: windowEnd, options: options,
            carry: options.deduplicate)
        var pieces = CountedPieceStream(batches, first: nil, deduplicate: options.deduplicate)
        var nights: [SleepNight] = []
        // The nights still open to pieces, by wake-up day: pieces come by start, so a night is
        // complete once one starts at or after its noon, and memory holds a few nights.
        var byNight: [Int64: [CountedPiece]] = [:]
        func close(before t: Int64) {
            for day in byNight.keys.sorted() where noon(day) <= t {
                if day >= firstDay, let night = Self.night(day, byNight[day]!, from: noon(day - 1), to: noon(day)) {
                    nights.append(night)
                }
                byNight[day] = nil
            }
        }
        while let batch = try pieces.next() {
            for p in batch where p.end > p.start {
                // A piece may cross noon: it belongs to each night it overlaps.
                var day =
                    localDay(max(p.start, windowStart))
                    + (max(p.start, windowStart) >= noon(localDay(max(p.start, windowStart))) ? 1 : 0)
                while day <= lastDay && noon(day - 1) < p.end {
                    byNight[day, default: []].append(p)
                    day += 1
                }
            }
            if let last = batch.last { close(before: last.start) }
        }
        close(before: .max)
        return nights
    }

    /// The night of wake-up day `day`, `[a, b)`, from its pieces (in start order); nil if none
    /// reaches into it. SleepAnalysis' six values are added up in a small array, the way a
    /// dictionary of them would, value by value in the pieces' order: hashing each piece's value
    /// twice (its seconds, whether it is asleep) was ~10 K of a night's ~24 K instructions (the
    /// year's `tsdb sleep` 29.29 -> 25.54 M, callgrind).
    private static func night(_ day: Int64, _ pieces: [CountedPiece], from a: Int64, to b: Int64) -> SleepNight? {
        var known = [Double](repeating: 0, count: 6)
        var seen: UInt8 = 0
        var others: [Int64: Double] = [:]
        var spans: [(Int64, Int64)] = []
        var asleep: [(Int64, Int64)] = []
        spans.reserveCapacity(pieces.count)
        var wake = Int64.min
        for p in pieces {
            let s = max(p.start, a)
            let e = min(p.end, b)
            guard e > s else { continue }
            let value = Int64(p.amount)
            if value >= 0 && value < 6 {
                known[Int(value)] += Double(e - s) / 1e6
                seen |= 1 << UInt8(value)
            } else {
                others[value, default: 0] += Double(e - s) / 1e6
            }
            spans.append((s, e))
            wake = max(wake, e)
            // Asleep: unspecified, core, deep, REM.
            if value == 1 || value == 3 || value == 4 || value == 5 { asleep.append((s, e)) }
        }
        guard !spans.isEmpty else { return nil }
        var byValue = others
        for v in 0..<6 where seen & 1 << UInt8(v) != 0 { byValue[Int64(v)] = known[v] }
        let (y, m, d) = ISO8601.civil(day)
        return SleepNight(
            date: monthKey(year: y, month: m) + "-" + (d < 10 ? "0" : "") + String(d),
            bedtime: spans.lazy.map(\.0).min()!, wakeTime: wake,
            inBedSeconds: unionSeconds(spans), asleepSeconds: unionSeconds(asleep), secondsByValue: byValue)
    }

    /// The time `spans` cover, overlaps once; they are sorted by start first unless they are.
    static func unionSeconds(_ spans: [(Int64, Int64)]) -> Double {
        var total: Int64 = 0
        var end = Int64.min
        let inOrder = zip(spans, spans.dropFirst()).allSatisfy { $0.0 <= $1.0 }
        for (s, e) in inOrder ? spans : spans.sorted(by: { $0.0 < $1.0 }) {
            let from = max(s, end)
            if e > from { total += e - from }
            end = max(end, e)
        }
        return Double(total) / 1e6
    }
}
