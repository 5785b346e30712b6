import ArgumentParser
import TSDB
import TSDBSynthetic

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write realistic synthetic Apple Health day files (deterministic for a seed).",
        discussion:
            "Writes DIR/raw/YYYY/MM/YYYY-MM-DD.json. A year has about 0.36 M heart-rate samples; --heavy about 1.6 M.")

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

    func run() throws {
        guard days > 0 else { throw ValidationError("--days must be positive") }
        var o = HealthDataGenerator.Options()
        o.days = days
        o.startDate = start
        o.seed = seed
        o.heartRateDensity = heavy ? HealthDataGenerator.heavyHeartRateDensity : 1
        o.edgeCases = edgeCases
        var bar = ProgressBar("generating")
        let (files, samples) = try HealthDataGenerator(options: o).write(rawDirectory: directory + "/raw") {
            done, total in
            bar.update(done: done, total: total, detail: "\(done)/\(total) days")
        }
        bar.finish()
        output("wrote \(formatCount(files)) day files with \(formatCount(samples)) samples under \(directory)/raw")
    }
}
