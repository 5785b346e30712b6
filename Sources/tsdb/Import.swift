import ArgumentParser
import TSDB
import TSDBAppleHealth

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import Apple Health's own export (export.zip, export.xml or the unzipped folder).",
        discussion:
            "Keeps the export byte for byte as STORE/exports/<export date>.zip (the file you named is only "
            + "read), then compacts, reading it once as a stream (the zip is never extracted): records, "
            + "correlations, workouts with their statistics, events and routes, heartbeats, activity summaries and "
            + "electrocardiograms join the day files' samples; a reading both have is stored once. An archive "
            + "found damaged is removed again and the store is left as it was. The newest kept export is the "
            + "one read. Importing the same archive again changes nothing. "
            + "With --check, only reads and reports what the export holds.")

    @Argument(help: "export.zip, export.xml, or the apple_health_export folder.")
    var export: String

    @Flag(help: "Read and report only; write nothing.")
    var check = false

    @OptionGroup var storeOption: StoreOption

    @Option(help: "Records per type listed (most first).")
    var top = 20

    func run() throws {
        guard check else { return try store() }
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

extension Import {
    /// Keeps the export in the store's `exports/` and compacts; a damaged archive is removed again.
    func store() throws {
        let layout = try importLayout()
        let clock = ContinuousClock()
        let start = clock.now
        var bar = ProgressBar("copying")
        let kept = try ExportImport.keep(export, in: layout) { bar.update(done: $0, total: $1) }
        bar.finish()
        let inv = kept.inventory
        output(
            (kept.alreadyImported ? "already imported as " : "kept as ") + kept.relativePath
                + (inv.exportDate.map { " (exported \($0))" } ?? ""))
        let report: CompactionReport
        do {
            report = try CompactRequest().compact(layout, CompactionOptions())
        } catch {
            ExportImport.discard(kept, in: layout)
            if !kept.alreadyImported { printError("the export was not imported; the store is as it was") }
            throw error
        }
        let seconds =
            Double((clock.now - start).components.attoseconds) / 1e18 + Double((clock.now - start).components.seconds)
        if !kept.alreadyImported {
            output(
                "imported \(formatBytes(inv.xmlBytes)) of XML in \(fixed(seconds, 2)) s "
                    + "(\(fixed(Double(inv.xmlBytes) / 1e6 / max(seconds, 1e-9), 0)) MB/s)")
            reportSamples(report)
        }
        let skipped = Self.notImported(inv)
        if !skipped.isEmpty {
            output(
                "not imported (kept in the archive): " + skipped.joined(separator: ", ")
                    + "; tsdb import --check also lists the elements it does not import")
        }
        if report.isPartial { throw ExitCode(2) }
    }

    /// What the export gave, by type (most first), the days it covers and what was left out.
    func reportSamples(_ r: CompactionReport) {
        guard let span = r.exportSpan else { return }
        func day(_ t: Int64) -> String {
            String(Timestamp(microseconds: t, form: TimeForm(isZulu: true)).description.prefix(10))
        }
        let total = r.exportSamples.values.reduce(0, +)
        output(
            "\(formatCount(total)) samples of \(plural(r.exportSamples.count, "type")) from the export, "
                + "\(day(span.lowerBound)) to \(day(span.upperBound)) (UTC):")
        let workouts = r.exportSamples["HKWorkoutTypeIdentifier"] ?? 0
        for (type, n) in r.exportSamples.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }).prefix(top) {
            output("  \(formatCount(n).leftPadded(9))  \(TypeNames.shortName(type))")
        }
        if r.exportSamples.count > top { output("  … and \(r.exportSamples.count - top) more types") }
        if workouts > 0 {
            let points = r.exportSamples["HKWorkoutRouteTypeIdentifier"] ?? 0
            output("\(plural(workouts, "workout")), \(formatCount(points)) route points")
        }
        for finding in r.exportFindings { output(finding) }
    }

    /// Files of the archive the store does not read (the outline lists files, not elements).
    static func notImported(_ inv: ExportInventory) -> [String] {
        inv.otherMembers.filter { !$0.contains("electrocardiograms/") && !$0.contains("workout-routes/") }.map {
            $0.hasSuffix("export_cda.xml") ? "\($0) (clinical document)" : $0
        }
    }

    /// The store folder: an existing one, or a new (or empty) folder given the usual layout.
    func importLayout() throws -> StoreLayout {
        let path = storeOption.path
        let layout = StoreLayout(appleHealthDirectory: path)
        let isNew = !FileSystem.exists(path)
        let entries = !isNew && FileSystem.isDirectory(path) ? try FileSystem.list(path) : nil
        let isEmpty = entries?.isEmpty ?? false
        if isNew || isEmpty {
            try FileSystem.makeDirectories(layout.rawDirectory)
            return layout
        }
        return try storeOption.layout()
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
