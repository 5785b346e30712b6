/// What each sample type is and how it aggregates, the way HealthKit's statistics do:
/// cumulative quantities sum (steps, distance, energy…), discrete ones average (heart rate,
/// body mass…), categories accumulate time per value (sleep stages), workouts are listed.
public struct TypeCatalog: Sendable {
    public enum Kind: String, Sendable {
        case cumulative, discrete, category, workout
    }

    /// Display names from `types.json` (when present), else built-in ones.
    var names: [String: String] = [:]
    var categoryValueNames: [String: [Int64: String]] = TypeCatalog.builtInCategoryValues
    var workoutActivityNames: [Int64: String] = TypeCatalog.builtInWorkoutActivities

    public init() {}

    /// The catalog for a store: built-ins, overridden by `<apple-health>/types.json` if it reads.
    public init(layout: StoreLayout) {
        guard let file = try? MappedFile(path: layout.typesFilePath),
            let json = try? file.withBytes({ (b) throws(TSDBError) in try JSONValue.parse(b, path: file.path) })
        else { return }
        for section in ["quantity_types", "category_types"] {
            for (id, entry) in json[section]?.object ?? [:] {
                if let name = entry["name"]?.string { names[id] = name }
                if let values = entry["values"]?.object, !values.isEmpty {
                    var map: [Int64: String] = [:]
                    for (k, v) in values { if let n = Int64(k), let s = v.string { map[n] = s } }
                    categoryValueNames[id] = map
                }
            }
        }
        for (k, v) in json["workout_activity_types"]?.object ?? [:] {
            if let n = Int64(k), let s = v.string { workoutActivityNames[n] = s }
        }
    }

    public func kind(of type: String) -> Kind { Self.kind(of: type) }

    /// A type's kind follows from its identifier alone: no catalog (and none of its tables) is needed.
    public static func kind(of type: String) -> Kind { kind(of: type, style: HealthKitTypes.style(of: type)) }

    /// ``kind(of:)`` with the type's style (``HealthKitTypes/style(of:)``) given, asked for only
    /// for a quantity type.
    static func kind(of type: String, style: @autoclosure () -> AggregationStyle) -> Kind {
        if type == "HKWorkoutTypeIdentifier" { return .workout }
        if type.hasPrefix("HKCategoryTypeIdentifier") { return .category }
        return style() == .cumulative ? .cumulative : .discrete
    }

    /// The aggregation style of a quantity type (``HealthKitTypes``); unknown identifiers are discrete.
    public func style(of type: String) -> AggregationStyle { HealthKitTypes.style(of: type) }

    public func displayName(_ type: String) -> String { names[type] ?? TypeNames.shortName(type) }

    /// The name of a category value (`4` of SleepAnalysis is `asleepDeep`), or `value 4` when unnamed.
    public func categoryName(_ type: String, _ value: Int64) -> String {
        categoryValueNames[type]?[value] ?? "value \(value)"
    }

    /// A sample's value for people: a category value by its name (`asleepCore`), a workout by its
    /// activity (`running`), a number exactly as written, nothing for null or absent.
    public func describeValue(of sample: Sample) -> String {
        let kind = kind(of: sample.type)
        if kind == .category, case .decimal(let d) = sample.value, d.scale == 0 {
            return categoryName(sample.type, d.mantissa)
        }
        if kind == .workout, case .text(var text) = sample.metadata,
            let json = text.withUTF8({ try? JSONValue.parse(UnsafeRawBufferPointer($0)) }),
            case .number(let n)? = json["workoutActivityType"], let activity = Int64(String(n))
        {
            return workoutName(activity)
        }
        switch sample.value {
        case .absent, .null: return ""
        default: return sample.value.description
        }
    }

    public func workoutName(_ activity: Int64) -> String { workoutActivityNames[activity] ?? "activity \(activity)" }

    static let builtInCategoryValues: [String: [Int64: String]] = [
        "HKCategoryTypeIdentifierSleepAnalysis": [
            0: "inBed", 1: "asleepUnspecified", 2: "awake", 3: "asleepCore", 4: "asleepDeep", 5: "asleepREM",
        ],
        "HKCategoryTypeIdentifierAppleStandHour": [0: "idle", 1: "stood"],
    ]

    /// The exporter's own decoder ring (the seed's types.json), used when no types.json is present.
    package static let builtInWorkoutActivities: [Int64: String] = [
        37: "running", 13: "cycling", 46: "swimming", 52: "walking", 20: "functionalStrengthTraining", 35: "yoga",
        63: "highIntensityIntervalTraining", 3000: "other",
    ]
}
