import ArgumentParser
import TSDB
import TSDBSynthetic

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write realistic synthetic Apple Health day files (deterministic for a seed).",
        discussion:
            "Writes DIR/raw/YYYY/MM/YYYY-MM-DD.json. A year has about 0.36 M heart-rate samples; --heavy about 1.6 M. "
            + "With --apple-export, writes the same person as Apple Health's own DIR/export.zip instead (workouts with "
            + "routes, blood-pressure correlations, activity summaries, heartbeat series, and the breakages real "
            + "exports have).")

    @Argument(help: "Folder to create raw/ in.")
    var directory: String

    @Option(help: "Number of days.")
    var days: Int = 365

    @Option(help: "First day, YYYY-MM-DD.")
    var start: String = "2025-01-01"

    @Option(help: "Random seed.")
    var seed: UInt64 = 42

    @Flag(help: "About 1.6 M heart-rate samples a year instead of ~0.36 M.")
    var heavy = false

    @Flag(help: "Add awkward-but-valid input: escapes, unicode, nested metadata, odd offsets, nulls.")
    var edgeCases = false

    @Flag(help: "Write DIR/export.zip as Health's \"Export All Health Data\" makes it, instead of day files.")
    var appleExport = false

    func run() throws {
        guard days > 0 else { throw ValidationError("--days must be positive") }
        var o = HealthDataGenerator.Options()
        o.days = days
        o.startDate = start
        o.seed = seed
        o.heartRateDensity = heavy ? HealthDataGenerator.heavyHeartRateDensity : 1
        o.edgeCases = edgeCases
        var bar = ProgressBar("generating")
        if appleExport {
            try FileSystem.makeDirectories(directory)
            let written = try AppleExportGenerator(options: o).write(to: directory + "/export.zip") { done, total in
                bar.update(done: done, total: total, detail: "\(done)/\(total) days")
            }
            bar.finish()
            let records = written.records.values.reduce(0, +)
            output(
                "wrote \(directory)/export.zip: \(formatCount(records)) records, "
                    + "\(formatCount(written.workouts)) workouts, "
                    + "\(formatBytes(written.xmlBytes)) of XML")
            return
        }
        let (files, samples) = try HealthDataGenerator(options: o).write(rawDirectory: directory + "/raw") {
            done, total in
            bar.update(done: done, total: total, detail: "\(done)/\(total) days")
        }
        bar.finish()
        output("wrote \(formatCount(files)) day files with \(formatCount(samples)) samples under \(directory)/raw")
    }
}
