/// One workout (``Store/workouts(from:to:with:)``).
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
    /// The `with` type during the workout: count/min/mean/max of a discrete type, or the
    /// prorated, de-duplicated `sum` of a cumulative one.
    public var with: (count: Int, min: Double?, mean: Double?, max: Double?, sum: Double?)?
    /// Apple's own figures per type (`WorkoutStatistics` in Health's export), as Apple computed them.
    public var appleStatistics: [AppleStatistic] = []
    /// Route files the workout names (`/workout-routes/route_….gpx`), linking its route points.
    public var routeFiles: [String] = []
    public var source: String?

    /// One `WorkoutStatistics` element.
    public struct AppleStatistic: Sendable {
        public var type: String
        public var sum: Double?
        public var average: Double?
        public var minimum: Double?
        public var maximum: Double?
        public var unit: String?
    }

    /// Apple's figures for `type`, if the workout has them.
    public func appleStatistic(_ type: String) -> AppleStatistic? { appleStatistics.first { $0.type == type } }
}

extension WorkoutSummary {
    /// The workout a `HKWorkoutTypeIdentifier` sample describes: activity, distance and energy
    /// from its metadata, named by `catalog`; Apple's statistics and route files when imported
    /// from Health's export.
    public init(_ s: Sample, catalog: TypeCatalog) {
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
        self.init(
            start: s.start.microseconds, end: s.end.microseconds, activity: activity,
            name: activity.map { catalog.workoutName($0) } ?? "workout",
            distance: number("totalDistance"), distanceUnit: meta?["totalDistanceUnit"]?.string,
            energy: number("totalEnergyBurned"), energyUnit: meta?["totalEnergyBurnedUnit"]?.string)
        source = s.source.string
        if case .array(let stats)? = meta?["HKWorkoutStatistics"] {
            appleStatistics = stats.compactMap { st in
                guard let type = st["type"]?.string else { return nil }
                func figure(_ key: String) -> Double? { st[key]?.string.flatMap { Double($0) } }
                return AppleStatistic(
                    type: type, sum: figure("sum"), average: figure("average"), minimum: figure("minimum"),
                    maximum: figure("maximum"), unit: st["unit"]?.string)
            }
        }
        if case .array(let routes)? = meta?["HKWorkoutRoutes"] {
            for route in routes {
                guard case .array(let refs)? = route["FileReference"] else { continue }
                routeFiles += refs.compactMap { $0["path"]?.string }
            }
        }
    }
}

extension Store {
    /// Workouts starting in `[from, to)`, with an optional other type's min/mean/max during each.
    public func workouts(from: Int64, to: Int64, with other: String? = nil) throws(TSDBError) -> [WorkoutSummary] {
        var out: [WorkoutSummary] = []
        var cursor = try samples(of: "HKWorkoutTypeIdentifier", from: from, to: to)
        let cumulative = other.map { catalog.kind(of: $0) == .cumulative } ?? false
        var o = AggregateOptions()
        o.statistics = cumulative ? [.count, .sum] : [.count, .min, .mean, .max]
        while let s = try cursor.next() {
            var w = WorkoutSummary(s, catalog: catalog)
            if let other {
                let row = try aggregate(other, from: w.start, to: max(w.end, w.start + 1), options: o).rows.first
                w.with = (
                    Int(row?.values[.count] ?? 0), row?.values[.min], row?.values[.mean], row?.values[.max],
                    cumulative ? (row?.values[.sum] ?? 0) : nil
                )
            }
            out.append(w)
        }
        return out
    }
}
