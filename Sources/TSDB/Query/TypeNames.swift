/// Resolves what a person types (`HeartRate`, `steps`, `sleep`) to a stored HealthKit identifier.
public enum TypeNames {
    static let prefixes = [
        "HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier", "HKDataTypeIdentifier",
    ]
    /// Everyday names for identifiers whose short name differs.
    static let aliases: [String: String] = [
        "steps": "HKQuantityTypeIdentifierStepCount",
        "hr": "HKQuantityTypeIdentifierHeartRate",
        "hrv": "HKQuantityTypeIdentifierHeartRateVariabilitySDNN",
        "spo2": "HKQuantityTypeIdentifierOxygenSaturation",
        "sleep": "HKCategoryTypeIdentifierSleepAnalysis",
        "workout": "HKWorkoutTypeIdentifier",
        "workouts": "HKWorkoutTypeIdentifier",
        "weight": "HKQuantityTypeIdentifierBodyMass",
        "distance": "HKQuantityTypeIdentifierDistanceWalkingRunning",
        "activeenergy": "HKQuantityTypeIdentifierActiveEnergyBurned",
        "restingenergy": "HKQuantityTypeIdentifierBasalEnergyBurned",
        "exercise": "HKQuantityTypeIdentifierAppleExerciseTime",
        "standhour": "HKCategoryTypeIdentifierAppleStandHour",
    ]

    /// The short name: the identifier without its HealthKit prefix (`HeartRate`, `Workout`).
    public static func shortName(_ identifier: String) -> String {
        if identifier == "HKWorkoutTypeIdentifier" { return "Workout" }
        if identifier == "HKActivitySummaryTypeIdentifier" { return "ActivitySummary" }
        if identifier == "HKWorkoutRouteTypeIdentifier" { return "WorkoutRoute" }
        if identifier == "HKElectrocardiogramVoltage" { return "ElectrocardiogramVoltage" }
        // Counted in bytes: the prefixes are ASCII, so where one matches, its last byte ends a
        // character. Counted in characters, a year's monthly report (1,310 calls) took 137.5 M
        // instructions against 106.7 M with this and its sort making each name once (callgrind).
        for p in prefixes where identifier.hasPrefix(p) && identifier.utf8.count > p.utf8.count {
            return String(identifier[identifier.utf8.index(identifier.startIndex, offsetBy: p.utf8.count)...])
        }
        return identifier
    }

    /// The identifier among `stored` that `name` means, case-insensitively. A name that is not
    /// stored gets an error: a known HealthKit type says the store has no samples of it, anything
    /// else suggests the closest stored names.
    public static func resolve(_ name: String, among stored: [String]) throws(TSDBError) -> String {
        let key = name.lowercased()
        func matches(_ id: String) -> Bool { id.lowercased() == key || shortName(id).lowercased() == key }
        if let exact = stored.first(where: matches) { return exact }
        if let alias = aliases[key], stored.contains(alias) { return alias }
        let listing =
            stored.isEmpty
            ? "the store holds no samples yet"
            : "it has " + stored.map(shortName).sorted().joined(separator: ", ")
        if let known = aliases[key] ?? HealthKitTypes.allIdentifiers.first(where: matches) {
            throw TSDBError.notFound("this store has no \(shortName(known)) samples (\(known)); \(listing)")
        }
        let close = closest(
            to: name, among: stored.map(shortName) + aliases.keys.filter { stored.contains(aliases[$0]!) })
        let hint = close.isEmpty ? listing : "did you mean " + close.joined(separator: " or ") + "?"
        throw TSDBError.notFound("no type named \"\(name)\"; \(hint)")
    }

    /// Up to three of `candidates` close to `name`: same prefix, or a small edit distance
    /// (case-insensitive), best first. The distance allowed grows with the name, about one edit in
    /// four letters: at one in three, "Nowhere" was close to "Rothera" (three of seven letters).
    public static func closest(to name: String, among candidates: [String]) -> [String] {
        let key = name.lowercased()
        guard !key.isEmpty else { return [] }
        let scored = Set(candidates).map { c -> (String, Int) in
            let lower = c.lowercased()
            let prefix = key.count >= 3 && (lower.hasPrefix(key) || key.hasPrefix(lower))
            return (c, prefix ? 0 : editDistance(key, lower))
        }
        let limit = max(1, min(3, (key.count + 2) / 4))
        return scored.filter { $0.1 <= limit }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    /// Edits (insertions, deletions, substitutions and swaps of two neighbours, each counted once)
    /// that turn `a` into `b`, no substring edited twice: a swap is the commonest typo ("Prais").
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard !a.isEmpty else { return b.count }
        // Rows i - 2, i - 1 and i of the table of distances between prefixes.
        var older = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var row = previous
        for i in 1...a.count {
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                row[j] = min(previous[j] + 1, row[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], older[j - 2] + 1)
                }
            }
            (older, previous) = (previous, row)
        }
        return previous[b.count]
    }
}
