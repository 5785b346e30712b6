import ArgumentParser
import TSDB

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the samples of one type in a time range.",
        discussion: """
        TYPE is a HealthKit identifier or short name, case-insensitive: HeartRate, StepCount (Steps), \
        SleepAnalysis (Sleep), Workout, … RANGE is 2025, 2025-03, 2025-03-01, 2025-03-01..2025-04-01, \
        or instants such as 2025-03-01T08:00:00+01:00..2025-03-01T12:00Z (either side may be empty). \
        Calendar ranges are in UTC.
        """)

    @Argument(help: "Sample type, e.g. HeartRate.")
    var type: String

    @Option(help: "Time range; default: everything.")
    var range: String?

    @Option(help: "Keep samples whose source or device contains this text.")
    var source: String?

    @Option(help: "Output: table, csv, json or ndjson.")
    var format: String = "table"

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        guard let format = OutputFormat(rawValue: format) else {
            throw ValidationError("--format must be one of: " + OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let store = try storeOption.open()
        let identifier = try TypeNames.resolve(type, among: store.types.map(\.type))
        let r = try range.map { try TimeRange.parse($0, zone: zoneRule()) } ?? TimeRange(from: nil, to: nil)
        var cursor = try store.samples(of: identifier, from: r.from ?? .min, to: r.to ?? .max, source: source)
        var writer = SampleWriter(format: format)
        while let s = try cursor.next() { writer.write(s) }
        writer.finish()
    }
}
