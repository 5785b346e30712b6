import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Offsets remembered per run between clock changes, and what buckets and slot summaries use
/// them for: each checked against the zone's own lookups.
@Suite struct OffsetCacheTests {
    static let zones = [
        "UTC", "Europe/Paris", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham",
        "America/Sao_Paulo", "Africa/Casablanca", "Europe/Dublin", "Antarctica/Troll",
    ]

    /// Instants from 1890 (local mean times) to 2060 (past every table, on the footer's rule):
    /// random ones, then quarter hours in order across a year.
    static func instants(seed: UInt64) -> [Int64] {
        var rng = SplitMix64(seed: seed)
        var out = (0..<400).map { _ in Int64.random(in: -2_524_521_600...2_871_763_200, using: &rng) }
        out += (0..<35_136).map { 1_704_067_200 + Int64($0) * 900 }
        return out
    }

    @Test func everyKnownZonesCachedOffsetsEqualItsLookups() throws {
        let names = TimeZoneRules.knownZoneNames()
        #expect(names.count > 300)
        let instants = Self.instants(seed: 11).enumerated().filter { $0.offset % 7 == 0 }.map(\.element)
        for name in names {
            let zone = try TimeZoneRules.named(name)
            var cache = OffsetCache(zone)
            for t in instants {
                let offset = zone.offset(atUTC: t)
                #expect(cache.offset(atMicros: t * 1_000_000) == offset, "\(name) at \(t)")
                let run = zone.offsetRun(atUTC: t)
                #expect(run.contains(t) && run.offset == offset)
                if run.start != .min {
                    #expect(zone.offset(atUTC: run.start) == offset, "\(name) run from \(run.start)")
                }
                if run.end != .max { #expect(zone.offset(atUTC: run.end - 1) == offset, "\(name) run to \(run.end)") }
            }
        }
    }

    /// Day starts from the cached run equal the zone's own, in every zone the system has: days from
    /// 1890 to 2060 at random (the cache jumping about), then three years of days in order.
    @Test func everyKnownZonesCachedDayStartsEqualItsOwn() throws {
        var rng = SplitMix64(seed: 13)
        let random = (0..<300).map { _ in Int64.random(in: -29_219...33_238, using: &rng) }
        let days = random + Array(Int64(19_723)..<Int64(19_723 + 3 * 366))
        for name in TimeZoneRules.knownZoneNames() {
            let zone = try TimeZoneRules.named(name)
            var cache = OffsetCache(zone)
            for day in days where cache.startOfDay(day) != zone.startOfDay(day) {
                Issue.record("\(name): day \(day) starts at \(cache.startOfDay(day)), not \(zone.startOfDay(day))")
            }
        }
    }

    @Test(arguments: zones)
    func cachedHoursAndMinutesEqualFreshOnes(name: String) throws {
        let zone = try TimeZoneRules.named(name)
        for unit in [BucketSpec.CalendarUnit.hour, .minute] {
            let walker = BucketWalker(spec: .calendar(unit), zone: zone, from: 0, to: 1)
            var cursor = BucketCursor(walker)
            for t in Self.instants(seed: 12) {
                let micros = t * 1_000_000 + 123
                let expected = Self.wallClockBucket(micros, unit: unit == .hour ? 3600 : 60, zone)
                #expect(cursor.bucket(containing: micros) == expected, "\(name) \(unit) at \(t)")
                #expect(expected.start <= micros && micros < expected.end)
            }
        }
    }

    /// A scan's cursor finds a later minute, hour, day, week or fixed bucket by stepping from the last
    /// one, over as many buckets as lie between; it must find what the walker finds afresh, across
    /// offset changes (DST, Lord Howe's half hours, local mean times of seconds such as Amsterdam's
    /// +00:19:32 and Monrovia's −00:44:30).
    @Test(arguments: zones + ["Europe/Amsterdam", "Africa/Monrovia"])
    func steppedBucketsEqualFreshOnes(name: String) throws {
        let zone = try TimeZoneRules.named(name)
        var rng = SplitMix64(seed: 14)
        let specs: [BucketSpec] = [
            .calendar(.minute), .calendar(.hour), .calendar(.day), .calendar(.week), .fixed(seconds: 900),
            .fixed(seconds: 420),
        ]
        for spec in specs {
            // Days of offset changes: Amsterdam's DST of 1918 and end of local mean time in 1937,
            // Monrovia's in 1972, Europe's and Lord Howe's DST of 2024, America's; and the epoch.
            let days: [Int64] = [
                -1_633_219_200, -1_025_827_200, 0, 63_504_000, 1_711_843_200, 1_712_361_600, 1_728_086_400,
                1_730_592_000,
            ]
            for start in days {
                // From an anchor that is not the epoch's, so a first bucket at 0 would be wrong.
                let walker = BucketWalker(spec: spec, zone: zone, from: (start - 86_400) * 1_000_000 + 7, to: .max)
                var cursor = BucketCursor(walker)
                var t = start * 1_000_000 - 3 * 86_400_000_000
                for _ in 0..<6_000 {
                    // Mostly the next few minutes (heart rate at rest); now and then hours or days ahead.
                    let roll = rng.next() % 64
                    let gap: Int64 = roll == 0 ? 9 * 86_400_000_000 : roll % 8 == 0 ? 6 * 3_600_000_000 : 150_000_000
                    t += Int64.random(in: 0...gap, using: &rng)
                    let found = cursor.bucket(containing: t)
                    let fresh = walker.bucket(containing: t)
                    guard found == fresh else {
                        Issue.record("\(name) \(spec) at \(t): \(found) ≠ \(fresh)")
                        return
                    }
                }
            }
        }
    }

    /// Where the walker says buckets run at one width around a bucket it found, every bucket is
    /// the one it finds afresh: at the grid's first and last instants, the ends of the buckets
    /// either side, and at random, across offset changes (DST, Lord Howe's half hours, Chatham's
    /// +12:45, local mean times of seconds) from 1890 to 2060. A cursor stepping back into a grid
    /// finds the same buckets too.
    @Test(arguments: zones + ["Europe/Amsterdam", "Africa/Monrovia"])
    func gridBucketsEqualFreshOnes(name: String) throws {
        let zone = try TimeZoneRules.named(name)
        var rng = SplitMix64(seed: 15)
        let specs: [BucketSpec] = [
            .calendar(.minute), .calendar(.hour), .calendar(.day), .calendar(.week), .calendar(.month),
            .fixed(seconds: 900), .fixed(seconds: 420), .none,
        ]
        for spec in specs {
            var grids = 0
            for t in Self.instants(seed: 16).enumerated().filter({ $0.offset % 97 == 0 }).map(\.element) {
                let micros = t * 1_000_000 + Int64.random(in: 0..<1_000_000, using: &rng)
                let walker = BucketWalker(spec: spec, zone: zone, from: micros - 86_400_000_000 + 7, to: .max)
                var offsets = OffsetCache(zone)
                let found = walker.bucket(containing: micros, offsets: &offsets)
                let grid = walker.grid(around: found, offsets: &offsets)
                guard grid.end > grid.start else { continue }
                grids += 1
                #expect(grid.start == found.start && grid.end >= found.end && (grid.end - grid.start) % grid.width == 0)
                let span = min(grid.end - grid.start, 400 * 86_400_000_000)
                let last = grid.start + span - 1
                var probes = [grid.start, grid.end - 1, last, found.end, last - grid.width + 1]
                probes += (0..<20).map { _ in grid.start + Int64.random(in: 0..<span, using: &rng) }
                var cursor = BucketCursor(walker)
                _ = cursor.bucket(containing: micros)
                for u in probes where u >= grid.start && u < grid.end {
                    let fresh = walker.bucket(containing: u)
                    guard grid.bucket(containing: u) == fresh, cursor.bucket(containing: u) == fresh else {
                        let predicted = grid.bucket(containing: u).map { "\($0)" } ?? "none"
                        Issue.record("\(name) \(spec) grid \(grid) at \(u): \(predicted) ≠ \(fresh)")
                        return
                    }
                }
            }
            let expectsGrids: Bool
            switch spec {
            case .calendar(.month), .none: expectsGrids = false
            default: expectsGrids = true
            }
            #expect(expectsGrids ? grids > 300 : grids == 0, "\(name) \(spec): \(grids) grids")
        }
    }

    /// The run of instants sharing `t`'s local minute or hour and offset, by the zone's lookups.
    static func wallClockBucket(_ t: Int64, unit: Int64, _ zone: TimeZoneRules) -> Bucket {
        let seconds = ISO8601.floorDivide(t, 1_000_000).0
        let offset = Int64(zone.offset(atUTC: seconds))
        var start = ISO8601.floorDivide(seconds + offset, unit).0 * unit - offset
        if let change = zone.lastTransition(atOrBefore: seconds), change > start { start = change }
        var end = ISO8601.floorDivide(start + offset, unit).0 * unit + unit - offset
        if let change = zone.nextTransition(after: start), change < end { end = change }
        return Bucket(start: start * 1_000_000, end: end * 1_000_000)
    }

    /// Where the walker says every boundary is on the 15-minute grid without finding the
    /// buckets, finding them agrees; and it says so for the usual questions.
    @Test(arguments: zones)
    func boundariesSaidOnTheGridAreOnIt(name: String) throws {
        let zone = try TimeZoneRules.named(name)
        var rng = SplitMix64(seed: 13)
        let specs: [BucketSpec] = [
            .calendar(.hour), .calendar(.day), .calendar(.week), .calendar(.month), .calendar(.year),
            .calendar(.minute), .fixed(seconds: 900), .fixed(seconds: 3600), .fixed(seconds: 600), .none,
        ]
        var saidYes = 0
        for spec in specs {
            for _ in 0..<300 {
                let from = Int64.random(in: 0...96 * 365 * 60, using: &rng) * 900_000_000 - 3_600_000_000 * 24 * 365
                let to = from + Int64.random(in: 1...96, using: &rng) * 900_000_000
                let walker = BucketWalker(spec: spec, zone: zone, from: from - 86_400_000_000, to: to)
                var cursor = BucketCursor(walker)
                guard cursor.boundariesOnSlotGrid(from: from, to: to) else { continue }
                saidYes += 1
                var b = walker.bucket(containing: from)
                while b.end < to {
                    #expect(b.end % SlotSummary.micros == 0, "\(name) \(spec): boundary at \(b.end)")
                    b = walker.bucket(after: b)
                }
            }
        }
        #expect(saidYes > 1000, "\(name): the grid is known at once for most spans")
    }
}
