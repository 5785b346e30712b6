import ArgumentParser
import TSDB
import TSDBSynthetic

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Generate a year of data, compact it, query it, and print the figures.",
        discussion: "Uses a new temporary folder unless --dir is given. The folder is kept so you can keep querying it."
    )

    @Option(help: "Folder to work in (default: a new temporary folder).")
    var dir: String?

    @Option(help: "Days of data to generate.")
    var days: Int = 365

    func run() throws {
        let directory: String
        if let dir {
            directory = dir
        } else {
            var template = Array(((environment("TMPDIR") ?? "/tmp") + "/tsdb-demo-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw ValidationError("cannot create a temporary folder") }
            directory = String(cString: made)
        }
        output("1. generating \(days) days of Apple Health data into \(directory)/raw")
        try Generate.parse([directory, "--days", String(days)]).run()

        output("\n2. compacting")
        let layout = try StoreLayout.locate(directory)
        _ = try CompactRequest(directory: directory).compact(layout, CompactionOptions())

        output("\n3. what is stored (tsdb stats)")
        let store = try Store(layout: layout)
        try Stats.parse(["--store", directory]).run()

        output("\n4. queries (times measured in this process)")
        let hr = "HKQuantityTypeIdentifierHeartRate"
        guard let info = store.types.first(where: { $0.type == hr }) else { return }
        // The generated person lives in Paris: their days are Paris days.
        let zone = try TimeZoneRules.named(HealthDataGenerator.homeZone)
        let middle = Timestamp(microseconds: info.firstStart + (info.lastStart - info.firstStart) / 3, form: .zulu)
            .description
        let firstDay = String(middle.prefix(10))
        let month = String(middle.prefix(7))
        let year = String(middle.prefix(4))

        let day = try ZoneOption.range(firstDay, in: zone)
        var clock = ContinuousClock.now
        var cursor = try store.samples(of: hr, from: day.from!, to: day.to!)
        var n = 0
        while try cursor.next() != nil { n += 1 }
        output(
            "   tsdb query HeartRate --range \(firstDay): \(formatCount(n)) samples in \(milliseconds(since: clock)) ms"
        )

        var o = AggregateOptions()
        o.zone = zone
        o.bucket = .calendar(.day)
        let all = try ZoneOption.range(year, in: zone)
        clock = ContinuousClock.now
        let daily = try store.aggregate(hr, from: all.from, to: all.to, options: o)
        let elapsed = milliseconds(since: clock)
        output(
            "\n   tsdb query HeartRate --range \(year) --bucket day (\(zone.identifier)): "
                + "\(daily.rows.count) days in \(elapsed) ms (\(daily.blocksFromSummaries) blocks from summaries, "
                + "\(daily.blocksFromSlots) from slot summaries, \(daily.blocksSplit) added up either side of a "
                + "day's edge, \(daily.blocksDecoded) decoded); the first five:")
        printAggregate(daily.limited(to: 5), catalog: store.catalog, zone: zone, format: .table)

        o.bucket = .calendar(.week)
        let weeks = try ZoneOption.range(month, in: zone)
        let steps = try store.aggregate("HKQuantityTypeIdentifierStepCount", from: weeks.from, to: weeks.to, options: o)
        var raw = o
        raw.deduplicate = false
        let doubled = try store.aggregate(
            "HKQuantityTypeIdentifierStepCount", from: weeks.from, to: weeks.to, options: raw)
        let doubleCounted = human(doubled.rows.compactMap { $0.values[.sum] }.reduce(0, +))
        output(
            "\n   tsdb query Steps --range \(month) --bucket week: watch and phone counted once "
                + "(without de-duplication: \(doubleCounted) steps)")
        printAggregate(steps, catalog: store.catalog, zone: zone, format: .table)

        let nights = try store.sleepNights(from: day.from! - 2 * 86_400_000_000, to: day.to!, options: o)
        output("\n   tsdb sleep --range \(firstDay) (and the two nights before):")
        for n in nights {
            func clock(_ t: Int64) -> Substring { localTimestamp(t, zone).dropFirst(11).prefix(5) }
            let asleep = "\(Int(n.asleepSeconds) / 3600) h \(Int(n.asleepSeconds) / 60 % 60) min"
            let deep = human((n.secondsByValue[4] ?? 0) / 60)
            let rem = human((n.secondsByValue[5] ?? 0) / 60)
            output(
                "     \(n.date): bed \(clock(n.bedtime)), up \(clock(n.wakeTime)), asleep \(asleep), "
                    + "deep \(deep) min, REM \(rem) min")
        }

        let check = try StoreVerifier(layout: layout).verify(deep: false)
        let verdict = check.problems.isEmpty ? "ok" : plural(check.problems.count, "problem")
        output(
            "\n5. tsdb verify: \(verdict) — \(plural(check.segmentsChecked, "segment")), "
                + "\(plural(check.blocksChecked, "block")), \(plural(check.samplesChecked, "sample")) checked")
        output(
            """

            Try it yourself:
              tsdb query HeartRate --range \(firstDay) --store \(directory)
              tsdb query HeartRate --range \(year) --bucket day --tz \(HealthDataGenerator.homeZone) \
              --store \(directory)
              tsdb query HeartRate --range \(year) --bucket month --stats count,mean,p50,p95 --store \(directory)
              tsdb query Steps --range \(month) --bucket day --format csv --store \(directory)
              tsdb sleep --range \(month) --tz \(HealthDataGenerator.homeZone) --store \(directory)
              tsdb workouts --range \(month) --with HeartRate --store \(directory)
              tsdb verify --deep --store \(directory)
              tsdb plot HeartRate --range \(month) --tz \(HealthDataGenerator.homeZone) --out hr.svg \
              --store \(directory)
              tsdb export --format parquet --out \(directory)-parquet --store \(directory)

            See it in your browser (a local dashboard; Ctrl-C stops it):
              tsdb serve --tz \(HealthDataGenerator.homeZone) --store \(directory)
            (delete \(directory) when done)
            """)
    }
}

func milliseconds(since start: ContinuousClock.Instant) -> String {
    let d = ContinuousClock.now - start
    return fixed(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15, 2)
}
