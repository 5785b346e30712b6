import ArgumentParser
import TSDB
import TSDBAppleHealth

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Check the store: every segment against the manifest and its checksums; with --deep, every sample "
            + "against the raw files.",
        discussion:
            "Exit status 0 when nothing is wrong, 1 when problems are listed. --repair rebuilds the affected "
            + "months from the raw files."
    )

    @Flag(help: "Also re-read every raw file and compare every sample with the segments.")
    var deep = false

    @Flag(help: "Rebuild the months with problems from the raw files, then check again.")
    var repair = false

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        let layout = try storeOption.layout()
        var verifier = StoreVerifier(layout: layout)
        verifier.exportReader = ExportImport.exportReader
        var bar = ProgressBar("verifying")
        var report = try verifier.verify(deep: deep) { bar.update(done: $0, total: $1) }
        bar.finish()
        printReport(report)
        if repair && !report.problems.isEmpty {
            var options = CompactionOptions()
            let damagedManifest = report.findings.contains { $0.kind == .damagedManifest }
            options.rebuild = damagedManifest
            options.rebuildMonths = report.monthsToRepair
            let r = try Compactor(layout: layout, options: options).run()
            let months = damagedManifest ? "every month" : plural(report.monthsToRepair.count, "month")
            output("repaired: rebuilt \(months) from the raw files (generation \(r.generation))")
            report = try verifier.verify(deep: deep)
            printReport(report)
        }
        if !report.problems.isEmpty { throw ExitCode(1) }
    }

    func printReport(_ r: StoreVerifier.Report) {
        for f in r.findings {
            if f.kind == .rawFileChanged { output("note: \(f)") } else { printError("problem: \(f)") }
        }
        let scope = deep ? ", \(formatCount(r.rawFilesChecked)) raw files compared" : ""
        let verdict = r.problems.isEmpty ? "ok" : plural(r.problems.count, "problem")
        output(
            "\(verdict): \(plural(r.segmentsChecked, "segment")), \(plural(r.blocksChecked, "block")), "
                + "\(plural(r.samplesChecked, "sample")) checked\(scope)")
        if !r.problems.isEmpty && !repair {
            output("`tsdb verify --repair\(deep ? " --deep" : "")` rebuilds the affected months from the raw files")
        }
    }
}
