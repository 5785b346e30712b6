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
    static let asleepValues: Set<Int64> = [1, 3, 4, 5]

    /// Nights whose wake-up date lies in `[from, to)`. A night runs from noon to noon in
    /// `options.zone`; samples from several sources covering the same time count once, from the
    /// highest-priority source (``AggregateOptions/priority``); `options.source` filters sources.
    public func sleepNights(from: Int64, to: Int64, options: AggregateOptions = AggregateOptions()) throws(TSDBError) -> [SleepNight] {
        let zone = options.zone
        let micros: Int64 = 1_000_000
        func localDay(_ t: Int64) -> Int64 {
            let s = ISO8601.floorDivide(t, micros).0
            return ISO8601.floorDivide(s + Int64(zone.offset(atUTC: s)), 86_400).0
        }
        // Night of wake-up day D: [noon of D-1, noon of D), local.
        func noon(_ day: Int64) -> Int64 { zone.utc(fromLocal: day * 86_400 + 43_200) * micros }
        let firstDay = localDay(from), lastDay = localDay(to - 1)
        guard lastDay >= firstDay else { return [] }
        let windowStart = noon(firstDay - 1), windowEnd = noon(lastDay)
        let ranks = options.priority.map { $0.lowercased() }
        let filter = options.source?.lowercased()
        var samples: [IntervalSample] = []
        for segment in try segments(of: Self.sleepType, from: windowStart, to: windowEnd, overlapping: true) {
            let block = DecodedBlock()
            for b in 0..<segment.blockCount where segment.summaries[b].maxEnd > windowStart && segment.summaries[b].firstStart < windowEnd {
                try segment.decode(block: b, into: block)
                for i in 0..<block.count where block.ends[i] > windowStart && block.starts[i] < windowEnd {
                    guard UInt8(truncatingIfNeeded: block.valueTags[i]) == ValueTag.decimalBase else { continue }
                    let texts = [segment.sources[Int(block.sources[i])].string, segment.devices[Int(block.devices[i])].string].compactMap { $0?.lowercased() }
                    if let filter, !texts.contains(where: { $0.contains(filter) }) { continue }
                    let rank = ranks.firstIndex { r in texts.contains { $0.contains(r) } } ?? ranks.count
                    samples.append(IntervalSample(start: block.starts[i], end: block.ends[i], amount: Double(block.mantissas[i]), rank: rank))
                }
            }
        }
        let pieces = options.deduplicate ? Self.uncoveredPieces(samples) : samples.map { ($0, $0.start, $0.end) }
        var nights: [SleepNight] = []
        for day in firstDay...lastDay {
            let a = noon(day - 1), b = noon(day)
            var byValue: [Int64: Double] = [:]
            var spans: [(Int64, Int64)] = []
            var asleep: [(Int64, Int64)] = []
            for (sample, p, q) in pieces {
                let s = max(p, a), e = min(q, b)
                guard e > s else { continue }
                let value = Int64(sample.amount)
                byValue[value, default: 0] += Double(e - s) / 1e6
                spans.append((s, e))
                if Self.asleepValues.contains(value) { asleep.append((s, e)) }
            }
            guard !spans.isEmpty else { continue }
            let (y, m, d) = ISO8601.civil(day)
            nights.append(SleepNight(date: monthKey(year: y, month: m) + "-" + (d < 10 ? "0" : "") + String(d),
                                     bedtime: spans.map(\.0).min()!, wakeTime: spans.map(\.1).max()!,
                                     inBedSeconds: Self.unionSeconds(spans), asleepSeconds: Self.unionSeconds(asleep), secondsByValue: byValue))
        }
        return nights
    }

    static func unionSeconds(_ spans: [(Int64, Int64)]) -> Double {
        var total: Int64 = 0
        var end = Int64.min
        for (s, e) in spans.sorted(by: { $0.0 < $1.0 }) {
            let from = max(s, end)
            if e > from { total += e - from }
            end = max(end, e)
        }
        return Double(total) / 1e6
    }
}

/// One workout (``Store/workouts(from:to:with:zone:)``).
public struct WorkoutSummary: Sendable {
    public var start: Int64
    public var end: Int64
    public var activity: Int64?
    public var name: String
    /// `totalDistance`/`totalEnergyBurned` and their units from the metadata, when present.
    public var distance: Double?
    public var distanceUnit: String?
    public var energy: Double?
    public var energyUnit: String?
    /// min/mean/max of the `with` type during the workout.
    public var with: (count: Int, min: Double?, mean: Double?, max: Double?)?
}

extension Store {
    /// Workouts starting in `[from, to)`, with an optional other type's min/mean/max during each.
    public func workouts(from: Int64, to: Int64, with other: String? = nil) throws(TSDBError) -> [WorkoutSummary] {
        var out: [WorkoutSummary] = []
        var cursor = try samples(of: "HKWorkoutTypeIdentifier", from: from, to: to)
        while let s = try cursor.next() {
            var meta: JSONValue?
            if case .text(let text) = s.metadata {
                var t = text
                meta = t.withUTF8 { try? JSONValue.parse(UnsafeRawBufferPointer($0)) }
            }
            func number(_ key: String) -> Double? {
                if case .number(let n)? = meta?[key] { return Double(n) }
                return nil
            }
            let activity = number("workoutActivityType").map { Int64($0) }
            var w = WorkoutSummary(start: s.start.microseconds, end: s.end.microseconds, activity: activity,
                                   name: activity.map { catalog.workoutName($0) } ?? "workout",
                                   distance: number("totalDistance"), distanceUnit: meta?["totalDistanceUnit"]?.string,
                                   energy: number("totalEnergyBurned"), energyUnit: meta?["totalEnergyBurnedUnit"]?.string)
            if let other {
                var o = AggregateOptions()
                o.statistics = [.count, .min, .mean, .max]
                let row = try aggregate(other, from: w.start, to: max(w.end, w.start + 1), options: o).rows.first
                w.with = (Int(row?.values[.count] ?? 0), row?.values[.min], row?.values[.mean], row?.values[.max])
            }
            out.append(w)
        }
        return out
    }
}
