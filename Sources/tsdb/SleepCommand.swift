import ArgumentParser
import TSDB

struct SleepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleep",
        abstract: "One row per night: bedtime, wake time, time in bed, asleep, minutes per stage.",
        discussion:
            "A night runs noon to noon in --tz and belongs to the wake-up date. Samples from several sources "
            + "covering the same time count once, from the highest-priority source."
    )

    @OptionGroup var report: ReportOptions

    @Option(help: "Source priority, highest first.")
    var priority: String = "Watch,iPhone"

    @Option(help: "Keep samples whose source or device contains this text.")
    var source: String?

    @OptionGroup var threadsOption: ThreadsOption

    var request: SleepRequest {
        SleepRequest(report: report.request, priority: priority, source: source, threads: threadsOption.threads)
    }

    func run() throws { try Self.run(request) }

    static func run(_ request: SleepRequest) throws {
        let (store, zone, r, f) = try request.report.resolve()
        let nights = try store.sleepNights(from: r.from, to: r.to, options: try request.options(zone))
        let stages: [(Int64, String)] = [(2, "awake"), (3, "core"), (4, "deep"), (5, "rem"), (1, "unspecified")]
        let header = ["night", "bedtime", "wake", "in_bed_min", "asleep_min"] + stages.map { $0.1 + "_min" }
        let rows = nights.map { n in
            [
                n.date, localTimestamp(n.bedtime, zone), localTimestamp(n.wakeTime, zone), human(n.inBedSeconds / 60),
                human(n.asleepSeconds / 60),
            ]
                + stages.map { human((n.secondsByValue[$0.0] ?? 0) / 60) }
        }
        printRows(header, rows, format: f)
    }
}

/// Prints string rows in any of the aggregate output formats.
func printRows(_ header: [String], _ rows: [[String]], format: AggregateFormat) {
    let out = OutputBuffer()
    defer { out.flush() }
    func quoted(_ s: String) -> String { Double(s) != nil ? s : jsonString(s) }
    switch format {
    case .table: out.write(renderTable(header, rows))
    case .markdown: out.write(renderMarkdown(header, rows))
    case .csv:
        out.write(header.joined(separator: ",") + "\n")
        for r in rows { out.write(r.map(csvQuoted).joined(separator: ",") + "\n") }
    case .json, .ndjson:
        if format == .json { out.write("[") }
        for (i, r) in rows.enumerated() {
            let object =
                "{"
                + zip(header, r).filter { !$0.1.isEmpty }.map { "\"\($0.0)\":\(quoted($0.1))" }.joined(separator: ",")
                + "}"
            out.write(format == .json ? (i == 0 ? "\n  " : ",\n  ") + object : object + "\n")
        }
        if format == .json { out.write(rows.isEmpty ? "]\n" : "\n]\n") }
    }
}

/// A CSV field, quoted (RFC 4180) when it needs to be.
func csvQuoted(_ s: String) -> String {
    // A character is a comma, quote or newline only if the text has that byte: most fields have
    // none, and a look by characters was 16.7 M of the year's CSV summary's 72.3 M instructions
    // of rendering (callgrind).
    let special: (UInt8) -> Bool = { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }
    if !s.utf8.contains(where: special) { return s }
    // "\r\n" is one character, not "\n".
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return s }
    var out = "\""
    for c in s { out += c == "\"" ? "\"\"" : String(c) }
    return out + "\""
}

/// What every report command takes: a range (of wake-up dates for `sleep`, of starts for
/// `workouts`), the zone, the output format and the store.
struct ReportOptions: ParsableArguments {
    @Option(
        help: """
            Time range, e.g. 2025-03 or 2025-03-01..2025-03-15 (dates in --tz; a date as the end is \
            included). Default: everything.
            """
    )
    var range: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "Output: table, csv, json, ndjson or markdown.")
    var format: String = "table"

    @Flag(help: "Print the resolved time range to stderr.")
    var verbose = false

    @OptionGroup var storeOption: StoreOption

    var request: ReportRequest {
        ReportRequest(range: range, tz: zoneOption.tz, format: format, verbose: verbose, store: storeOption.store)
    }

    func resolve() throws -> (Store, TimeZoneRules, TimeRange, AggregateFormat) { try request.resolve() }
}

/// ``ReportOptions`` as plain values, made from them or by ``QuickReport``.
struct ReportRequest: Equatable {
    var range: String?
    var tz: String?
    var format = "table"
    var verbose = false
    var store: String?

    func resolve() throws -> (Store, TimeZoneRules, TimeRange, AggregateFormat) {
        let zone = try ZoneOption.rules(tz)
        let format = try AggregateFormat.parse(format)
        let store = try StoreOption.open(store)
        let range = try ZoneOption.range(range, in: zone)
        if verbose { printError("range: \(range.description(in: zone))") }
        return (store, zone, range, format)
    }
}

/// A `tsdb sleep` as plain values.
struct SleepRequest: Equatable {
    var report = ReportRequest()
    var priority = "Watch,iPhone"
    var source: String?
    var threads: String?

    /// The nights' aggregate options in `zone`.
    func options(_ zone: TimeZoneRules) throws -> AggregateOptions {
        var o = AggregateOptions()
        o.zone = zone
        o.priority = priority.split(separator: ",").map { String($0).trimmingCharacters() }
        o.source = source
        if let count = try ThreadsOption.count(threads) { o.threads = count }
        return o
    }
}
