import ArgumentParser
import TSDB

struct Summary: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "One summary per local day: activity, heart, sleep, workouts, body mass, mindful minutes.",
        discussion: """
            Every figure is computed like `tsdb query`, `tsdb sleep` and `tsdb workouts` compute it (same \
            de-duplication; a night belongs to its wake-up day); types without data are left out. \
            Markdown (the default) is a note per day: YAML front matter with the figures, then a short \
            readable body. With --out DIR, one file per day (DIR/YYYY/MM/YYYY-MM-DD.md by default, see \
            --pattern); a re-run rewrites only days whose figures changed, and never replaces a file it \
            did not write (its files say `generator: tsdb summary`) unless --force.
            """)

    @Option(help: "Days, e.g. 2025-03 or 2025-03-01..2025-03-07 (a date as the end is included). Default: everything.")
    var range: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "Output: markdown, json, ndjson or csv.")
    var format: String = "markdown"

    @Option(help: "Write one file per day into this folder (markdown or json) instead of stdout.")
    var out: String?

    @Option(help: "File path under --out, with {yyyy} {MM} {dd} (default {yyyy}/{MM}/{yyyy}-{MM}-{dd}).")
    var pattern: String?

    @Flag(help: "With --out, also replace files tsdb did not write.")
    var force = false

    @OptionGroup var threadsOption: ThreadsOption

    @OptionGroup var storeOption: StoreOption

    var request: SummaryRequest {
        SummaryRequest(
            report: ReportRequest(range: range, tz: zoneOption.tz, format: format, store: storeOption.store), out: out,
            pattern: pattern, force: force, threads: threadsOption.threads)
    }

    func run() throws { try Self.run(request) }

    static func run(_ request: SummaryRequest) throws {
        let (format, out, pattern, force) = (request.report.format, request.out, request.pattern, request.force)
        guard ["markdown", "json", "ndjson", "csv"].contains(format) else {
            throw ValidationError("--format must be markdown, json, ndjson or csv")
        }
        if out == nil && (force || pattern != nil) {
            throw ValidationError("--force and --pattern apply with --out")
        }
        let store = try StoreOption.open(request.report.store)
        let options = try request.options()
        let range = try ZoneOption.range(request.report.range, in: options.zone)
        let days = try store.dailySummaries(from: range.from, to: range.to, options: options)
        if days.isEmpty { printError(store.types.isEmpty ? "the store holds no samples yet" : "no data in that range") }
        if let out {
            guard format == "markdown" || format == "json" else {
                throw ValidationError("--out writes markdown or json files, one per day")
            }
            try writeFiles(days, to: out, request)
            return
        }
        let buffer = OutputBuffer()
        switch format {
        case "markdown":
            for (i, day) in days.enumerated() { buffer.write((i == 0 ? "" : "\n") + SummaryRendering.markdown(day)) }
        case "json":
            buffer.write(
                "[" + days.map { "\n  " + SummaryRendering.json($0) }.joined(separator: ",")
                    + (days.isEmpty ? "]\n" : "\n]\n"))
        case "ndjson": for d in days { buffer.write(SummaryRendering.json(d) + "\n") }
        default: buffer.write(SummaryRendering.csv(days))
        }
        buffer.flush()
    }

    static func writeFiles(_ days: [DailySummary], to folder: String, _ request: SummaryRequest) throws {
        let (format, pattern, force) = (request.report.format, request.pattern, request.force)
        var written = 0
        var unchanged = 0
        var foreign: [String] = []
        for day in days {
            let (y, m, d) = (day.date.prefix(4), day.date.dropFirst(5).prefix(2), day.date.suffix(2))
            let relative =
                (pattern ?? "{yyyy}/{MM}/{yyyy}-{MM}-{dd}").replacing("{yyyy}", with: String(y)).replacing(
                    "{MM}", with: String(m)
                )
                .replacing("{dd}", with: String(d)) + (format == "json" ? ".json" : ".md")
            let text =
                format == "json" ? SummaryRendering.json(day, generator: true) + "\n" : SummaryRendering.markdown(day)
            switch try NoteFile.write(text, to: folder + "/" + relative, owned: SummaryRendering.marker, force: force) {
            case .written: written += 1
            case .unchanged: unchanged += 1
            case .notOurs(let path): foreign.append(path)
            }
        }
        for path in foreign { printError("skipped: \(path) was not written by tsdb summary (--force replaces it)") }
        output("\(plural(written, "day")) written, \(unchanged) unchanged, \(foreign.count) skipped under \(folder)")
        if !foreign.isEmpty { throw ExitCode(2) }
    }
}

/// A `tsdb summary` as plain values: made from ``Summary``'s parsed options, or by
/// ``QuickSummary`` (a day's note, run daily, was three quarters ArgumentParser).
struct SummaryRequest: Equatable {
    /// The days, zone, format and store, as the report commands take them (never verbose).
    var report = ReportRequest(format: "markdown")
    var out: String?
    var pattern: String?
    var force = false
    var threads: String?

    /// The days' aggregate options.
    func options() throws -> AggregateOptions {
        var o = AggregateOptions()
        o.zone = try ZoneOption.rules(report.tz)
        if let count = try ThreadsOption.count(threads) { o.threads = count }
        return o
    }
}
