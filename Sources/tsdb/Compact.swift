import ArgumentParser
import TSDB
import TSDBAppleHealth

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Bring the store up to date with the raw day files (only what changed is redone).",
        discussion: """
            DIR is the folder holding raw/ (…/fitness/apple-health) or a life-db imports/ root \
            (default: --store, $TSDB_STORE, then the current folder). The store is written to DIR's \
            tsdb/ folder; raw files are only read. Segments found missing or damaged are rebuilt from \
            the raw files. Names under raw/ that are not day files are ignored (--verbose lists them). \
            Exit status 2 means some files were skipped (listed on stderr).
            """)

    @Argument(help: "Folder holding raw/, or an imports/ root.")
    var directory: String?

    @OptionGroup var storeOption: StoreOption

    @Option(
        help: """
            Block compressor: lz4 (fastest to read), zstd (about 2% smaller) or none. \
            Applies to segments as they are written: on an existing store, add --rebuild.
            """)
    var codec: String?

    @Option(
        help: "zstd compression level (1–22): higher is smaller and slower to compact; reading speed barely changes.")
    var zstdLevel: Int32?

    @Option(help: "Parser threads (default: one per core).")
    var threads: Int?

    @Option(help: "Samples per block (default 4096).")
    var blockSize: Int?

    @Flag(help: "Ignore the current store and rebuild every segment from the raw files.")
    var rebuild = false

    @Flag(help: "Fail at once instead of waiting when another compaction holds the store.")
    var noWait = false

    @Flag(help: "Print warnings (e.g. ignored unknown keys) and the names under raw/ that are not day files.")
    var verbose = false

    var request: CompactRequest {
        CompactRequest(
            directory: directory, store: storeOption.store, codec: codec, zstdLevel: zstdLevel, threads: threads,
            blockSize: blockSize, rebuild: rebuild, noWait: noWait, verbose: verbose)
    }

    func run() throws { try request.run() }
}

extension CompactRequest {
    /// Files so far, or while an export is read its samples so far and their rate.
    static func progressDetail(_ p: CompactionProgress, since start: ContinuousClock.Instant) -> String {
        guard p.exportSamplesRead > 0 else { return "\(p.filesDone)/\(p.filesTotal) files" }
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int(Double(p.exportSamplesRead) / seconds) : 0
        return "\(formatCount(p.exportSamplesRead)) samples from the export, \(formatCount(rate))/s"
    }
}

/// A `tsdb compact` as plain values: made from ``Compact``'s parsed options, or by
/// ``QuickCompact`` without ArgumentParser.
struct CompactRequest: Equatable {
    var directory, store, codec: String?
    var zstdLevel: Int32?
    var threads, blockSize: Int?
    var rebuild = false
    var noWait = false
    var verbose = false

    func run() throws {
        if directory != nil && store != nil {
            throw ValidationError("give the folder either as an argument or with --store, not both")
        }
        let layout = try directory.map { try StoreLayout.locate($0) } ?? StoreOption.layout(store)
        var options = CompactionOptions()
        let layoutOptions = [
            codec.map { _ in "--codec" }, zstdLevel.map { _ in "--zstd-level" }, blockSize.map { _ in "--block-size" },
        ]
        .compactMap { $0 }
        if !rebuild, !layoutOptions.isEmpty, layout.hasStore {
            throw ValidationError(
                """
                \(layoutOptions.joined(separator: ", ")) would apply only to the segments this run rewrites; \
                add --rebuild to rewrite the whole store with them
                """)
        }
        if let codec {
            guard let c = BlockCodec.allCases.first(where: { $0.description == codec }) else {
                throw ValidationError("--codec must be zstd, lz4 or none")
            }
            options.codec = c
        }
        if let blockSize {
            guard (1...65_536).contains(blockSize) else { throw ValidationError("--block-size must be 1...65536") }
            options.blockSamples = blockSize
        }
        if let zstdLevel {
            guard options.codec == .zstd else { throw ValidationError("--zstd-level goes with --codec zstd") }
            guard (1...22).contains(zstdLevel) else { throw ValidationError("--zstd-level must be 1...22") }
            options.zstdLevel = zstdLevel
        }
        options.rebuild = rebuild
        options.waitForLock = !noWait
        options.onLockWait = { pid in
            printError("waiting for another compaction of this store\(pid.map { " (pid \($0))" } ?? "") to finish…")
        }
        if let threads {
            guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
            options.threads = threads
        }
        let report = try compact(layout, options)
        if report.isPartial { throw ExitCode(2) }
    }

    func compact(_ layout: StoreLayout, _ options: CompactionOptions) throws -> CompactionReport {
        var bar = ProgressBar("compacting")
        let start = ContinuousClock.now
        var options = options
        options.exportReader = ExportImport.exportReader  // the export kept by `tsdb import`, if any
        let report = try Compactor(layout: layout, options: options).run { p in
            bar.update(done: p.bytesDone, total: p.bytesTotal, detail: Self.progressDetail(p, since: start))
        }
        bar.finish()
        for r in report.repairs { printError("repaired: \(r)") }
        for e in report.skipped { printError("skipped: " + TSDBCommand.describe(e)) }
        if verbose {
            for w in report.warnings { printError("warning: \(w)") }
            for name in report.ignored { printError("ignored (not a day file): \(name)") }
        } else {
            if !report.warnings.isEmpty {
                printError(plural(report.warnings.count, "warning") + " (--verbose lists them)")
            }
            if !report.ignored.isEmpty {
                printError(
                    plural(report.ignored.count, "name") + " under raw/ ignored: not day files (--verbose lists them)")
            }
        }
        output(summary(report, layout))
        return report
    }
}

func summary(_ r: CompactionReport, _ layout: StoreLayout) -> String {
    let bytesPerSample = r.samplesStored > 0 ? Double(r.segmentBytes) / Double(r.samplesStored) : 0
    let memory =
        peakResidentMemory().map { "peak \(formatBytes($0)) resident (raw files being read included)" } ?? "n/a"
    let replaced = r.filesHoldReplacedSegments
    let counts = [
        plural(r.samplesStored, "sample"), plural(r.types, "type"),
        plural(r.segmentsTotal, "segment") + " in " + plural(r.files, "file"),
        formatBytes(r.segmentBytes) + (replaced ? " (\(formatBytes(r.fileBytes)) of files)" : ""),
        fixed(bytesPerSample, 2) + " bytes/sample",
    ]
    let store = joining(
        [
            "  store:     " + joining(counts, ", "),
            "  skipped:   " + plural(r.skipped.count, "file") + (r.skipped.isEmpty ? "" : " (see above)"),
            "  location:  \(layout.storeDirectory) (generation \(r.generation))",
            "  memory:    " + memory,
        ], "\n")
    let milliseconds = fixed(r.elapsedSeconds * 1000, 1)
    if r.upToDate {
        let export = r.exportsUnchanged > 0 ? " and the Apple Health export" : ""
        let dayFiles = plural(r.filesUnchanged - r.exportsUnchanged, "day file")
        return "up to date: \(dayFiles)\(export) unchanged (checked in \(milliseconds) ms)\n" + store
    }
    if !r.isFullRebuild {
        let touched = r.filesTouched > 0 ? ", \(r.filesTouched) touched (same content)" : ""
        let files =
            "\(plural(r.filesAdded, r.exportsRead > 0 ? "file" : "day file")) added, \(r.filesChanged) changed, "
            + "\(r.filesDeleted) deleted, "
            + "\(formatCount(r.filesUnchanged)) unchanged" + touched
            + (r.exportsRead > 0 ? "; the Apple Health export was read" : "")
        let months =
            "\(r.monthsRebuilt) rebuilt from raw files, \(r.monthsAppended) extended with new files; "
            + "\(plural(r.segmentsWritten, "segment")) written"
            + (r.blocksKept > 0 ? " (\(formatCount(r.blocksKept)) of their stored blocks kept as they were)" : "")
            + unchanged(r)
        return "updated in \(milliseconds) ms: \(files)\n  months:    \(months)\n" + store
    }
    let throughput = r.elapsedSeconds > 0 ? Double(r.bytesRead) / r.elapsedSeconds / 1e6 : 0
    let inputs =
        r.exportsRead == 0
        ? "\(plural(r.filesRead, "day file")) (\(formatBytes(r.bytesRead)) of JSON)"
        : "\(plural(r.filesRead - r.exportsRead, "day file")) and an Apple Health export "
            + "(\(formatBytes(r.bytesRead)) read)"
    // An export's bytes are compressed: its XML rate is what `tsdb import` reports.
    let rate = r.exportsRead == 0 ? " — \(fixed(throughput, 0)) MB/s" : ""
    let read = "compacted \(inputs) in \(fixed(r.elapsedSeconds, 2)) s" + rate
    let samples =
        "\(formatCount(r.samplesRead)) read, \(formatCount(r.duplicatesDropped)) identical repeats "
        + "(within or across day files) stored once"
    let segments =
        r.segmentsUnchanged > 0 ? "\n  segments:  \(formatCount(r.segmentsWritten)) written" + unchanged(r) : ""
    return read + "\n  samples:   " + samples + segments + "\n" + store
}

/// Segments a run made again byte for byte keep their files: said only when there are some.
private func unchanged(_ r: CompactionReport) -> String {
    r.segmentsUnchanged > 0 ? ", \(formatCount(r.segmentsUnchanged)) unchanged (same bytes, files kept)" : ""
}
