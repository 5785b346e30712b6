import ArgumentParser
import TSDB

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
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

    @Option(help: "First day of weeks: monday … sunday (default monday).")
    var weekStart: String = "monday"

    @OptionGroup var report: ReportOptions

    @OptionGroup var threadsOption: ThreadsOption

    var request: PeriodReportRequest {
        PeriodReportRequest(
            report: report.request, period: period, weekStart: weekStart, threads: threadsOption.threads)
    }

    func run() throws { try Self.run(request) }

    static func run(_ request: PeriodReportRequest) throws {
        guard let unit = ["week": BucketSpec.CalendarUnit.week, "month": .month][request.period] else {
            throw ValidationError("--period must be week or month")
        }
        let (store, zone, range, f) = try request.report.resolve()
        let options = try request.options(zone)
        let lines = try store.periodReport(unit, from: range.from, to: range.to, options: options)
        let number = f == .csv || f == .json || f == .ndjson ? exact : human
        let rows = lines.map { l -> [String] in
            let label = String(localTimestamp(l.start, options.zone).prefix(unit == .month ? 7 : 10))
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

/// A `tsdb report` as plain values.
struct PeriodReportRequest: Equatable {
    var report = ReportRequest()
    var period = "week"
    var weekStart = "monday"
    var threads: String?

    /// The periods' aggregate options in `zone`.
    func options(_ zone: TimeZoneRules) throws -> AggregateOptions {
        var o = AggregateOptions()
        o.zone = zone
        o.weekStart = try isoWeekday(weekStart)
        if let count = try ThreadsOption.count(threads) { o.threads = count }
        return o
    }
}
