import ArgumentParser
import TSDB

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Samples of one type in a time range, or aggregates of them per bucket.",
        discussion: """
            TYPE is a HealthKit identifier or short name, case-insensitive: HeartRate, StepCount (Steps), \
            SleepAnalysis (Sleep), Workout, … RANGE is 2025, 2025-03, 2025-03-01, or A..B of those or of \
            instants such as 2025-03-01T08:00+01:00; dates are in --tz; either side of .. may be empty. \
            A date as the end is included (2025-01..2025-03 is January to March, 2025-03-01..2025-03-07 \
            seven days); an instant as the end is excluded. --verbose prints the resolved instants.

            With --bucket or --stats, prints aggregates: cumulative types (steps, distance, energy, …) \
            default to sum, discrete types (heart rate, HRV, body mass, …) to count,min,max,mean, \
            category types (sleep, stand hours) to time per value. Sums split interval samples across \
            buckets by time (--assign start puts them in their start's bucket) and count time that \
            several sources cover once, from the highest-priority source (--priority, --dedupe none).
            """)

    @Argument(help: "Sample type, e.g. HeartRate.")
    var type: String

    @Option(
        help: "Time range, e.g. 2025-03 or 2025-03-01..2025-03-07 (a date as the end is included). Default: everything."
    )
    var range: String?

    @Option(help: "minute, hour, day, week, month, year, or a duration such as 15m, 6h.")
    var bucket: String?

    @Option(help: "Statistics: count,sum,min,max,mean,first,last,stddev,p50,p90,p95,p99 (any subset).")
    var stats: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "First day of weeks: monday … sunday (default monday).")
    var weekStart: String?

    @Option(
        help: "Interval samples: prorate (split by time, the default) or start (whole sample in its start's bucket).")
    var assign: String?

    @Option(
        help: """
            Overlapping samples for sums and category times: priority (count each stretch of time once, \
            the default) or none.
            """)
    var dedupe: String?

    @Option(
        help: "Source priority, highest first, comma-separated substrings of source or device (default Watch,iPhone).")
    var priority: String?

    @Flag(help: "Include buckets with no data.")
    var fill = false

    @OptionGroup var threadsOption: ThreadsOption

    @Option(help: "Keep samples whose source or device contains this text.")
    var source: String?

    @Option(help: "Output: table, csv, json, ndjson or markdown.")
    var format: String = "table"

    @Flag(
        help: "Print the in-process time of the query itself, and blocks decoded vs answered from summaries, to stderr."
    )
    var timings = false

    @Flag(help: "Print the resolved time range to stderr.")
    var verbose = false

    @OptionGroup var storeOption: StoreOption

    /// What the parsed options ask for.
    var request: QueryRequest {
        QueryRequest(
            type: type, range: range, bucket: bucket, stats: stats, tz: zoneOption.tz, weekStart: weekStart,
            assign: assign, dedupe: dedupe, priority: priority, fill: fill, threads: threadsOption.threads,
            source: source, format: format, timings: timings, verbose: verbose, store: storeOption.store)
    }

    func run() throws { try request.run() }
}

/// A `tsdb query` as plain values: made from ``Query``'s parsed options, or by ``QuickQuery``
/// without ArgumentParser.
struct QueryRequest: Equatable {
    var type = ""
    var range, bucket, stats, tz, weekStart, assign, dedupe, priority: String?
    var fill = false
    /// As given: checked with the other aggregate options.
    var threads: String?
    var source: String?
    var format = "table"
    var timings = false
    var verbose = false
    var store: String?

    func run() throws {
        let store = try StoreOption.open(self.store)
        let identifier = try TypeNames.resolve(type, among: store.typeNames)
        let zone = try ZoneOption.rules(tz)
        let r = try ZoneOption.range(range, in: zone)
        if verbose { printError("range: \(r.description(in: zone))") }
        guard bucket != nil || stats != nil else {
            let aggregateOnly = [
                ("--week-start", weekStart != nil), ("--assign", assign != nil), ("--dedupe", dedupe != nil),
                ("--priority", priority != nil), ("--fill", fill), ("--threads", threads != nil),
                ("--timings", timings),
            ]
            if let given = aggregateOnly.first(where: \.1) {
                throw ValidationError("\(given.0) applies to aggregates: add --bucket or --stats")
            }
            try writeSamples(store, identifier, r, zone)
            return
        }
        let options = try aggregateOptions(identifier, zone)
        let f = try AggregateFormat.parse(format)
        let clock = ContinuousClock.now
        var printer = AggregatePrinter(catalog: { store.catalog }, zone: zone, format: f)
        let result = try store.aggregate(
            identifier, from: r.from, to: r.to, options: options,
            header: {
                printer.header($0)
                return printer.lines!
            }, write: { printer.write(lines: $0) })
        printer.finish()
        let elapsed = milliseconds(since: clock)
        if timings {
            let peak = peakResidentMemory().map { fixed(Double($0) / 1e6, 1) } ?? "n/a"
            printError(
                "timings: aggregate and output \(elapsed) ms, \(result.blocksDecoded) blocks decoded, "
                    + "\(result.blocksFromSummaries) answered from summaries, \(result.blocksFromSlots) from slot "
                    + "summaries, \(result.blocksSplit) added up either side of a bucket edge, \(result.blocksAddedUp) "
                    + "added up bucket by bucket, \(plural(result.pieces, "piece")) on "
                    + "\(plural(result.pieces > 1 ? 2 : 1, "thread")), peak \(peak) MB resident"
            )
        }
    }

    func writeSamples(_ store: Store, _ identifier: String, _ r: TimeRange, _ zone: TimeZoneRules) throws {
        if identifier.hasPrefix("HKCorrelationTypeIdentifier") {
            let readings = try store.correlations(
                of: identifier, from: r.from ?? .min, to: r.to ?? .max, source: source)
            return CorrelationOutput.write(
                readings, zone: tz == nil ? nil : zone, format: try AggregateFormat.parse(format))
        }
        guard let f = OutputFormat(rawValue: format) else {
            throw ValidationError(
                "--format for samples must be one of: " + OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        if f != .table {
            // Columnar fast path: rows are written straight from decoded blocks.
            var text = SampleTextWriter(format: f)
            try store.writeSamples(
                of: identifier, from: r.from ?? .min, to: r.to ?? .max, format: text.engineFormat, source: source
            ) { text.write($0) }
            text.finish()
            return
        }
        try SampleTable.write(
            store, identifier, from: r.from ?? .min, to: r.to ?? .max, zone: tz == nil ? nil : zone, source: source)
    }

    func aggregateOptions(_ identifier: String, _ zone: TimeZoneRules) throws -> AggregateOptions {
        var o = AggregateOptions()
        o.zone = zone
        o.bucket = try bucket.map { try BucketSpec.parse($0) } ?? .none
        o.statistics = try stats.map { try Statistic.parseList($0) }
        let kind = TypeCatalog.kind(of: identifier)
        if let chosen = o.statistics, kind == .category, chosen != [.count] {
            throw ValidationError(
                """
                \(TypeNames.shortName(identifier)) is a category type: its values are labels, so the only statistic \
                is count (samples); without --stats it shows minutes per value
                """)
        }
        if let weekStart { o.weekStart = try isoWeekday(weekStart) }
        if let assign {
            guard ["prorate", "start"].contains(assign) else {
                throw ValidationError("--assign must be prorate or start")
            }
            o.prorate = assign == "prorate"
        }
        if let dedupe {
            guard ["priority", "none"].contains(dedupe) else {
                throw ValidationError("--dedupe must be priority or none")
            }
            o.deduplicate = dedupe == "priority"
        }
        if let priority { o.priority = priority.split(separator: ",").map { String($0).trimmingCharacters() } }
        if let count = try ThreadsOption.count(threads) { o.threads = count }
        o.fill = fill
        o.source = source
        return o
    }
}

extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
