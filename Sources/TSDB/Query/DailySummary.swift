/// A figure of a summary: a number, a text, or a nested group, in a fixed order so every output
/// format (JSON, YAML, CSV, Markdown) shows the same figures the same way.
public indirect enum SummaryValue: Sendable, Equatable {
    case number(Double)
    case text(String)
    case group([(key: String, value: SummaryValue)])
    case list([SummaryValue])

    public static func == (a: SummaryValue, b: SummaryValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): x == y
        case (.text(let x), .text(let y)): x == y
        case (.group(let x), .group(let y)): x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        case (.list(let x), .list(let y)): x == y
        default: false
        }
    }
}

/// One local day of a person's data (``Store/dailySummaries(from:to:options:)``).
public struct DailySummary: Sendable, Equatable {
    /// `YYYY-MM-DD` in the query's zone.
    public var date: String
    /// The day's figures, in the order of ``Store/summaryFigures``; types without data are left out.
    public var figures: [(key: String, value: SummaryValue)]

    public static func == (a: DailySummary, b: DailySummary) -> Bool {
        a.date == b.date && SummaryValue.group(a.figures) == SummaryValue.group(b.figures)
    }

    public subscript(key: String) -> SummaryValue? { figures.first { $0.key == key }?.value }
}

extension Store {
    /// The figures of a daily summary: (name, type, statistic) — sums for cumulative types, means
    /// for discrete ones, the last body mass of the day, minutes for category types.
    public static let summaryFigures: [(name: String, type: String, statistic: Statistic?)] = [
        ("steps", "HKQuantityTypeIdentifierStepCount", .sum),
        ("distance", "HKQuantityTypeIdentifierDistanceWalkingRunning", .sum),
        ("active_energy", "HKQuantityTypeIdentifierActiveEnergyBurned", .sum),
        ("resting_energy", "HKQuantityTypeIdentifierBasalEnergyBurned", .sum),
        ("exercise_min", "HKQuantityTypeIdentifierAppleExerciseTime", .sum),
        ("stand_hours", "HKCategoryTypeIdentifierAppleStandHour", nil),
        ("flights", "HKQuantityTypeIdentifierFlightsClimbed", .sum),
        ("resting_heart_rate", "HKQuantityTypeIdentifierRestingHeartRate", .mean),
        ("walking_heart_rate", "HKQuantityTypeIdentifierWalkingHeartRateAverage", .mean),
        ("heart_rate", "HKQuantityTypeIdentifierHeartRate", nil),
        ("hrv", "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", .mean),
        ("spo2", "HKQuantityTypeIdentifierOxygenSaturation", .mean),
        ("respiratory_rate", "HKQuantityTypeIdentifierRespiratoryRate", .mean),
        ("body_mass", "HKQuantityTypeIdentifierBodyMass", .last),
        ("mindful_min", "HKCategoryTypeIdentifierMindfulSession", nil),
    ]

    /// One summary per local day (in `options.zone`) of `[from, to)` (nil: the data's span) that
    /// has any data. Every figure comes from the same computations as `aggregate`, `sleepNights`
    /// and `workouts` (same de-duplication, same night rule: a night belongs to its wake-up day).
    public func dailySummaries(
        from: Int64? = nil, to: Int64? = nil,
        options: AggregateOptions = AggregateOptions()
    ) throws(TSDBError) -> [DailySummary] {
        let zone = options.zone
        let stored = Set(types.map(\.type))
        guard !stored.isEmpty else { return [] }
        let lo = from ?? segmentEntries.map(\.firstStart).min()!
        let hi = to ?? segmentEntries.map(\.maxEnd).max()! + 1
        var byDay: [String: [(key: String, value: SummaryValue)]] = [:]
        func date(_ t: Int64) -> String { String(localDate(t, zone)) }
        var day = options
        day.bucket = .calendar(.day)
        day.fill = false
        for figure in Self.summaryFigures where stored.contains(figure.type) {
            var o = day
            if let statistic = figure.statistic { o.statistics = [statistic] }
            if figure.name == "heart_rate" { o.statistics = [.min, .mean, .max] }
            for row in try aggregate(figure.type, from: lo, to: hi, options: o).rows {
                guard let value = Self.figure(figure.name, row) else { continue }
                byDay[date(row.start), default: []].append((figure.name, value))
            }
        }
        if stored.contains(Self.sleepType) {
            for night in try sleepNights(from: lo, to: hi, options: options) {
                byDay[night.date, default: []].append(("sleep", Self.sleepFigure(night, zone)))
            }
        }
        if stored.contains("HKWorkoutTypeIdentifier") {
            let heartRate =
                stored.contains("HKQuantityTypeIdentifierHeartRate") ? "HKQuantityTypeIdentifierHeartRate" : nil
            var workouts: [String: [SummaryValue]] = [:]
            for w in try self.workouts(from: lo, to: hi, with: heartRate) {
                workouts[date(w.start), default: []].append(Self.workoutFigure(w, zone))
            }
            for (d, list) in workouts { byDay[d, default: []].append(("workouts", .list(list))) }
        }
        let order = Dictionary(
            uniqueKeysWithValues: (Self.summaryFigures.map(\.name) + ["sleep", "workouts"]).enumerated().map {
                ($1, $0)
            })
        return byDay.keys.sorted().map { d in
            DailySummary(date: d, figures: byDay[d]!.sorted { order[$0.key]! < order[$1.key]! })
        }
    }

    static func figure(_ name: String, _ row: AggregateRow) -> SummaryValue? {
        switch name {
        case "heart_rate":
            guard let mean = row.values[.mean] else { return nil }
            return .group([
                ("min", .number(row.values[.min]!)), ("mean", .number(mean)), ("max", .number(row.values[.max]!)),
            ])
        case "stand_hours":
            // Stand hours are hour-long samples; value 1 means stood.
            guard let stood = row.seconds[1] else { return row.seconds.isEmpty ? nil : .number(0) }
            return .number((stood / 3600).rounded())
        case "mindful_min":
            let seconds = row.seconds.values.reduce(0, +)
            return seconds > 0 ? .number(seconds / 60) : nil
        default:
            return row.values.first.map { .number($0) }
        }
    }

    static func sleepFigure(_ n: SleepNight, _ zone: TimeZoneRules) -> SummaryValue {
        var g: [(key: String, value: SummaryValue)] = [
            ("bedtime", .text(localTimestamp(n.bedtime, zone))), ("wake", .text(localTimestamp(n.wakeTime, zone))),
            ("in_bed_min", .number(n.inBedSeconds / 60)), ("asleep_min", .number(n.asleepSeconds / 60)),
        ]
        for (value, name) in [(Int64(2), "awake_min"), (3, "core_min"), (4, "deep_min"), (5, "rem_min")] {
            if let s = n.secondsByValue[value] { g.append((name, .number(s / 60))) }
        }
        return .group(g)
    }

    static func workoutFigure(_ w: WorkoutSummary, _ zone: TimeZoneRules) -> SummaryValue {
        var g: [(key: String, value: SummaryValue)] = [
            ("type", .text(w.name)), ("start", .text(localTimestamp(w.start, zone))),
            ("duration_min", .number(Double(w.end - w.start) / 60e6)),
        ]
        if let d = w.distance {
            g.append(("distance", .number(d)))
            g.append(("distance_unit", .text(w.distanceUnit ?? "")))
        }
        if let e = w.energy {
            g.append(("energy", .number(e)))
            g.append(("energy_unit", .text(w.energyUnit ?? "")))
        }
        if let mean = w.with?.mean { g.append(("heart_rate_mean", .number(mean))) }
        return .group(g)
    }
}
