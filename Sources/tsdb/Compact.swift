import ArgumentParser
import TSDB

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the store up to date with the raw day files (only what changed is redone).",
        discussion: "DIR is the folder holding raw/ (…/fitness/apple-health) or a life-db imports/ root. The store is written to DIR's tsdb/ folder; raw files are only read. Exit status 2 means some files were skipped (listed on stderr).")

    @Argument(help: "Folder holding raw/, or an imports/ root.")
    var directory: String

    @Option(help: "Block compressor: lz4 (fastest to read), zstd (about 2% smaller) or none.")
    var codec: String = "lz4"

    @Option(help: "zstd compression level (1–22): higher is smaller and slower to compact; reading speed barely changes.")
    var zstdLevel: Int32 = 3

    @Option(help: "Parser threads (default: one per core).")
    var threads: Int?

    @Option(help: "Samples per block.")
    var blockSize: Int = 4096

    @Flag(help: "Ignore the current store and rebuild every segment from the raw files.")
    var rebuild = false

    @Flag(help: "Fail at once instead of waiting when another compaction holds the store.")
    var noWait = false

    @Flag(help: "Print warnings (e.g. ignored unknown keys).")
    var verbose = false

    func run() throws {
        let layout = try StoreLayout.locate(directory)
        var options = CompactionOptions()
        guard let c = BlockCodec.allCases.first(where: { $0.description == codec }) else {
            throw ValidationError("--codec must be zstd, lz4 or none")
        }
        guard (1...65_536).contains(blockSize) else { throw ValidationError("--block-size must be 1...65536") }
        options.codec = c
        options.rebuild = rebuild
        options.waitForLock = !noWait
        options.onLockWait = { pid in printError("waiting for another compaction of this store\(pid.map { " (pid \($0))" } ?? "") to finish…") }
        options.blockSamples = blockSize
        if let threads {
            guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
            options.threads = threads
        }
        guard (1...22).contains(zstdLevel) else { throw ValidationError("--zstd-level must be 1...22") }
        options.zstdLevel = zstdLevel
        let report = try compact(layout, options)
        if report.isPartial { throw ExitCode(2) }
    }

    func compact(_ layout: StoreLayout, _ options: CompactionOptions) throws -> CompactionReport {
        var bar = ProgressBar("compacting")
        let report = try Compactor(layout: layout, options: options).run { p in
            bar.update(done: p.bytesDone, total: p.bytesTotal, detail: "\(p.filesDone)/\(p.filesTotal) files")
        }
        bar.finish()
        for e in report.skipped { printError("skipped: \(e)") }
        if verbose { for w in report.warnings { printError("warning: \(w)") } }
        else if !report.warnings.isEmpty { printError("\(report.warnings.count) warnings (run with --verbose to list them)") }
        print(summary(report, layout))
        return report
    }
}

func summary(_ r: CompactionReport, _ layout: StoreLayout) -> String {
    let bps = r.samplesStored > 0 ? Double(r.segmentBytes) / Double(r.samplesStored) : 0
    let store = """
      store:     \(formatCount(r.samplesStored)) samples, \(r.types) types, \(formatCount(r.segmentsTotal)) segments, \(formatBytes(r.segmentBytes)), \(fixed(bps, 2)) bytes/sample
      skipped:   \(r.skipped.count) files\(r.skipped.isEmpty ? "" : " (see above)")
      location:  \(layout.storeDirectory) (generation \(r.generation))
      memory:    \(peakResidentMemory().map { "peak \(formatBytes($0)) resident (mapped raw files included)" } ?? "n/a")
    """
    if r.upToDate {
        return "up to date: \(formatCount(r.filesUnchanged)) day files unchanged (checked in \(fixed(r.elapsedSeconds * 1000, 1)) ms)\n" + store
    }
    if !r.isFullRebuild {
        return """
        updated in \(fixed(r.elapsedSeconds * 1000, 1)) ms: \(r.filesAdded) day files added, \(r.filesChanged) changed, \(r.filesDeleted) deleted, \(formatCount(r.filesUnchanged)) unchanged\(r.filesTouched > 0 ? ", \(r.filesTouched) touched (same content)" : "")
          months:    \(r.monthsRebuilt) rebuilt from raw files, \(r.monthsAppended) extended with new files; \(r.segmentsWritten) segments written

        """ + store
    }
    let mbps = r.elapsedSeconds > 0 ? Double(r.bytesRead) / r.elapsedSeconds / 1e6 : 0
    return """
    compacted \(formatCount(r.filesRead)) day files (\(formatBytes(r.bytesRead)) of JSON) in \(fixed(r.elapsedSeconds, 2)) s — \(fixed(mbps, 0)) MB/s
      samples:   \(formatCount(r.samplesRead)) read, \(formatCount(r.duplicatesDropped)) duplicates across day files stored once

    """ + store
}
