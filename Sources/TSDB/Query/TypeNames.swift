/// Resolves what a person types (`HeartRate`, `steps`, `sleep`) to a stored HealthKit identifier.
public enum TypeNames {
    static let prefixes = ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier", "HKDataTypeIdentifier"]
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
        for p in prefixes where identifier.hasPrefix(p) && identifier.count > p.count { return String(identifier.dropFirst(p.count)) }
        return identifier
    }

    /// The identifier among `known` that `name` means, case-insensitively, or an error with the closest names.
    public static func resolve(_ name: String, among known: [String]) throws(TSDBError) -> String {
        let key = name.lowercased()
        if let exact = known.first(where: { $0.lowercased() == key || shortName($0).lowercased() == key }) { return exact }
        if let alias = aliases[key] {
            if known.contains(alias) { return alias }
            throw TSDBError(.notFound, "\(name) means \(alias), which this store has no samples of")
        }
        let scored = known.map { (id: $0, distance: editDistance(key, shortName($0).lowercased())) }.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
        let close = scored.filter { $0.distance <= max(2, key.count / 3) }.prefix(3).map { shortName($0.id) }
        let hint = close.isEmpty ? "stored types: " + known.map(shortName).sorted().joined(separator: ", ") : "did you mean " + close.joined(separator: " or ") + "?"
        throw TSDBError(.notFound, "no type named \"\(name)\"; \(hint)")
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
