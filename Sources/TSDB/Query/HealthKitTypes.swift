/// How HealthKit aggregates a quantity type over time (`HKQuantityAggregationStyle`).
public enum AggregationStyle: String, Sendable, CaseIterable {
    /// Summed over time: steps, distance, energy, dietary intake.
    case cumulative
    /// Averaged with the arithmetic mean: body mass, HRV, SpO2, UV index.
    case discreteArithmetic
    /// Averaged weighting each sample by time (heart rate). tsdb's `mean` is the arithmetic mean of
    /// the samples; min, max and percentiles are the same either way.
    case discreteTemporallyWeighted
    /// Sound levels in dB: averaged as the equivalent continuous level, 10·log10 of the mean of
    /// 10^(L/10), so a loud minute is not cancelled by a quiet one.
    case discreteEquivalentContinuousLevel

    public var isDiscrete: Bool { self != .cumulative }
}

/// Every HealthKit sample type identifier tsdb knows by name, and each quantity type's
/// aggregation style as Apple documents it in `HKTypeIdentifiers.h` (iOS 18 SDK).
public enum HealthKitTypes {
    /// Quantity types by short name (the identifier without `HKQuantityTypeIdentifier`).
    public static let quantityStyles: [String: AggregationStyle] = {
        var table: [String: AggregationStyle] = [:]
        for name in cumulative { table[name] = .cumulative }
        for name in arithmetic { table[name] = .discreteArithmetic }
        for name in temporallyWeighted { table[name] = .discreteTemporallyWeighted }
        for name in equivalentContinuousLevel { table[name] = .discreteEquivalentContinuousLevel }
        return table
    }()

    /// The style of a quantity type identifier; an identifier not in Apple's list is discrete.
    public static func style(of identifier: String) -> AggregationStyle {
        // A look through the lists rather than `quantityStyles`: a command asks once or twice, and
        // building that dictionary first was the dearest step of a one-query process.
        // Lengths first (a native string's is stored): most names differ in length, and comparing
        // a name of 16 bytes or more went through the standard library's slow path. A look
        // through every list (heart rate's) took 5.4 K instructions, now 2.4 K (callgrind, a
        // year's workouts with their heart rate, one look a workout).
        let name = TypeNames.shortName(identifier)
        let length = name.utf8.count
        func listed(_ names: [String]) -> Bool { names.contains { $0.utf8.count == length && $0 == name } }
        if listed(cumulative) { return .cumulative }
        if listed(temporallyWeighted) { return .discreteTemporallyWeighted }
        if listed(equivalentContinuousLevel) { return .discreteEquivalentContinuousLevel }
        return .discreteArithmetic
    }

    /// Every identifier tsdb knows, full form (`HKQuantityTypeIdentifierHeartRate`).
    public static let allIdentifiers: [String] =
        quantityStyles.keys.sorted().map { "HKQuantityTypeIdentifier" + $0 }
        + categories.map { "HKCategoryTypeIdentifier" + $0 }
        + ["HKWorkoutTypeIdentifier", "HKCorrelationTypeIdentifierBloodPressure", "HKCorrelationTypeIdentifierFood"]

    static let cumulative = [
        "ActiveEnergyBurned", "AppleExerciseTime", "AppleMoveTime", "AppleStandTime", "BasalEnergyBurned",
        "DistanceCrossCountrySkiing", "DistanceCycling", "DistanceDownhillSnowSports", "DistancePaddleSports",
        "DistanceRowing", "DistanceSkatingSports", "DistanceSwimming", "DistanceWalkingRunning", "DistanceWheelchair",
        "FlightsClimbed", "NikeFuel", "PushCount", "StepCount", "SwimmingStrokeCount",
        "DietaryBiotin", "DietaryCaffeine", "DietaryCalcium", "DietaryCarbohydrates", "DietaryChloride",
        "DietaryCholesterol", "DietaryChromium", "DietaryCopper", "DietaryEnergyConsumed", "DietaryFatMonounsaturated",
        "DietaryFatPolyunsaturated", "DietaryFatSaturated", "DietaryFatTotal", "DietaryFiber", "DietaryFolate",
        "DietaryIodine", "DietaryIron", "DietaryMagnesium", "DietaryManganese", "DietaryMolybdenum", "DietaryNiacin",
        "DietaryPantothenicAcid", "DietaryPhosphorus", "DietaryPotassium", "DietaryProtein", "DietaryRiboflavin",
        "DietarySelenium", "DietarySodium", "DietarySugar", "DietaryThiamin", "DietaryVitaminA", "DietaryVitaminB12",
        "DietaryVitaminB6", "DietaryVitaminC", "DietaryVitaminD", "DietaryVitaminE", "DietaryVitaminK", "DietaryWater",
        "DietaryZinc", "InsulinDelivery", "NumberOfAlcoholicBeverages", "NumberOfTimesFallen", "TimeInDaylight",
        "InhalerUsage",
    ]

    static let arithmetic = [
        "AppleSleepingWristTemperature", "BodyFatPercentage", "BodyMass", "BodyMassIndex", "ElectrodermalActivity",
        "Height", "LeanBodyMass", "WaistCircumference", "CrossCountrySkiingSpeed", "CyclingCadence",
        "CyclingFunctionalThresholdPower", "CyclingPower", "CyclingSpeed", "EstimatedWorkoutEffortScore",
        "PaddleSportsSpeed", "PhysicalEffort", "RowingSpeed", "RunningPower", "RunningSpeed", "UnderwaterDepth",
        "WorkoutEffortScore", "HeartRateRecoveryOneMinute", "HeartRateVariabilitySDNN", "PeripheralPerfusionIndex",
        "RestingHeartRate", "VO2Max", "WalkingHeartRateAverage", "AppleWalkingSteadiness", "RunningGroundContactTime",
        "RunningStrideLength", "RunningVerticalOscillation", "SixMinuteWalkTestDistance", "StairAscentSpeed",
        "StairDescentSpeed", "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage", "WalkingSpeed",
        "WalkingStepLength", "BloodAlcoholContent", "BloodPressureDiastolic", "BloodPressureSystolic", "UVExposure",
        "WaterTemperature", "BasalBodyTemperature", "AppleSleepingBreathingDisturbances", "ForcedExpiratoryVolume1",
        "ForcedVitalCapacity", "OxygenSaturation", "PeakExpiratoryFlowRate", "RespiratoryRate", "BloodGlucose",
        "BodyTemperature",
    ]

    static let temporallyWeighted = ["AtrialFibrillationBurden", "HeartRate"]

    static let equivalentContinuousLevel = [
        "EnvironmentalAudioExposure", "EnvironmentalSoundReduction", "HeadphoneAudioExposure",
    ]

    static let categories = [
        "AppleStandHour", "EnvironmentalAudioExposureEvent", "HeadphoneAudioExposureEvent", "HighHeartRateEvent",
        "IrregularHeartRhythmEvent", "LowCardioFitnessEvent", "LowHeartRateEvent", "MindfulSession",
        "AppleWalkingSteadinessEvent", "HandwashingEvent", "ToothbrushingEvent", "BleedingAfterPregnancy",
        "BleedingDuringPregnancy", "CervicalMucusQuality", "Contraceptive", "InfrequentMenstrualCycles",
        "IntermenstrualBleeding", "IrregularMenstrualCycles", "Lactation", "MenstrualFlow", "OvulationTestResult",
        "PersistentIntermenstrualBleeding", "Pregnancy", "PregnancyTestResult", "ProgesteroneTestResult",
        "ProlongedMenstrualPeriods", "SexualActivity", "SleepApneaEvent", "SleepAnalysis", "AbdominalCramps", "Acne",
        "AppetiteChanges", "BladderIncontinence", "Bloating", "BreastPain", "ChestTightnessOrPain", "Chills",
        "Constipation", "Coughing", "Diarrhea", "Dizziness", "DrySkin", "Fainting", "Fatigue", "Fever",
        "GeneralizedBodyAche", "HairLoss", "Headache", "Heartburn", "HotFlashes", "LossOfSmell", "LossOfTaste",
        "LowerBackPain", "MemoryLapse", "MoodChanges", "Nausea", "NightSweats", "PelvicPain",
        "RapidPoundingOrFlutteringHeartbeat", "RunnyNose", "ShortnessOfBreath", "SinusCongestion", "SkippedHeartbeat",
        "SleepChanges", "SoreThroat", "VaginalDryness", "Vomiting", "Wheezing",
    ]
}
