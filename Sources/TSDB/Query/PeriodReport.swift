/// One line of a period report (``Store/periodReport(_:from:to:options:)``).
public struct ReportLine: Sendable, Equatable {
    /// The period, µs since the epoch (local calendar weeks or months).
    public var start: Int64
    public var end: Int64
    public var type: String
    /// What `value` is: `sum`, `mean`, `asleep_min_per_night`, `workouts`, `minutes`.
    public var statistic: String
    public var value: Double
    /// For discrete types, the period's extremes; for sleep, the number of nights; for workouts, their minutes.
    public var minimum: Double?
    public var maximum: Double?
    public var detail: Double?
    /// The same statistic over the period before (nil when it had no data).
    public var previous: Double?

    public var change: Double? { previous.map { value - $0 } }
}

extension Store {
    /// Per `period` (``BucketSpec/calendar(_:)``: week or month) of `[from, to)` and per stored type,
    /// the statistic that fits the type, with the previous period's for comparison: the sum of a
    /// cumulative type, the mean (and min, max) of a discrete one, minutes asleep per night for
    /// sleep (nights by wake-up date), minutes of other category types, the number (and minutes)
    /// of workouts. Figures come from the same computations as `aggregate` and `sleepNights`.
    public func periodReport(
        _ period: BucketSpec.CalendarUnit, from: Int64? = nil, to: Int64? = nil,
        options: AggregateOptions = AggregateOptions()
    ) throws(TSDBError) -> [ReportLine] {
        guard let dataStart = segmentEntries.map(\.firstStart).min(),
            let dataEnd = segmentEntries.map(\.maxEnd).max()
        else { return [] }
        var o = options
        o.bucket = .calendar(period)
        o.fill = false
        let lo = from ?? dataStart
        let hi = to ?? dataEnd + 1
        let walker = BucketWalker(spec: o.bucket, zone: o.zone, weekStart: o.weekStart, from: lo, to: hi)
        let before = walker.bucket(containing: walker.bucket(containing: lo).start - 1).start
        var lines: [ReportLine] = []
        for info in types.sorted(by: { TypeNames.shortName($0.type) < TypeNames.shortName($1.type) }) {
            let type = info.type
            var values: [(Bucket, Double, Double?, Double?, Double?, String)] = []
            switch catalog.kind(of: type) {
            case .cumulative:
                o.statistics = [.sum]
                values = try aggregate(type, from: before, to: hi, options: o).rows.compactMap { r in
                    r.values[.sum].map { (Bucket(start: r.start, end: r.end), $0, nil, nil, nil, "sum") }
                }
            case .discrete:
                o.statistics = [.mean, .min, .max]
                values = try aggregate(type, from: before, to: hi, options: o).rows.compactMap { r in
                    r.values[.mean].map {
                        (Bucket(start: r.start, end: r.end), $0, r.values[.min], r.values[.max], nil, "mean")
                    }
                }
            case .category where type == Self.sleepType:
                var nights: [Int64: [Double]] = [:]
                for n in try sleepNights(from: before, to: hi, options: o) {
                    nights[walker.bucket(containing: n.wakeTime).start, default: []].append(n.asleepSeconds / 60)
                }
                values = nights.keys.sorted().map { start in
                    let list = nights[start]!
                    return (
                        walker.bucket(containing: start), list.reduce(0, +) / Double(list.count), nil, nil,
                        Double(list.count), "asleep_min_per_night"
                    )
                }
            case .category:
                o.statistics = nil
                values = try aggregate(type, from: before, to: hi, options: o).rows.map { r in
                    (Bucket(start: r.start, end: r.end), r.seconds.values.reduce(0, +) / 60, nil, nil, nil, "minutes")
                }
            case .workout:
                var byPeriod: [Int64: (Int, Double)] = [:]
                for w in try workouts(from: before, to: hi) {
                    let b = walker.bucket(containing: w.start).start
                    byPeriod[b, default: (0, 0)].0 += 1
                    byPeriod[b, default: (0, 0)].1 += Double(w.end - w.start) / 60e6
                }
                values = byPeriod.keys.sorted().map { start in
                    (
                        walker.bucket(containing: start), Double(byPeriod[start]!.0), nil, nil, byPeriod[start]!.1,
                        "workouts"
                    )
                }
            }
            var previous: Double?
            var previousEnd: Int64?
            for (bucket, value, low, high, detail, statistic) in values {
                // Only the period right before counts as "previous".
                let comparable = previousEnd == bucket.start ? previous : nil
                if bucket.end > lo {
                    lines.append(
                        ReportLine(
                            start: bucket.start, end: bucket.end, type: type, statistic: statistic, value: value,
                            minimum: low, maximum: high, detail: detail, previous: comparable))
                }
                previous = value
                previousEnd = bucket.end
            }
        }
        // Each line's name made once, not twice a comparison.
        let names = lines.map { TypeNames.shortName($0.type) }
        return lines.indices.sorted { (lines[$0].start, names[$0]) < (lines[$1].start, names[$1]) }.map { lines[$0] }
    }
}
