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
