import ArgumentParser
import TSDB

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Per week or month and type: the statistic that fits the type, and the change since the period before.",
        discussion: """
            Cumulative types (steps, energy, …): the sum. Discrete types (heart rate, body mass, …): the mean, \
            with min and max. Sleep: minutes asleep per night (nights by wake-up date) and the number of \
            nights. Other category types: minutes. Workouts: how many, and their minutes. Periods are \
            local calendar weeks (--week-start) or months in --tz.
            """)

    @Option(help: "week or month.")
    var period: String = "week"

    @Option(help: "Periods, e.g. 2025-03 or 2025-01..2025-06 (a date as the end is included). Default: everything.")
    var range: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "First day of weeks: monday … sunday (default monday).")
    var weekStart: String = "monday"

    @Option(help: "Output: table, markdown, csv, json or ndjson.")
    var format: String = "table"

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        guard let unit = ["week": BucketSpec.CalendarUnit.week, "month": .month][period] else {
            throw ValidationError("--period must be week or month")
        }
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        guard let weekday = days.firstIndex(of: weekStart.lowercased()) else {
            throw ValidationError("--week-start must be a day name, e.g. monday")
        }
        let f = try AggregateFormat.parse(format)
        let store = try storeOption.open()
        var options = AggregateOptions()
        options.zone = try zoneOption.rules()
        options.weekStart = weekday + 1
        let range = try ZoneOption.range(range, in: options.zone)
        let lines = try store.periodReport(unit, from: range.from, to: range.to, options: options)
        let number = f == .csv || f == .json || f == .ndjson ? exact : human
        let rows = lines.map { l -> [String] in
            let label = String(localTime(l.start, options.zone).prefix(unit == .month ? 7 : 10))
            let percent = l.previous.flatMap { $0 == 0 ? nil : (l.value - $0) / abs($0) * 100 }
            return [
                label, TypeNames.shortName(l.type), l.statistic, number(l.value), l.minimum.map(number) ?? "",
                l.maximum.map(number) ?? "", l.statistic == "asleep_min_per_night" ? l.detail.map(number) ?? "" : "",
                l.statistic == "workouts" ? l.detail.map(number) ?? "" : "", l.previous.map(number) ?? "",
                l.change.map(number) ?? "", percent.map { fixed($0, 1) } ?? "",
            ]
        }
        let header = [
            "period", "type", "statistic", "value", "min", "max", "nights", "workout_min", "previous", "change",
            "change_pct",
        ]
        printRows(header, rows, format: f)
    }
}
