import ArgumentParser
import TSDB
import TSDBAppleHealth

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read Apple Health's own export (export.zip, export.xml or the unzipped folder).",
        discussion:
            "With --check, reads the whole export as a stream (the zip is never extracted) and reports what it holds: "
            + "records per type, workouts, correlations, activity summaries, heartbeat series, routes and "
            + "electrocardiograms, the dates covered and the sources. Nothing is written. Storing an export's "
            + "samples in the store is the next step of this command and is not available yet.")

    @Argument(help: "export.zip, export.xml, or the apple_health_export folder.")
    var export: String

    @Flag(help: "Read and report only (required for now: storing comes next).")
    var check = false

    @Option(help: "Records per type listed (most first).")
    var top = 20

    func run() throws {
        guard check else {
            throw ValidationError(
                "storing an export is not available yet; `tsdb import \(export) --check` reads it and reports "
                    + "what it holds"
            )
        }
        var bar = ProgressBar("reading")
        let clock = ContinuousClock()
        let start = clock.now
        let inv = try ExportReader.inventory(of: export) { bar.update(done: $0, total: $1) }
        bar.finish()
        let seconds =
            Double((clock.now - start).components.attoseconds) / 1e18 + Double((clock.now - start).components.seconds)
        output(
            "\(export): \(inv.xmlName), \(formatBytes(inv.xmlBytes)) of XML read in \(fixed(seconds, 2)) s "
                + "(\(fixed(Double(inv.xmlBytes) / 1e6 / max(seconds, 1e-9), 0)) MB/s)")
        if let d = inv.exportDate { output("exported \(d)") }
        if let first = inv.firstDate, let last = inv.lastDate { output("samples from \(first) to \(last)") }
        let total = inv.records.values.reduce(0, +)
        output(
            "\(formatCount(total)) records of \(plural(inv.records.count, "type")) "
                + "from \(plural(inv.sources.count, "source"))"
        )
        for (type, n) in inv.records.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }).prefix(top) {
            output("  \(formatCount(n).leftPadded(9))  \(TypeNames.shortName(type))")
        }
        if inv.records.count > top { output("  … and \(inv.records.count - top) more types") }
        var parts: [String] = []
        let workouts = inv.workouts.values.reduce(0, +)
        if workouts > 0 { parts.append("\(plural(workouts, "workout")) (\(inv.workoutRoutes) with routes)") }
        let correlations = inv.correlations.values.reduce(0, +)
        if correlations > 0 { parts.append(plural(correlations, "correlation")) }
        if inv.activitySummaries > 0 { parts.append("\(formatCount(inv.activitySummaries)) daily activity summaries") }
        if inv.heartbeatSeries > 0 {
            parts.append("\(formatCount(inv.heartbeatSeries)) heartbeat series (\(formatCount(inv.heartbeats)) beats)")
        }
        if !parts.isEmpty { output(parts.joined(separator: ", ")) }
        if !inv.me.isEmpty { output("Me: " + inv.me.map { "\($0.0)=\($0.1)" }.joined(separator: ", ")) }
        if !inv.otherElements.isEmpty {
            output(
                "also in the XML: "
                    + inv.otherElements.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                    .joined(separator: ", "))
        }
        if !inv.otherMembers.isEmpty {
            let routes = inv.otherMembers.filter { $0.contains("workout-routes/") }.count
            let ecgs = inv.otherMembers.filter { $0.contains("electrocardiograms/") }.count
            let rest = inv.otherMembers.count - routes - ecgs
            output(
                "other files: \(plural(routes, "route")) (GPX), \(plural(ecgs, "electrocardiogram")) (CSV), "
                    + "\(rest) more"
            )
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
