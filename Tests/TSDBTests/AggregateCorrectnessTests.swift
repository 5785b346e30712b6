import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Aggregates against brute-force oracles (issue 9): de-duplication of overlapping samples,
/// count, aggregation styles, numerically stable standard deviation.
@Suite struct AggregateCorrectnessTests {
    /// (source, device) pairs a phone might hold: a watch, a ring writing overlapping samples,
    /// two sleep apps and the phone.
    static let sources = [
        ("com.apple.health.W1", "Apple Watch"), ("Oura", "Oura Ring"), ("AutoSleep", "iPhone"),
        ("Pillow", ""), ("com.apple.health.P1", "iPhone"),
    ]

    struct Raw {
        var start: Int64, end: Int64  // minutes since the epoch
        var value: Int64
        var source: Int
    }

    /// Writes `samples` of `type` as day files (by UTC start date) and compacts them.
    func store(_ samples: [Raw], type: String, unit: String? = nil) throws -> (Store, TemporaryFolder) {
        let folder = TemporaryFolder("oracle")
        var byDay: [Int64: [String]] = [:]
        for s in samples {
            let (src, dev) = Self.sources[s.source]
            func t(_ m: Int64) -> String { ISO8601.format(m * 60_000_000, .zulu) }
            let unitField = unit.map { #","unit":"\#($0)""# } ?? ""
            byDay[ISO8601.floorDivide(s.start, 1440).0, default: []].append(
                #"{"type":"\#(type)","start":"\#(t(s.start))","end":"\#(t(s.end))","value":\#(s.value)\#(unitField),"#
                    + #""source":"\#(src)""# + (dev.isEmpty ? "" : #","device":"\#(dev)""#) + "}")
        }
        for (day, lines) in byDay {
            let date = String(ISO8601.format(day * ISO8601.microsPerDay, .zulu).prefix(10))
            folder.write(
                #"{"samples":["# + lines.joined(separator: ",") + "]}",
                to: "raw/\(date.prefix(4))/\(date.dropFirst(5).prefix(2))/\(date).json")
        }
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        return (try Store(at: folder.path), folder)
    }

    /// The oracle's source order: first priority entry contained in source or device, then source, then device.
    func sourceRanks(_ priority: [String], used: Set<Int>) -> [Int: Int] {
        let keyed = used.map { i -> (Int, Int, String, String) in
            let (s, d) = Self.sources[i]
            let entry = priority.firstIndex { p in
                s.lowercased().contains(p.lowercased()) || d.lowercased().contains(p.lowercased())
            }
            return (i, entry ?? priority.count, s, d)
        }.sorted { ($0.1, $0.2, $0.3) < ($1.1, $1.2, $1.3) }
        var out: [Int: Int] = [:]
        for (rank, k) in keyed.enumerated() { out[k.0] = rank }
        return out
    }

    /// For each minute, the sample that counts: highest source rank, then (sleep) value order,
    /// then earliest start, then earliest end.
    func winner(at minute: Int64, _ samples: [Raw], ranks: [Int: Int], valueRank: (Int64) -> Int) -> Raw? {
        samples.filter { $0.start <= minute && minute < $0.end }
            .min {
                (ranks[$0.source]!, valueRank($0.value), $0.start, $0.end) < (
                    ranks[$1.source]!, valueRank($1.value), $1.start, $1.end
                )
            }
    }

    @Test(arguments: 0..<12)
    func sleepNightsMatchAMinuteByMinuteOracle(round: Int) throws {
        var rng = SplitMix64(seed: UInt64(900 + round))
        let firstNight: Int64 = 20_150  // a day number (2025-03-04)
        var samples: [Raw] = []
        for night in 0..<3 {
            let evening = (firstNight + Int64(night)) * 1440 + 20 * 60
            for source in 0..<Self.sources.count where rng.next() % 3 != 0 {
                for _ in 0..<(1 + Int(rng.next() % 6)) {
                    let start = evening + Int64(rng.next() % 600)
                    samples.append(
                        Raw(
                            start: start, end: start + 5 + Int64(rng.next() % 300), value: Int64(rng.next() % 6),
                            source: source))
                }
            }
        }
        let priority = [["Watch", "iPhone"], ["Oura"], [], ["Pillow", "Watch"]][round % 4]
        let (store, folder) = try store(samples, type: "HKCategoryTypeIdentifierSleepAnalysis")
        defer { folder.cleanup() }
        var options = AggregateOptions()
        options.priority = priority
        let nights = try store.sleepNights(options: options)
        let ranks = sourceRanks(priority, used: Set(samples.map(\.source)))
        let order: [Int64] = [2, 4, 5, 3, 1, 0]
        for night in nights {
            let wake = Int64(
                ISO8601.days(
                    year: Int(night.date.prefix(4))!, month: Int(night.date.dropFirst(5).prefix(2))!,
                    day: Int(night.date.suffix(2))!))
            let (a, b) = ((wake - 1) * 1440 + 720, wake * 1440 + 720)
            var byValue: [Int64: Double] = [:]
            var inBed = 0.0
            var asleep = 0.0
            for m in a..<b {
                guard let w = winner(at: m, samples, ranks: ranks, valueRank: { order.firstIndex(of: $0)! }) else {
                    continue
                }
                byValue[w.value, default: 0] += 60
                inBed += 60
                if [1, 3, 4, 5].contains(w.value) { asleep += 60 }
            }
            #expect(night.secondsByValue.filter { $0.value > 0 } == byValue, "round \(round) night \(night.date)")
            #expect(night.inBedSeconds == inBed && night.asleepSeconds == asleep, "round \(round) night \(night.date)")
            let stages = [1, 3, 4, 5].reduce(0.0) { $0 + (night.secondsByValue[Int64($1)] ?? 0) }
            #expect(stages == night.asleepSeconds && night.asleepSeconds <= night.inBedSeconds)
            // `query SleepAnalysis` over the same noon-to-noon window gives the same minutes.
            let row = try store.aggregate(
                "HKCategoryTypeIdentifierSleepAnalysis", from: a * 60_000_000, to: b * 60_000_000,
                options: options
            ).rows.first
            #expect(row?.seconds.byValue.filter { $0.value > 0 } == byValue, "round \(round) night \(night.date)")
        }
        #expect(!nights.isEmpty)
    }

    @Test(arguments: 0..<10)
    func stepSumsCountEachMinuteOnceLikeTheOracle(round: Int) throws {
        var rng = SplitMix64(seed: UInt64(700 + round))
        var samples: [Raw] = []
        let day0: Int64 = 20_150 * 1440
        for source in 0..<Self.sources.count {
            for _ in 0..<(4 + Int(rng.next() % 20)) {
                let start = day0 + Int64(rng.next() % (3 * 1440))
                samples.append(
                    Raw(
                        start: start, end: start + 1 + Int64(rng.next() % 90), value: Int64(rng.next() % 3000),
                        source: source))
            }
        }
        let priority = [["Watch", "iPhone"], ["Oura"], []][round % 3]
        let (store, folder) = try store(samples, type: "HKQuantityTypeIdentifierStepCount", unit: "count")
        defer { folder.cleanup() }
        var options = AggregateOptions()
        options.priority = priority
        options.bucket = .calendar(.day)
        let rows = try store.aggregate("HKQuantityTypeIdentifierStepCount", options: options).rows
        let ranks = sourceRanks(priority, used: Set(samples.map(\.source)))
        var expected: [Int64: Double] = [:]
        for m in samples.map(\.start).min()!..<samples.map(\.end).max()! {
            guard let w = winner(at: m, samples, ranks: ranks, valueRank: { _ in 0 }) else { continue }
            expected[ISO8601.floorDivide(m, 1440).0 * 1440, default: 0] += Double(w.value) / Double(w.end - w.start)
        }
        #expect(rows.count == expected.count)
        for row in rows {
            let want = expected[row.start / 60_000_000] ?? -1
            #expect(
                abs(row.values[.sum]! - want) <= 1e-6 * max(1, want), "round \(round): \(row.values[.sum]!) vs \(want)")
        }
    }

    @Test func countCountsSamplesWithoutValues() throws {
        let folder = TemporaryFolder("count")
        defer { folder.cleanup() }
        folder.write(
            #"{"samples":["#
                + #"{"type":"HKWorkoutTypeIdentifier","start":"2025-03-01T08:00:00Z","#
                + #""end":"2025-03-01T09:00:00Z","value":null},"#
                + #"{"type":"HKWorkoutTypeIdentifier","start":"2025-03-01T18:00:00Z","end":"2025-03-01T18:30:00Z"},"#
                + #"{"type":"HKCategoryTypeIdentifierMindfulSession","start":"2025-03-01T07:00:00Z","#
                + #""end":"2025-03-01T07:10:00Z","value":0},"#
                + #"{"type":"HKQuantityTypeIdentifierBodyMass","start":"2025-03-01T07:00:00Z","#
                + #""end":"2025-03-01T07:00:00Z","value":null},"#
                + #"{"type":"HKQuantityTypeIdentifierBodyMass","start":"2025-03-01T07:01:00Z","#
                + #""end":"2025-03-01T07:01:00Z","value":70}]}"#,
            to: "raw/2025/03/2025-03-01.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let store = try Store(at: folder.path)
        var o = AggregateOptions()
        o.statistics = [.count]
        #expect(try store.aggregate("HKWorkoutTypeIdentifier", options: o).rows.first?.values[.count] == 2)
        #expect(
            try store.aggregate("HKCategoryTypeIdentifierMindfulSession", options: o).rows.first?.values[.count] == 1)
        o.statistics = [.count, .mean]
        let mass = try store.aggregate("HKQuantityTypeIdentifierBodyMass", options: o).rows.first
        #expect(mass?.values[.count] == 2 && mass?.values[.mean] == 70)
        // Workouts count by default.
        #expect(try store.aggregate("HKWorkoutTypeIdentifier").rows.first?.values == [.count: 2])
    }

    @Test func everyQuantityTypeHasApplesAggregationStyle() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Vectors/healthkit-aggregation-styles.tsv"
        ).path
        let rows = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter {
            !$0.hasPrefix("#")
        }
        #expect(rows.count == HealthKitTypes.quantityStyles.count)
        let catalog = TypeCatalog()
        for row in rows {
            let f = row.split(separator: "\t").map(String.init)
            let id = "HKQuantityTypeIdentifier" + f[0]
            #expect(HealthKitTypes.style(of: id).rawValue == f[2], "\(f[0])")
            #expect(catalog.kind(of: id) == (f[2] == "cumulative" ? .cumulative : .discrete), "\(f[0])")
        }
        #expect(HealthKitTypes.style(of: "HKQuantityTypeIdentifierSomethingNew") == .discreteArithmetic)
        #expect(catalog.kind(of: "HKQuantityTypeIdentifierUVExposure") == .discrete)
        #expect(catalog.kind(of: "HKQuantityTypeIdentifierWaterTemperature") == .discrete)
    }

    @Test func soundLevelsAverageAsEquivalentContinuousLevel() throws {
        let folder = TemporaryFolder("leq")
        defer { folder.cleanup() }
        folder.write(
            #"{"samples":["#
                + #"{"type":"HKQuantityTypeIdentifierHeadphoneAudioExposure","start":"2025-03-01T08:00:00Z","#
                + #""end":"2025-03-01T08:01:00Z","value":60},"#
                + #"{"type":"HKQuantityTypeIdentifierHeadphoneAudioExposure","start":"2025-03-01T09:00:00Z","#
                + #""end":"2025-03-01T09:01:00Z","value":90}]}"#,
            to: "raw/2025/03/2025-03-01.json")
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        let mean = try Store(at: folder.path).aggregate("HKQuantityTypeIdentifierHeadphoneAudioExposure").rows.first?
            .values[.mean]
        let expected = 10 * log10((pow(10, 6.0) + pow(10, 9.0)) / 2)  // 86.99 dB, not the arithmetic 75
        #expect(mean != nil && abs(mean! - expected) < 1e-9)
    }

    @Test(arguments: [1e9, 1e12])
    func standardDeviationIsExactForLargeValuesWithASmallSpread(offset: Double) throws {
        let folder = TemporaryFolder("stddev")
        defer { folder.cleanup() }
        var lines: [String] = []
        var values: [Double] = []
        var rng = SplitMix64(seed: 5)
        for i in 0..<3000 {
            let v = offset + Double(rng.next() % 3)
            values.append(v)
            let t = ISO8601.format(Timestamp("2025-03-01T00:00:00Z")!.microseconds + Int64(i) * 20_000_000, .zulu)
            lines.append(
                #"{"type":"HKQuantityTypeIdentifierBodyMass","start":"\#(t)","end":"\#(t)","value":\#(Int64(v))}"#)
        }
        folder.write(#"{"samples":["# + lines.joined(separator: ",") + "]}", to: "raw/2025/03/2025-03-01.json")
        var small = CompactionOptions()
        small.blockSamples = 256  // several blocks, each answered from its summary
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path), options: small).run()
        let mean = values.reduce(0, +) / Double(values.count)
        let exact = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count - 1)).squareRoot()
        var o = AggregateOptions()
        o.statistics = [.stddev, .count]
        let fromSummaries = try Store(at: folder.path).aggregate("HKQuantityTypeIdentifierBodyMass", options: o)
        #expect(fromSummaries.blocksFromSummaries > 1 && fromSummaries.blocksDecoded == 0)
        o.statistics = [.stddev, .first]  // first needs every sample: decoded
        let decoded = try Store(at: folder.path).aggregate("HKQuantityTypeIdentifierBodyMass", options: o)
        #expect(decoded.blocksDecoded > 1)
        for result in [fromSummaries, decoded] {
            let got = result.rows.first!.values[.stddev]!
            #expect(abs(got - exact) <= 1e-9 * exact, "\(got) vs \(exact)")
        }
    }

    @Test(arguments: [(-40.0, 220.0, true), (0.0, 1.0, false), (0.0, 1e6, true)])
    func percentilesAreExactWhetherCountedOrSorted(low: Double, high: Double, whole: Bool) {
        var rng = SplitMix64(seed: 77)
        for n in [1, 2, 3, 10, 1000, 20_000] {
            var acc = Accumulator()
            var values: [Double] = []
            for _ in 0..<n {
                let r = low + Double(rng.next() % 1_000_000) / 1_000_000 * (high - low)
                let v = whole ? r.rounded(.down) : r
                values.append(v)
                acc.add(v, keepValue: true)
            }
            values.sort()
            for q in [Statistic.p50, .p90, .p95, .p99] {
                let position = q.quantile! * Double(n - 1)
                let i = Int(position)
                let want = i + 1 < n ? values[i] + (values[i + 1] - values[i]) * (position - Double(i)) : values[i]
                #expect(acc.value(q, cumulativeSum: nil, style: .discreteArithmetic) == want, "\(n) values, \(q)")
            }
        }
    }

    /// A bucket's count, sum, min, max and mean taken at once are, for every choice of them, what
    /// each statistic alone gives: empty buckets, buckets of valueless samples only, and interval
    /// sums present or not.
    @Test func basicStatisticsAtOnceAreEachStatisticAlone() {
        var rng = SplitMix64(seed: 19)
        let basic: [Statistic] = [.count, .sum, .min, .max, .mean]
        for round in 0..<60 {
            var acc = Accumulator()
            for _ in 0..<(round % 5 == 0 ? 0 : Int(rng.next() % 40)) {
                if rng.next() % 4 == 0 {
                    acc.addValueless()
                } else {
                    acc.add(Double(Int(rng.next() % 400)) - 100 + (round % 2 == 0 ? 0 : 0.25), keepValue: false)
                }
            }
            let cumulativeSum: Double? = round % 3 == 0 ? Double(rng.next() % 1000) / 8 : nil
            for mask in UInt16(0)..<32 {
                let chosen = basic.filter { mask & 1 << $0.index != 0 }
                var oneByOne = StatisticValues()
                for s in chosen {
                    oneByOne[s] = acc.value(s, cumulativeSum: cumulativeSum, style: .discreteArithmetic)
                }
                let atOnce = acc.basicTotals.values(mask, cumulativeSum: cumulativeSum)
                #expect(atOnce == oneByOne, "round \(round), mask \(mask)")
                for s in Statistic.allCases where !chosen.contains(s) { #expect(atOnce[s] == nil) }
            }
        }
    }

    /// A file of the published generation gone, another cut short: the months of every segment in
    /// them are rebuilt from the raw files by the next compaction, one repair per file. Two
    /// compactions make two files: February's segments stay in the first when the second adds
    /// days of March only.
    @Test func missingOrResizedSegmentFilesAreRebuiltByTheNextCompaction() throws {
        let folder = TemporaryFolder("heal")
        defer { folder.cleanup() }
        try generate(folder.path + "/all", days: 30, seed: 3, edgeCases: false, start: "2025-02-12")
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder.path + "/raw/2025/03", withIntermediateDirectories: true)
        try manager.copyItem(atPath: folder.path + "/all/raw/2025/02", toPath: folder.path + "/raw/2025/02")
        let march = try manager.contentsOfDirectory(atPath: folder.path + "/all/raw/2025/03").sorted()
        func copy(_ names: ArraySlice<String>) throws {
            for name in names {
                try manager.copyItem(
                    atPath: folder.path + "/all/raw/2025/03/" + name, toPath: folder.path + "/raw/2025/03/" + name)
            }
        }
        try copy(march[..<3])
        let layout = StoreLayout(appleHealthDirectory: folder.path)
        _ = try Compactor(layout: layout).run()
        try copy(march[3...])
        #expect(try Compactor(layout: layout).run().monthsRebuilt == 0)
        let raw = Set(try rawSampleSet(folder.path + "/raw").keys)
        let manifest = try Manifest.read(at: layout.manifestPath)
        let files = manifest.files.map(\.path)
        let months = { (file: String) in Set(manifest.segments.filter { $0.path == file }.map(\.monthIndex)) }
        #expect(files.count == 2 && months(files[0]) == [MonthIndex(year: 2025, month: 2)], "\(files)")
        #expect(months(files[1]) == [MonthIndex(year: 2025, month: 3)])
        try FileManager.default.removeItem(atPath: layout.storeDirectory + "/" + files[1])
        let resized = layout.storeDirectory + "/" + files[0]
        try Data(Array(try Data(contentsOf: URL(fileURLWithPath: resized))).dropLast(7)).write(
            to: URL(fileURLWithPath: resized))
        let report = try Compactor(layout: layout).run()
        #expect(!report.upToDate && report.monthsRepaired == 2 && report.repairs.count == 2, "\(report.repairs)")
        #expect(report.repairs.contains { $0.contains(files[1] + ": missing; rebuilding 2025-03") })
        #expect(report.repairs.contains { $0.contains(files[0] + ": ") && $0.contains("rebuilding 2025-02 from") })
        #expect(Set(try storedSamples(Store(at: folder.path))) == raw)
        #expect(try StoreVerifier(layout: layout).verify(deep: false).problems.isEmpty)
        #expect(try Compactor(layout: layout).run().upToDate)
    }

    @Test func offsetsWrittenMinusZeroComeBackAsWritten() throws {
        let parsed = try samples(
            ofDayFile: Array(
                #"{"samples":[{"type":"T","start":"2025-03-01T07:00:00-00:00","end":"2025-03-01T07:00:00+00:00"}]}"#
                    .utf8))
        #expect(
            parsed[0].start.description == "2025-03-01T07:00:00-00:00"
                && parsed[0].end.description == "2025-03-01T07:00:00+00:00")
        let folder = TemporaryFolder("negzero")
        defer { folder.cleanup() }
        folder.write(bytes: encodeSegment(parsed), to: "x.seg")
        #expect(try readSegment(folder.path + "/x.seg") == parsed)
    }

    @Test func wallTimesInASpringForwardGapMoveForward() throws {
        let paris = try TimeZoneRules.named("Europe/Paris")
        let r = try TimeRange.parse("2025-03-30T02:30..2025-03-30T04:00", zone: paris)
        #expect(r.from == Timestamp("2025-03-30T03:30:00+02:00")!.microseconds)
        let overlap = try TimeRange.parse("2025-10-26T02:30..2025-10-26T04:00", zone: paris)
        #expect(overlap.from == Timestamp("2025-10-26T02:30:00+02:00")!.microseconds)  // the earlier of the two
        let lordHowe = try TimeZoneRules.named("Australia/Lord_Howe")
        let a = Timestamp("2025-04-06T01:00:00+11:00")!.microseconds
        let b = Timestamp("2025-04-06T03:00:00+10:30")!.microseconds
        let hours = BucketWalker(spec: .calendar(.hour), zone: lordHowe, from: a, to: b).buckets(from: a, to: b)
        // 01:00–02:00 at +11, then 01:30–02:00 at +10:30 (the repeated half hour), then 02:00–03:00.
        #expect(hours.map { ($0.end - $0.start) / 60_000_000 } == [60, 30, 60])
    }
}
