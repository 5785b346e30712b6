import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Aggregates checked against an independent reference: bucket bounds from Foundation's
/// Calendar, statistics computed plainly over the samples parsed from the raw JSON.
@Suite(.serialized) struct AggregationTests {
    static let folder = TemporaryFolder("aggregate")
    static let fixture: (store: Store, raw: [Sample]) = {
        try! generate(folder.path, days: 75, seed: 41, edgeCases: false, start: "2025-02-15")
        _ = try! Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        return (try! Store(at: folder.path), Array(try! rawSampleSet(folder.path + "/raw").keys))
    }()

    static let zones = [
        "Europe/Paris", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "UTC",
        "America/St_Johns",
    ]

    /// The bucket containing `t` per Foundation (nil for `none`).
    static func referenceBucket(_ t: Int64, _ spec: BucketSpec, _ calendar: Calendar, anchor: Int64) -> Int64 {
        let date = Date(timeIntervalSince1970: Double(t) / 1e6)
        func micros(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1e6).rounded()) }
        switch spec {
        case .none: return anchor
        case .fixed(let seconds): return anchor + (t - anchor) / (seconds * 1_000_000) * seconds * 1_000_000
        case .calendar(let unit):
            let component: Calendar.Component = [
                .minute: .minute, .hour: .hour, .day: .day, .week: .weekOfYear, .month: .month, .year: .year,
            ][unit]!
            return micros(calendar.dateInterval(of: component, for: date)!.start)
        }
    }

    static func quantile(_ values: [Double], _ q: Double) -> Double {
        let v = values.sorted()
        let p = q * Double(v.count - 1)
        let i = Int(p)
        return i + 1 < v.count ? v[i] + (v[i + 1] - v[i]) * (p - Double(i)) : v[i]
    }

    func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
    }

    @Test(arguments: 0..<40)
    func discreteStatisticsMatchTheReference(round: Int) throws {
        let (store, raw) = Self.fixture
        var rng = SplitMix64(seed: UInt64(round) + 100)
        let zoneName = Self.zones[round % Self.zones.count]
        let zone = try TimeZoneRules.named(zoneName)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zoneName)!
        calendar.firstWeekday = 2
        let specs: [BucketSpec] = [
            .none, .calendar(.hour), .calendar(.day), .calendar(.week), .calendar(.month), .fixed(seconds: 900),
            .fixed(seconds: 6 * 3600), .calendar(.minute),
        ]
        let spec = specs[round % specs.count]
        let type = round % 5 == 4 ? "HKQuantityTypeIdentifierRespiratoryRate" : "HKQuantityTypeIdentifierHeartRate"
        let samples = raw.filter { $0.type == type }
        let first = samples.map(\.start.microseconds).min()!
        let last = samples.map(\.start.microseconds).max()!
        // Arbitrary instants, cutting blocks and segments anywhere; sometimes empty or outside the data.
        let span: Int64 =
            spec == .calendar(.minute) ? 3 * 3600_000_000 : Int64.random(in: 0...(40 * 86_400_000_000), using: &rng)
        let from =
            round % 13 == 7 ? last + 86_400_000_000 : Int64.random(in: (first - 86_400_000_000)...last, using: &rng)
        let to = from + span

        var o = AggregateOptions()
        o.bucket = spec
        o.zone = zone
        o.statistics = Statistic.allCases
        let result = try store.aggregate(type, from: from, to: to, options: o)

        let anchor: Int64 = {
            if spec == .none { return from }
            let startOfDay = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(from) / 1e6))
            return Int64((startOfDay.timeIntervalSince1970 * 1e6).rounded())
        }()
        let inRange = samples.filter { $0.start.microseconds >= from && $0.start.microseconds < to }.sorted {
            $0.start.microseconds < $1.start.microseconds
        }
        let groups = Dictionary(grouping: inRange) {
            Self.referenceBucket($0.start.microseconds, spec, calendar, anchor: anchor)
        }
        #expect(result.rows.count == groups.count, "round \(round) \(zoneName) \(spec)")
        for row in result.rows {
            let values = try #require(
                groups[row.start], "round \(round): bucket \(localTime(row.start, zone)) not in the reference"
            ).compactMap { $0.value.doubleValue }
            let n = Double(values.count)
            let total: Double = values.reduce(0, +)
            let mean: Double = total / n
            var squares = 0.0
            for v in values { squares += (v - mean) * (v - mean) }
            let variance: Double? = values.count > 1 ? squares / (n - 1) : nil
            let want: [Statistic: Double?] = [
                .count: n, .sum: total, .min: values.min(), .max: values.max(), .mean: mean,
                .first: values.first, .last: values.last, .stddev: variance.map { $0.squareRoot() },
                .p50: Self.quantile(values, 0.5), .p90: Self.quantile(values, 0.9), .p95: Self.quantile(values, 0.95),
                .p99: Self.quantile(values, 0.99),
            ]
            for (stat, expected) in want {
                let tolerance = stat == .stddev ? 1e-6 : 1e-9
                let got = row.values[stat]
                let ok =
                    expected == nil
                    ? got == nil : got.map { abs($0 - expected!) <= tolerance * max(1, abs(expected!)) } ?? false
                let place = "round \(round) \(zoneName) \(spec) \(stat) at \(localTime(row.start, zone))"
                #expect(ok, "\(place): \(String(describing: got)) vs \(String(describing: expected))")
            }
        }
    }

    @Test(arguments: 0..<25)
    func proratedSumsAndCategoryTimeMatchTheReference(round: Int) throws {
        let (store, raw) = Self.fixture
        var rng = SplitMix64(seed: UInt64(round) + 500)
        let zoneName = Self.zones[round % Self.zones.count]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zoneName)!
        calendar.firstWeekday = 2
        let spec: BucketSpec = [.calendar(.day), .calendar(.hour), .calendar(.week), .none, .fixed(seconds: 4 * 3600)][
            round % 5]
        let type = [
            "HKQuantityTypeIdentifierStepCount", "HKCategoryTypeIdentifierSleepAnalysis",
            "HKQuantityTypeIdentifierActiveEnergyBurned",
        ][round % 3]
        let samples = raw.filter { $0.type == type }
        let first = samples.map(\.start.microseconds).min()!
        let last = samples.map(\.end.microseconds).max()!
        let from = Int64.random(in: first...last, using: &rng)
        let to = from + Int64.random(in: 0...(20 * 86_400_000_000), using: &rng)
        var o = AggregateOptions()
        o.bucket = spec
        o.zone = try TimeZoneRules.named(zoneName)
        o.deduplicate = false
        let result = try store.aggregate(type, from: from, to: to, options: o)
        let anchor: Int64 =
            spec == .none
            ? from
            : Int64(
                (calendar.startOfDay(for: Date(timeIntervalSince1970: Double(from) / 1e6)).timeIntervalSince1970 * 1e6)
                    .rounded())

        // Reference: walk each sample's interval in one-second steps is too slow; split by
        // Foundation bucket bounds found by repeatedly asking for the bucket of the piece start.
        var want: [Int64: [Int64: Double]] = [:]  // bucket → (category value or 0) → amount
        for s in samples
        where s.end.microseconds > from && s.start.microseconds < to
            || s.start == s.end && s.start.microseconds >= from && s.start.microseconds < to
        {
            let a = max(s.start.microseconds, from)
            let b = min(s.end.microseconds, to)
            let isCategory = type.contains("Category")
            let key: Int64 = isCategory ? Int64(s.value.doubleValue!) : 0
            let length = Double(s.end.microseconds - s.start.microseconds)
            if length == 0 {
                want[Self.referenceBucket(a, spec, calendar, anchor: anchor), default: [:]][key, default: 0] +=
                    isCategory ? 0 : s.value.doubleValue!
                continue
            }
            var t = a
            while t < b {
                let bucket = Self.referenceBucket(t, spec, calendar, anchor: anchor)
                var end = b
                // The next bucket starts at the first instant (µs) whose bucket differs: bisect.
                if Self.referenceBucket(b - 1, spec, calendar, anchor: anchor) != bucket {
                    var lo = t
                    var hi = b - 1
                    while hi - lo > 1 {
                        let mid = (lo + hi) / 2
                        if Self.referenceBucket(mid, spec, calendar, anchor: anchor) == bucket {
                            lo = mid
                        } else {
                            hi = mid
                        }
                    }
                    end = hi
                }
                let share = Double(end - t) / length
                want[bucket, default: [:]][key, default: 0] +=
                    isCategory ? share * length / 1e6 : share * s.value.doubleValue!
                t = end
            }
        }
        let got = Dictionary(
            uniqueKeysWithValues: result.rows.map { row in
                (row.start, type.contains("Category") ? row.seconds : [0: row.values[.sum] ?? 0])
            })
        #expect(Set(got.keys) == Set(want.keys), "round \(round) \(zoneName) \(spec) \(type)")
        for (bucket, amounts) in want {
            for (key, amount) in amounts {
                #expect(
                    close(got[bucket]?[key] ?? 0, amount),
                    "round \(round) \(type) bucket \(bucket) key \(key): \(got[bucket]?[key] ?? 0) vs \(amount)")
            }
        }
    }

    @Test func dstDaysAreTwentyThreeAndTwentyFiveHours() throws {
        let paris = try TimeZoneRules.named("Europe/Paris")
        let from = Timestamp("2025-03-29T12:00:00Z")!.microseconds
        let to = Timestamp("2025-10-28T00:00:00Z")!.microseconds
        let days = BucketWalker(spec: .calendar(.day), zone: paris, from: from, to: to).buckets(from: from, to: to)
        var hours: [String: Int64] = [:]
        for b in days { hours[String(localTime(b.start, paris).prefix(10))] = (b.end - b.start) / 3_600_000_000 }
        #expect(hours["2025-03-29"] == 24 && hours["2025-03-30"] == 23 && hours["2025-03-31"] == 24)
        #expect(hours["2025-10-25"] == 24 && hours["2025-10-26"] == 25 && hours["2025-10-27"] == 24)
        #expect(hours.values.filter { $0 != 24 }.count == 2)
        // Hour buckets across the October change: the repeated 02:00 hour is a bucket of its own.
        let a = Timestamp("2025-10-26T00:00:00+02:00")!.microseconds
        let b = Timestamp("2025-10-26T05:00:00+01:00")!.microseconds
        #expect(BucketWalker(spec: .calendar(.hour), zone: paris, from: a, to: b).buckets(from: a, to: b).count == 6)
    }

    /// A duration too long for any range (past 10,000 years, or overflowing in microseconds) is
    /// refused with the text given, not a crash; the longest allowed still aggregates.
    @Test func durationsLongerThanAnyRangeAreRefused() throws {
        for text in ["99999999999999w", "9999999999999d", "999999999999s", "3660001d", "106751992d"] {
            #expect {
                _ = try BucketSpec.parse(text)
            } throws: { error in
                let e = error as? TSDBError
                return e?.kind == .invalidInput && e!.description.contains("\"\(text)\"")
                    && e!.description.contains("10,000 years")
            }
        }
        #expect(try BucketSpec.parse("3660000d") == .fixed(seconds: 3_660_000 * 86_400))
        let (store, folder) = try DeduplicationTests().store([
            DeduplicationTests().steps("08:00", "08:10", 100, "Watch")
        ])
        defer { folder.cleanup() }
        for seconds: Int64 in [0, -60, 99_999_999_999_999] {
            var options = AggregateOptions()
            options.bucket = .fixed(seconds: seconds)
            #expect(throws: TSDBError.self, "\(seconds) s") {
                _ = try store.aggregate("HKQuantityTypeIdentifierStepCount", options: options)
            }
        }
        var options = AggregateOptions()
        options.bucket = try BucketSpec.parse("3660000d")
        let rows = try store.aggregate("HKQuantityTypeIdentifierStepCount", options: options).rows
        #expect(rows.count == 1 && rows[0].values[.sum] == 100)
    }
}

/// Hand-worked cases for source priority and proration, with exact expected numbers.
@Suite(.serialized) struct DeduplicationTests {
    func store(_ samples: [String]) throws -> (Store, TemporaryFolder) {
        let folder = TemporaryFolder("dedupe")
        folder.write(
            #"{"date":"2025-06-01","samples":["# + samples.joined(separator: ",") + "]}",
            to: "raw/2025/06/2025-06-01.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        return (try Store(at: folder.path), folder)
    }

    func steps(_ start: String, _ end: String, _ value: Int, _ device: String) -> String {
        #"{"type":"HKQuantityTypeIdentifierStepCount","start":"2025-06-01T\#(start):00Z","#
            + #""end":"2025-06-01T\#(end):00Z","value":\#(value),"unit":"count","source":"com.apple.health.X","#
            + #""device":"\#(device)"}"#
    }

    @Test func overlappingWatchAndPhoneCountOnce() throws {
        // Watch 10:00–10:10 100 steps; phone 10:05–10:15 60 steps. The phone's 10:05–10:10 is
        // covered by the watch, so only its 10:10–10:15 half counts: 100 + 30 = 130.
        let (s, f) = try store([steps("10:00", "10:10", 100, "Apple Watch"), steps("10:05", "10:15", 60, "iPhone 15")])
        defer { f.cleanup() }
        var o = AggregateOptions()
        #expect(try s.aggregate("HKQuantityTypeIdentifierStepCount", options: o).rows.first?.values[.sum] == 130)
        o.deduplicate = false
        #expect(try s.aggregate("HKQuantityTypeIdentifierStepCount", options: o).rows.first?.values[.sum] == 160)
        o.deduplicate = true
        o.priority = ["iPhone", "Watch"]
        // Phone first: 60 + the watch's uncovered 10:00–10:05 half of 100 = 110.
        #expect(try s.aggregate("HKQuantityTypeIdentifierStepCount", options: o).rows.first?.values[.sum] == 110)
    }

    @Test func prorationAcrossBucketsAndRangeBounds() throws {
        // 120 steps from 09:50 to 10:10: 60 in the 09:00 hour, 60 in the 10:00 hour.
        let (s, f) = try store([steps("09:50", "10:10", 120, "Apple Watch")])
        defer { f.cleanup() }
        var o = AggregateOptions()
        o.bucket = .calendar(.hour)
        let rows = try s.aggregate("HKQuantityTypeIdentifierStepCount", options: o).rows
        #expect(rows.map { $0.values[.sum] } == [60, 60])
        // The range 10:00–10:05 cuts the sample: a quarter of it, 30.
        let cut = try s.aggregate(
            "HKQuantityTypeIdentifierStepCount", from: Timestamp("2025-06-01T10:00:00Z")!.microseconds,
            to: Timestamp("2025-06-01T10:05:00Z")!.microseconds, options: AggregateOptions())
        #expect(cut.rows.first?.values[.sum] == 30)
        o.prorate = false
        #expect(try s.aggregate("HKQuantityTypeIdentifierStepCount", options: o).rows.map { $0.values[.sum] } == [120])
    }

    @Test func threeSourcesAndContainedIntervals() throws {
        // Watch 10:00–10:30 300; phone 09:50–10:40 500 (10/50 before, 10/50 after the watch);
        // a scale app 10:35–10:45 100, half of it under the phone. 300 + 100 + 100 + 50 = 550.
        let (s, f) = try store([
            steps("10:00", "10:30", 300, "Apple Watch"), steps("09:50", "10:40", 500, "iPhone"),
            steps("10:35", "10:45", 100, "Other"),
        ])
        defer { f.cleanup() }
        #expect(try s.aggregate("HKQuantityTypeIdentifierStepCount").rows.first?.values[.sum] == 550)
    }

    @Test func sleepFromTwoSourcesIsNotDoubleCounted() throws {
        func sleep(_ start: String, _ end: String, _ value: Int, _ device: String) -> String {
            #"{"type":"HKCategoryTypeIdentifierSleepAnalysis","start":"2025-06-01T\#(start):00Z","#
                + #""end":"2025-06-01T\#(end):00Z","value":\#(value),"device":"\#(device)"}"#
        }
        // Watch: core 01:00–03:00, deep 03:00–04:00. Phone: asleep 00:30–04:30 (covers both).
        let (s, f) = try store([
            sleep("01:00", "03:00", 3, "Apple Watch"), sleep("03:00", "04:00", 4, "Apple Watch"),
            sleep("00:30", "04:30", 1, "iPhone"),
        ])
        defer { f.cleanup() }
        let row = try #require(try s.aggregate("HKCategoryTypeIdentifierSleepAnalysis").rows.first)
        #expect(row.seconds == [3: 7200, 4: 3600, 1: 3600])
    }

    @Test func categorySecondsAddUpPerValueAndCompareInAnyOrder() {
        var seconds = CategorySeconds()
        #expect(seconds.isEmpty && seconds[3] == nil && seconds[3, default: 5] == 5)
        seconds[3, default: 0] += 60
        seconds[1, default: 0] += 30
        seconds[3, default: 0] += 15
        #expect(seconds[3] == 75 && seconds[1] == 30 && seconds[4] == nil)
        #expect(seconds.values == [75, 30], "in the order first credited")
        #expect(seconds.byValue == [1: 30, 3: 75])
        #expect(seconds == [1: 30, 3: 75] && [3: 75, 1: 30] == seconds)
        #expect(seconds != [3: 75] && seconds != [1: 30, 3: 75, 4: 0] && seconds != [1: 30, 3: 76])
    }
}

func localTime(_ micros: Int64, _ zone: TimeZoneRules) -> String {
    Timestamp(microseconds: micros, form: TimeForm(offsetMinutes: Int16(zone.offset(atUTC: micros / 1_000_000) / 60)))
        .description
}

@Suite(.serialized) struct SleepAndWorkoutTests {
    @Test func nightsRunNoonToNoonAndCountOverlapsOnce() throws {
        let folder = TemporaryFolder("sleep")
        defer { folder.cleanup() }
        func s(_ start: String, _ end: String, _ v: Int, _ device: String) -> String {
            #"{"type":"HKCategoryTypeIdentifierSleepAnalysis","start":"\#(start)","end":"\#(end)","value":\#(v),"#
                + #""device":"\#(device)"}"#
        }
        // Night of June 2 (Paris, +02:00): watch in bed 23:00–07:00, core 23:30–03:00, deep 03:00–04:00,
        // awake 04:00–04:30, REM 04:30–06:30; the phone says asleep 22:30–07:30 (only its edges count).
        // A nap on June 2 at 14:00–14:30 belongs to the night ending June 3.
        let samples = [
            s("2025-06-01T23:00:00+02:00", "2025-06-02T07:00:00+02:00", 0, "Apple Watch"),
            s("2025-06-01T23:30:00+02:00", "2025-06-02T03:00:00+02:00", 3, "Apple Watch"),
            s("2025-06-02T03:00:00+02:00", "2025-06-02T04:00:00+02:00", 4, "Apple Watch"),
            s("2025-06-02T04:00:00+02:00", "2025-06-02T04:30:00+02:00", 2, "Apple Watch"),
            s("2025-06-02T04:30:00+02:00", "2025-06-02T06:30:00+02:00", 5, "Apple Watch"),
            s("2025-06-01T22:30:00+02:00", "2025-06-02T07:30:00+02:00", 1, "iPhone"),
            s("2025-06-02T14:00:00+02:00", "2025-06-02T14:30:00+02:00", 1, "iPhone"),
        ]
        folder.write(#"{"samples":["# + samples.joined(separator: ",") + "]}", to: "raw/2025/06/2025-06-02.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        var o = AggregateOptions()
        o.zone = try TimeZoneRules.named("Europe/Paris")
        let r = try TimeRange.parse("2025-06-01..2025-06-04", zone: .fixed(seconds: 7200))
        let nights = try Store(at: folder.path).sleepNights(from: r.from!, to: r.to!, options: o)
        #expect(nights.map(\.date) == ["2025-06-02", "2025-06-03"])
        let n = nights[0]
        #expect(n.bedtime == Timestamp("2025-06-01T22:30:00+02:00")!.microseconds)
        #expect(n.wakeTime == Timestamp("2025-06-02T07:30:00+02:00")!.microseconds)
        #expect(n.inBedSeconds == 9 * 3600)  // 22:30–07:30
        #expect(n.secondsByValue[3] == 12_600)
        #expect(n.secondsByValue[4] == 3600)
        #expect(n.secondsByValue[5] == 7200)
        #expect(n.secondsByValue[2] == 1800)
        #expect(n.secondsByValue[1] == 3600)  // the phone's 22:30–23:00 and 07:00–07:30
        let expectedAsleep: Double = 12_600 + 3600 + 7200 + 3600  // core + deep + REM + phone edges
        #expect(n.asleepSeconds == expectedAsleep)
        #expect(nights[1].asleepSeconds == 1800)
    }

    @Test func workoutsWithHeartRateDuringThem() throws {
        let folder = TemporaryFolder("workouts")
        defer { folder.cleanup() }
        let hr = [(10, 100), (20, 140), (40, 160), (70, 90)].map { minute, bpm in
            #"{"type":"HKQuantityTypeIdentifierHeartRate","#
                + #""start":"2025-06-01T07:\#(String(format: "%02d", minute % 60)):00Z","#
                + #""end":"2025-06-01T07:\#(String(format: "%02d", minute % 60)):00Z","value":\#(bpm)}"#
                .replacingOccurrences("T07:10", minute >= 60 ? "T08:10" : "T07:10")
        }
        let workout =
            #"{"type":"HKWorkoutTypeIdentifier","start":"2025-06-01T07:15:00Z","end":"2025-06-01T07:50:00Z","#
            + #""value":null,"metadata":{"workoutActivityType":37,"totalDistance":5200,"#
            + #""totalDistanceUnit":"m","totalEnergyBurned":420,"totalEnergyBurnedUnit":"kcal"}}"#
        folder.write(
            #"{"samples":["# + (hr + [workout]).joined(separator: ",") + "]}", to: "raw/2025/06/2025-06-01.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let r = try TimeRange.parse("2025-06-01")
        let list = try Store(at: folder.path).workouts(
            from: r.from!, to: r.to!, with: "HKQuantityTypeIdentifierHeartRate")
        #expect(list.count == 1)
        let w = list[0]
        #expect(w.name == "running" && w.distance == 5200 && w.distanceUnit == "m" && w.energy == 420)
        #expect(w.end - w.start == 35 * 60_000_000)
        #expect(w.with?.count == 2 && w.with?.min == 140 && w.with?.max == 160 && w.with?.mean == 150)
    }
}

@Suite struct DayAlignedBlockTests {
    @Test func blocksEndAtLocalMidnightOnceLargeEnough() {
        // 600 samples a day for three days, written at +02:00: blocks end at each local midnight.
        let form = TimeForm(offsetMinutes: 120, fractionDigits: 0, isZulu: false)
        let dayStart = Timestamp("2025-06-01T00:00:00+02:00")!.microseconds
        var strings = ByteInterner()
        let samples = (0..<1800).map { i -> PackedSample in
            let t = dayStart + Int64(i / 600) * 86_400_000_000 + Int64(i % 600) * 140_000_000
            return PackedSample(
                Sample(
                    type: "T", start: Timestamp(microseconds: t, form: form),
                    end: Timestamp(microseconds: t, form: form), value: .null), strings: &strings)
        }
        samples.withUnsafeBufferPointer { p in
            #expect(SegmentWriter.blockEnd(p, from: 0, limit: 4096, daySplit: 256) == 600)
            #expect(SegmentWriter.blockEnd(p, from: 600, limit: 4096, daySplit: 256) == 1200)
            #expect(SegmentWriter.blockEnd(p, from: 0, limit: 500, daySplit: 256) == 500)
            #expect(SegmentWriter.blockEnd(p, from: 0, limit: 4096, daySplit: 0) == 1800)
            // Fewer than daySplit samples before midnight: the block carries on into the next day.
            #expect(SegmentWriter.blockEnd(p, from: 500, limit: 4096, daySplit: 256) == 1200)
        }
    }

    @Test func dayBucketsInTheWearersZoneComeFromSummaries() throws {
        // Realistic density: every day holds more than 256 heart-rate samples.
        let folder = TemporaryFolder("day-aligned")
        defer { folder.cleanup() }
        var g = HealthDataGenerator.Options()
        g.days = 40
        g.startDate = "2025-03-10"
        try HealthDataGenerator(options: g).write(rawDirectory: folder.path + "/raw")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let store = try Store(at: folder.path)
        var o = AggregateOptions()
        o.bucket = .calendar(.day)
        o.zone = try TimeZoneRules.named("Europe/Paris")
        let r = try store.aggregate("HKQuantityTypeIdentifierHeartRate", options: o)
        // The generator writes Paris offsets (and one week abroad): most blocks lie in one Paris day.
        #expect(
            r.blocksFromSummaries > 4 * r.blocksDecoded,
            "\(r.blocksFromSummaries) from summaries, \(r.blocksDecoded) decoded")
        var decoded = o
        decoded.statistics = [.count, .min, .max, .mean, .first]  // `first` forces every block to be decoded
        let slow = try store.aggregate("HKQuantityTypeIdentifierHeartRate", options: decoded)
        #expect(slow.blocksFromSummaries == 0 && slow.rows.count == r.rows.count)
        for (a, b) in zip(r.rows, slow.rows) {
            #expect(
                a.start == b.start && a.values[.count] == b.values[.count] && a.values[.min] == b.values[.min]
                    && a.values[.max] == b.values[.max])
            #expect(abs(a.values[.mean]! - b.values[.mean]!) < 1e-9)
        }
    }
}
