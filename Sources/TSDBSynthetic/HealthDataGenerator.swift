import TSDB

/// Generates realistic Apple Health day files in the seed's layout, deterministically per seed.
///
/// One person living in Europe/Paris (with EU daylight saving) who spends a week in Singapore:
/// heart rate every 1–3 minutes awake, ~4 minutes asleep and every ~5 s during workouts; sleep
/// stages overnight (a session crossing midnight is in both day files, as HealthKit exports it);
/// steps and walking distance from both a watch and a phone; active and basal energy, exercise
/// minutes, stand hours, flights, HRV, SpO2, respiratory rate, resting and walking heart rate,
/// VO2 max, body mass, mindful sessions, and 3–5 workouts a week with metadata.
/// With ``Options/edgeCases`` it also sprinkles in the awkward-but-valid input the raw format
/// allows: escapes and non-ASCII text, nested metadata, fractional seconds, unusual offsets,
/// `null` and absent fields, exponent numbers.
public struct HealthDataGenerator {
    public struct Options: Sendable {
        /// First day generated (`YYYY-MM-DD`).
        public var startDate = "2025-01-01"
        public var days = 365
        public var seed: UInt64 = 42
        /// Multiplies the at-rest heart-rate sampling rate; workouts stay at ~5 s
        /// (1 gives about 0.36 M heart-rate samples a year, `heavyHeartRateDensity` about 1.6 M).
        public var heartRateDensity = 1.0
        public var edgeCases = false
        public init() {}
    }

    /// Where the generated person lives (their offsets follow this zone's rules, but for a
    /// week abroad).
    public static let homeZone = "Europe/Paris"

    /// The density of the "heavy" data set (`tsdb generate --heavy`).
    public static let heavyHeartRateDensity = 7.0

    public let options: Options
    public init(options: Options) { self.options = options }

    static let watchSource = "com.apple.health.81C3F6A2-5B1E-4C7A-9D2E-3F4A5B6C7D8E"
    static let phoneSource = "com.apple.health.4A1B2C3D-9E8F-4765-A1B2-C3D4E5F6A7B8"
    static let watch = "Apple Watch Series 9"
    static let phone = "iPhone 15 Pro"
    static let minute: Int64 = 60_000_000
    static let second: Int64 = 1_000_000

    /// Writes `options.days` day files under `rawDirectory/YYYY/MM/`; returns files and samples written.
    @discardableResult
    public func write(rawDirectory: String, progress: ((Int, Int) -> Void)? = nil) throws(TSDBError) -> (
        files: Int, samples: Int
    ) {
        try FileSystem.requireEmptyOrMissing(
            rawDirectory,
            "synthetic data is written only into a new or empty raw/ folder, "
                + "never over existing day files")
        var total = 0
        var files = 0
        try forEachDay { (date, dayStart, samples) throws(TSDBError) in
            let dayEnd = dayStart + ISO8601.microsPerDay
            let exported = ISO8601.format(dayEnd + 5 * Self.minute, TimeForm(offsetMinutes: 0, isZulu: true))
            let bytes = DayFileWriter.dayFile(
                date: date, exportedAt: exported,
                deviceInfo: [("phone", Self.phone), ("watch", Self.watch), ("os_version", "iOS 18.2")],
                samples: samples)
            let dir = rawDirectory + "/" + String(date.prefix(4)) + "/" + String(date.dropFirst(5).prefix(2))
            try FileSystem.makeDirectories(dir)
            try FileSystem.createNew(bytes, at: dir + "/" + date + ".json")
            total += samples.count
            files += 1
            progress?(files, options.days)
        }
        return (options.days, total)
    }

    /// Days since 1970 of a `YYYY-MM-DD` start date.
    static func firstDay(_ date: String) -> Int64? {
        guard DayFileParser.isCalendarDate(date) else { return nil }
        let u = Array(date.utf8)
        func num(_ r: Range<Int>) -> Int { r.reduce(0) { $0 * 10 + Int(u[$1] - 48) } }
        return ISO8601.days(year: num(0..<4), month: num(5..<7), day: num(8..<10))
    }

    /// Generates each day in turn: its date (`YYYY-MM-DD`), its first instant, and the samples of
    /// its day file (those starting that day, and those still running from the day before).
    func forEachDay(_ body: (String, Int64, [Sample]) throws(TSDBError) -> Void) throws(TSDBError) {
        var rng = SplitMix64(seed: options.seed)
        guard let firstDay = Self.firstDay(options.startDate) else {
            throw TSDBError.invalidInput("start date \"\(options.startDate)\" is not YYYY-MM-DD")
        }
        var carried: [Sample] = []
        var heart = HeartState()
        for d in 0..<options.days {
            let day = firstDay + Int64(d)
            let offset = zoneOffsetMinutes(day: day, dayIndex: d)
            let dayStart = day * ISO8601.microsPerDay - Int64(offset) * Self.minute
            let dayEnd = dayStart + ISO8601.microsPerDay
            var samples = carried.filter { $0.end.microseconds > dayStart || $0.start.microseconds >= dayStart }
            samples += generateDay(dayStart: dayStart, offset: offset, dayIndex: d, rng: &rng, heart: &heart)
            samples.sort { $0.start.microseconds < $1.start.microseconds }
            carried = samples.filter { $0.end.microseconds > dayEnd || $0.start.microseconds >= dayEnd }
            let inFile = samples.filter { $0.start.microseconds < dayEnd }
            let (y, m, dd) = ISO8601.civil(day)
            try body(monthKey(year: y, month: m) + "-" + (dd < 10 ? "0" : "") + String(dd), dayStart, inFile)
        }
    }

    /// Europe/Paris with EU DST (last Sunday of March to last Sunday of October), or Singapore
    /// (+08:00) for one week in late July.
    func zoneOffsetMinutes(day: Int64, dayIndex: Int) -> Int {
        if dayIndex % 365 >= 200 && dayIndex % 365 < 207 { return 480 }
        let (y, _, _) = ISO8601.civil(day)
        func lastSunday(_ month: Int) -> Int64 {
            let last = ISO8601.days(year: y, month: month, day: 31)
            let weekday = (last + 4) % 7  // 0 = Sunday; 1970-01-01 was a Thursday
            return last - (weekday < 0 ? weekday + 7 : weekday)
        }
        return day >= lastSunday(3) && day < lastSunday(10) ? 120 : 60
    }

    struct HeartState { var bpm = 64.0 }

    private func sample(
        _ type: String, _ start: Int64, _ end: Int64, _ offset: Int, _ value: SampleValue, _ unit: String?,
        watch: Bool = true, metadata: String? = nil, fraction: UInt8 = 0
    ) -> Sample {
        let form = TimeForm(offsetMinutes: Int16(offset), fractionDigits: fraction, isZulu: false)
        return Sample(
            type: type, start: Timestamp(microseconds: start, form: form),
            end: Timestamp(microseconds: end, form: form),
            value: value, unit: unit.map { .text($0) } ?? .null,
            source: .text(watch ? Self.watchSource : Self.phoneSource),
            device: .text(watch ? Self.watch : Self.phone), metadata: metadata.map { .text($0) } ?? .absent)
    }

    static func decimal(_ v: Double, _ scale: UInt8) -> SampleValue {
        let p = ExactDecimal.powersOfTen[Int(scale)]
        return .decimal(ExactDecimal(mantissa: Int64((v * p).rounded()), scale: scale))
    }

    static func integer(_ v: Int) -> SampleValue { .decimal(ExactDecimal(mantissa: Int64(v), scale: 0)) }

    private func generateDay(
        dayStart: Int64, offset: Int, dayIndex: Int, rng: inout SplitMix64, heart: inout HeartState
    ) -> [Sample] {
        var out: [Sample] = []
        let hk = "HKQuantityTypeIdentifier"
        func at(_ hours: Double) -> Int64 { dayStart + Int64(hours * 3600) * Self.second }
        func jitter(_ minutes: Double) -> Int64 {
            Int64(Double.random(in: -minutes...minutes, using: &rng) * 60) * Self.second
        }

        let wake = at(7) + jitter(40)
        let bed = at(23) + jitter(45)
        // Workouts: 3–5 a week, mostly in the evening.
        var workouts: [(Int64, Int64, Int)] = []
        if Double.random(in: 0..<1, using: &rng) < 0.6 {
            let kinds = [37, 13, 52, 20, 35, 63, 46]
            let kind = kinds[Int.random(in: 0..<kinds.count, using: &rng)]
            let start = at(Double.random(in: 7.5...19.5, using: &rng))
            let length = Int64(Int.random(in: 25...75, using: &rng)) * Self.minute
            workouts.append((start, start + length, kind))
        }
        func inWorkout(_ t: Int64) -> Bool { workouts.contains { t >= $0.0 && t < $0.1 } }

        // Heart rate over the waking day: every 1–3 min, every ~5 s in workouts.
        let motion = [
            "{\"HKMetadataKeyHeartRateMotionContext\":0}", "{\"HKMetadataKeyHeartRateMotionContext\":1}",
            "{\"HKMetadataKeyHeartRateMotionContext\":2}",
        ]
        var t = dayStart + Int64.random(in: 0..<120, using: &rng) * Self.second
        let density = max(0.05, options.heartRateDensity)
        while t < dayStart + ISO8601.microsPerDay {
            let asleep = t < wake || t >= bed
            let exercising = inWorkout(t)
            let target = exercising ? 145.0 : asleep ? 54.0 : 68.0
            heart.bpm += (target - heart.bpm) * (exercising ? 0.08 : 0.2) + rng.gaussian() * (exercising ? 1.5 : 2.5)
            heart.bpm = min(200, max(38, heart.bpm))
            let context = exercising ? 2 : asleep ? 1 : Int.random(in: 0...1, using: &rng)
            out.append(
                sample(
                    hk + "HeartRate", t, t, offset, Self.integer(Int(heart.bpm.rounded())), "count/min",
                    metadata: motion[context]))
            let step: Double =
                exercising
                ? Double.random(in: 4...6, using: &rng)
                : asleep ? Double.random(in: 180...300, using: &rng) : Double.random(in: 60...180, using: &rng)
            t +=
                Int64(exercising ? step : max(1, step / density)) * Self.second
                + (exercising ? 0 : Self.second * Int64.random(in: 0...1, using: &rng))
        }

        // Sleep session starting this evening (crosses midnight into the next day's file).
        var s = bed
        let sleepEnd = wake + ISO8601.microsPerDay + jitter(20)
        let sleepType = "HKCategoryTypeIdentifierSleepAnalysis"
        out.append(
            sample(
                sleepType, bed - 10 * Self.minute, sleepEnd, offset, Self.integer(0), nil,
                metadata: "{\"HKTimeZone\":\"Europe/Paris\"}"))
        while s < sleepEnd {
            let stage = [3, 3, 4, 5, 3, 2][Int.random(in: 0..<6, using: &rng)]
            let length = Int64(Int.random(in: 6...40, using: &rng)) * Self.minute
            let e = min(sleepEnd, s + length)
            out.append(
                sample(sleepType, s, e, offset, Self.integer(stage), nil, metadata: "{\"HKTimeZone\":\"Europe/Paris\"}")
            )
            if Int.random(in: 0..<4, using: &rng) == 0 {
                out.append(
                    sample(
                        hk + "RespiratoryRate", s, s, offset, Self.decimal(Double.random(in: 12...17, using: &rng), 1),
                        "count/min"))
            }
            if Int.random(in: 0..<5, using: &rng) == 0 {
                out.append(
                    sample(
                        hk + "OxygenSaturation", s, s, offset,
                        Self.decimal(Double.random(in: 0.93...1.0, using: &rng), 2), "%"))
            }
            s = e
        }

        // Steps and distance from the watch and the phone, overlapping as in real life.
        var w = wake + 10 * Self.minute
        while w < bed {
            let length =
                Int64(Int.random(in: 2...12, using: &rng)) * Self.minute + Int64.random(in: 0..<60, using: &rng)
                * Self.second
            let steps = Int.random(in: 10...450, using: &rng)
            for onWatch in [true, false] where onWatch || Int.random(in: 0..<3, using: &rng) > 0 {
                let n = onWatch ? steps : Int(Double(steps) * Double.random(in: 0.85...1.05, using: &rng))
                let shift = onWatch ? 0 : Int64.random(in: -60...60, using: &rng) * Self.second
                out.append(
                    sample(
                        hk + "StepCount", w + shift, w + shift + length, offset, Self.integer(n), "count",
                        watch: onWatch))
                out.append(
                    sample(
                        hk + "DistanceWalkingRunning", w + shift, w + shift + length, offset,
                        Self.decimal(Double(n) * 0.74, 3), "m", watch: onWatch))
            }
            w += length + Int64(Int.random(in: 3...25, using: &rng)) * Self.minute
        }

        // Energy: active every few minutes awake, basal hourly.
        var e = wake
        while e < bed {
            let length = Int64(Int.random(in: 1...8, using: &rng)) * Self.minute
            out.append(
                sample(
                    hk + "ActiveEnergyBurned", e, e + length, offset,
                    Self.decimal(Double.random(in: 0.2...(inWorkout(e) ? 60 : 9), using: &rng), 3), "kcal"))
            e += length + Int64(Int.random(in: 4...14, using: &rng)) * Self.minute
        }
        for h in 0..<24 {
            out.append(
                sample(
                    hk + "BasalEnergyBurned", at(Double(h)), at(Double(h + 1)), offset,
                    Self.decimal(Double.random(in: 60...75, using: &rng), 2), "kcal"))
        }
        // Stand hours and flights while awake.
        for h in 8..<22 {
            out.append(
                sample(
                    "HKCategoryTypeIdentifierAppleStandHour", at(Double(h)), at(Double(h + 1)), offset,
                    Self.integer(Int.random(in: 0..<4, using: &rng) == 0 ? 0 : 1), nil))
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let f = at(Double(h) + 0.3)
                out.append(
                    sample(
                        hk + "FlightsClimbed", f, f + Self.minute, offset,
                        Self.integer(Int.random(in: 1...4, using: &rng)), "count",
                        watch: Bool.random(using: &rng)))
            }
        }
        // Daily and occasional measurements.
        let hrvTimes = Int.random(in: 2...6, using: &rng)
        for _ in 0..<hrvTimes {
            let h = at(Double.random(in: 0...24, using: &rng))
            out.append(
                sample(
                    hk + "HeartRateVariabilitySDNN", h, h + Self.minute, offset,
                    Self.decimal(Double.random(in: 25...90, using: &rng), 4), "ms"))
        }
        out.append(
            sample(
                hk + "RestingHeartRate", at(0), at(24) - Self.second, offset,
                Self.integer(Int.random(in: 52...62, using: &rng)), "count/min"))
        out.append(
            sample(
                hk + "WalkingHeartRateAverage", at(0), at(24) - Self.second, offset,
                Self.integer(Int.random(in: 95...115, using: &rng)), "count/min"))
        if dayIndex % 7 == 0 {
            out.append(
                sample(
                    hk + "BodyMass", at(7.4), at(7.4), offset, Self.decimal(72 + rng.gaussian() * 0.6, 2), "kg",
                    watch: false))
            out.append(
                sample(
                    hk + "VO2Max", at(20), at(20), offset, Self.decimal(Double.random(in: 40...46, using: &rng), 2),
                    "ml/(kg*min)"))
        }
        if Int.random(in: 0..<5, using: &rng) == 0 {
            let m = at(Double.random(in: 8...21, using: &rng))
            out.append(
                sample(
                    "HKCategoryTypeIdentifierMindfulSession", m, m + 10 * Self.minute, offset, Self.integer(0), nil,
                    watch: false))
        }
        for (start, end, kind) in workouts {
            var minuteStart = start
            while minuteStart + Self.minute <= end {
                out.append(
                    sample(
                        hk + "AppleExerciseTime", minuteStart, minuteStart + Self.minute, offset, Self.integer(1), "min"
                    ))
                minuteStart += Self.minute
            }
            let minutes = Double(end - start) / Double(Self.minute)
            let distance = [37: 170.0, 13: 420.0, 52: 95.0, 46: 40.0][kind].map { Int($0 * minutes) }
            var meta = "{\"HKIndoorWorkout\":\(kind == 20 || kind == 35 ? 1 : 0),\"HKTimeZone\":\"Europe/Paris\""
            if let distance { meta += ",\"totalDistance\":\(distance),\"totalDistanceUnit\":\"m\"" }
            let energy = Int(minutes * Double.random(in: 6...12, using: &rng))
            meta +=
                ",\"totalEnergyBurned\":\(energy),\"totalEnergyBurnedUnit\":\"kcal\",\"workoutActivityType\":\(kind)}"
            out.append(sample("HKWorkoutTypeIdentifier", start, end, offset, .null, nil, metadata: meta))
        }
        if options.edgeCases { out += edgeCases(dayStart: dayStart, offset: offset, dayIndex: dayIndex, rng: &rng) }
        return out
    }

    /// Valid but awkward samples (Formats/raw-json-v1.md lists what is accepted).
    private func edgeCases(dayStart: Int64, offset: Int, dayIndex: Int, rng: inout SplitMix64) -> [Sample] {
        var out: [Sample] = []
        let t = dayStart + Int64.random(in: 1..<86_000, using: &rng) * Self.second
        let odd = [345, -570, 0, 330, -210, 840, -720][dayIndex % 7]
        let zulu = TimeForm(offsetMinutes: 0, fractionDigits: 3, isZulu: true)
        let micros = Int64.random(in: 0..<1_000_000, using: &rng)
        let frac = TimeForm(offsetMinutes: Int16(odd), fractionDigits: 6, isZulu: false)
        out.append(
            Sample(
                type: "HKQuantityTypeIdentifierHeartRate", start: Timestamp(microseconds: t + micros, form: frac),
                end: Timestamp(microseconds: t + micros, form: frac), value: Self.integer(70), unit: .text("count/min"),
                source: .text("Caf\u{E9} \"Pulse\" \\ app \u{1F493}"), device: .null,
                metadata: .text(
                    "{\"nested\":{\"a\":[1,2.50,{\"b\":null}],\"c\":true},\"s\":\"line\\nbreak \\u0001 \u{263A}\"}")))
        out.append(
            Sample(
                type: "HKQuantityTypeIdentifierBodyTemperature",
                start: Timestamp(microseconds: t / 1000 * 1000, form: zulu),
                end: Timestamp(microseconds: t / 1000 * 1000 + 1000, form: zulu), value: .numberText("3.65e1"),
                unit: .text("degC")))
        out.append(
            Sample(
                type: "HKQuantityTypeIdentifierBodyTemperature",
                start: Timestamp(microseconds: t + Self.second, form: .zulu),
                end: Timestamp(microseconds: t + Self.second, form: .zulu), value: .null, unit: .absent,
                source: .absent, device: .absent, metadata: .null))
        out.append(
            Sample(
                type: "HKQuantityTypeIdentifierBodyTemperature",
                start: Timestamp(microseconds: t + 2 * Self.second, form: .zulu),
                end: Timestamp(microseconds: t + 2 * Self.second, form: .zulu), value: .absent,
                source: .text(Self.phoneSource)))
        let big = Int64.random(in: -999_999_999_999...999_999_999_999, using: &rng)
        out.append(
            Sample(
                type: "HKQuantityTypeIdentifierDietaryWater",
                start: Timestamp(microseconds: t + 3 * Self.second, form: .zulu),
                end: Timestamp(microseconds: t + 3 * Self.second, form: .zulu),
                value: .decimal(ExactDecimal(mantissa: big, scale: UInt8(Int.random(in: 0...12, using: &rng)))),
                unit: .text("mL"),
                source: .text(Self.phoneSource), device: .text("iPhone")))
        out.append(
            Sample(
                type: "HKQuantityTypeIdentifierDietaryWater",
                start: Timestamp(microseconds: t + 4 * Self.second, form: .zulu),
                end: Timestamp(microseconds: t + 4 * Self.second, form: .zulu), value: .numberText("-0"),
                unit: .text("mL")))
        return out
    }
}
