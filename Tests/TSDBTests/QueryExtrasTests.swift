import Foundation
import Testing

@testable import TSDB

@Suite struct TypeCatalogTests {
    @Test func typesJSONNamesAndBuiltInFallbacks() throws {
        let folder = TemporaryFolder("catalog")
        defer { folder.cleanup() }
        folder.write("{}", to: "raw/.keep")
        folder.write(
            """
            {"quantity_types": {"HKQuantityTypeIdentifierStepCount": {"name": "Steps", "unit": "count"}},
             "category_types": {"HKCategoryTypeIdentifierSleepAnalysis": {"name": "Sleep", "values": {"0": \
             "inBed", "4": "deepSleep"}},
                                "HKCategoryTypeIdentifierMindfulSession": {"name": "Mindful Session", "values": {}}},
             "workout_activity_types": {"37": "run", "3000": "other"}}
            """, to: "types.json")
        let catalog = TypeCatalog(layout: StoreLayout(appleHealthDirectory: folder.path))
        #expect(catalog.displayName("HKQuantityTypeIdentifierStepCount") == "Steps")
        #expect(catalog.displayName("HKQuantityTypeIdentifierHeartRate") == "HeartRate")
        #expect(catalog.categoryName("HKCategoryTypeIdentifierSleepAnalysis", 4) == "deepSleep")
        #expect(catalog.categoryName("HKCategoryTypeIdentifierAppleStandHour", 1) == "stood")  // built-in
        #expect(catalog.categoryName("HKCategoryTypeIdentifierMindfulSession", 0) == "value 0")
        #expect(catalog.workoutName(37) == "run" && catalog.workoutName(13) == "cycling")
        #expect(catalog.kind(of: "HKQuantityTypeIdentifierStepCount") == .cumulative)
        #expect(catalog.kind(of: "HKQuantityTypeIdentifierDietaryWater") == .cumulative)
        #expect(catalog.kind(of: "HKQuantityTypeIdentifierHeartRate") == .discrete)
        #expect(catalog.kind(of: "HKCategoryTypeIdentifierSleepAnalysis") == .category)
        #expect(catalog.kind(of: "HKWorkoutTypeIdentifier") == .workout)

        // A broken types.json does not break queries: the built-in names are used.
        folder.write("{not json", to: "types.json")
        #expect(
            TypeCatalog(layout: StoreLayout(appleHealthDirectory: folder.path)).categoryName(
                "HKCategoryTypeIdentifierSleepAnalysis", 4) == "asleepDeep")
    }
}

@Suite struct TypeNamesTests {
    /// The short name as first written, by characters.
    static func reference(_ identifier: String) -> String {
        let special = [
            "HKWorkoutTypeIdentifier": "Workout", "HKActivitySummaryTypeIdentifier": "ActivitySummary",
            "HKWorkoutRouteTypeIdentifier": "WorkoutRoute", "HKElectrocardiogramVoltage": "ElectrocardiogramVoltage",
        ]
        if let name = special[identifier] { return name }
        for p in TypeNames.prefixes where identifier.hasPrefix(p) && identifier.count > p.count {
            return String(identifier.dropFirst(p.count))
        }
        return identifier
    }

    /// Every known identifier, and ones a prefix alone, a prefix with a combining mark after it
    /// (no longer that prefix, as characters go) or with accents after it.
    @Test func shortNamesAreTheCharacterwiseOnes() {
        let odd = TypeNames.prefixes.flatMap { [$0, $0 + "\u{301}Rate", $0 + "Café", $0 + "é", "x" + $0 + "Rate"] }
        for identifier in HealthKitTypes.allIdentifiers + odd + ["HKWorkoutTypeIdentifier", "", "Steps"] {
            #expect(TypeNames.shortName(identifier) == Self.reference(identifier), "\(identifier)")
        }
    }
}

@Suite struct LatestTests {
    @Test func latestIsTheNewestSampleOfEachTypeFromOneBlock() throws {
        let folder = TemporaryFolder("latest")
        defer { folder.cleanup() }
        try generate(folder.path, days: 40, seed: 9, edgeCases: false, start: "2025-02-10")
        var options = CompactionOptions()
        options.blockSamples = 64  // many blocks per segment: only the last is read
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path), options: options).run()
        let store = try Store(at: folder.path)
        let raw = try rawSampleSet(folder.path + "/raw").keys
        for type in store.types.map(\.type) {
            let newest = raw.filter { $0.type == type }.map(\.start.microseconds).max()
            let latest = try store.latest(of: type)
            #expect(latest?.start.microseconds == newest, "\(type)")
            #expect(latest.map { raw.contains($0) } == true, "\(type)")
        }
        #expect(try store.latest(of: "HKQuantityTypeIdentifierBloodGlucose") == nil)
        let cli = try tsdbShell([
            "latest", "HeartRate", "Workout", "--format", "csv", "--tz", "UTC", "--store", folder.path,
        ])
        let lines = cli.stdout.split(separator: "\n")
        #expect(
            cli.status == 0 && lines.count == 3 && lines[1].hasPrefix("HeartRate,") && lines[2].hasPrefix("Workout,"))
    }
}

@Suite struct ManifestLoadingTests {
    @Test func storeDecodesRawFileEntriesOnlyWhenAskedAndThenCompletely() throws {
        let folder = TemporaryFolder("lazy-manifest")
        defer { folder.cleanup() }
        try generate(folder.path, days: 20, seed: 5, edgeCases: false)
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        let store = try Store(layout: layout)
        let full = try Manifest.read(at: layout.manifestPath)
        #expect(store.segmentEntries == full.segments)
        #expect(store.manifest == full && full.rawFiles.count == 20)
        #expect(store.missingDays.isEmpty)
    }
}
