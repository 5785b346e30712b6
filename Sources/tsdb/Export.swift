import ArgumentParser
import TSDB
import TSDBParquet

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write samples back out: as day files (the raw layout), Parquet, NDJSON or CSV.",
        discussion:
            "With --out DIR, writes DIR/YYYY/MM/YYYY-MM-DD.json day files (never into the raw folder); with "
            + "--format parquet --out DIR, Hive-partitioned Parquet for DuckDB, Spark or pyarrow: "
            + "DIR/[person=ID/]type=<Type>/year=YYYY/month=MM/part-0.parquet plus DIR/[person=ID/]workouts/…; "
            + "running it again rewrites only the months that changed. Without --out, streams NDJSON, CSV or JSON "
            + "to stdout."
    )

    @Option(help: "Only this type (default: all).")
    var type: String?

    @Option(help: "Time range, as for `tsdb query` (a date as the end is included). Default: everything.")
    var range: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "Output folder for day files.")
    var out: String?

    @Option(
        help: "ndjson (default), csv or json to stdout; parquet into --out DIR. Day files (--out alone) are JSON.")
    var format: String?

    @Option(help: "With --format parquet: a person=ID partition level, to pool many people's stores in one folder.")
    var person: String?

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        let store = try storeOption.open()
        let all = store.types.map(\.type)
        let types = try type.map { [try TypeNames.resolve($0, among: all)] } ?? all
        let r = try ZoneOption.range(range, in: zoneOption.rules())
        if format == "parquet" {
            guard let out else {
                throw ValidationError("--format parquet writes files: give the folder with --out DIR")
            }
            try exportParquet(store, types: type == nil ? nil : types, range: r, to: out)
            return
        }
        if person != nil { throw ValidationError("--person applies to --format parquet only") }
        if out != nil, let format {
            throw ValidationError(
                "--format \(format) does not apply with --out alone, which writes day files (JSON); "
                    + "use --format parquet for Parquet")
        }
        if let out {
            let (files, samples) = try store.exportDayFiles(
                to: out, types: types, from: r.from ?? .min, to: r.to ?? .max)
            printError("exported \(formatCount(samples)) samples into \(formatCount(files)) day files under \(out)")
            return
        }
        guard let f = OutputFormat(rawValue: format ?? "ndjson"), f != .table else {
            throw ValidationError("--format must be ndjson, csv, json or parquet")
        }
        var text = SampleTextWriter(format: f)
        for t in types.sorted() {
            try store.writeSamples(of: t, from: r.from ?? .min, to: r.to ?? .max, format: text.engineFormat) {
                text.write($0)
            }
        }
        text.finish()
    }

    func exportParquet(_ store: Store, types: [String]?, range: TimeRange, to out: String) throws {
        var options = ParquetExportOptions()
        options.types = types
        options.from = range.from ?? .min
        options.to = range.to ?? .max
        options.person = person
        options.createdBy = "tsdb version \(TSDBCommand.version)"
        var bar = ProgressBar("exporting")
        let report = try ParquetExport.run(store, to: out, options: options) { bar.update(done: $0, total: $1) }
        bar.finish()
        var parts = [
            "wrote \(plural(report.written, "Parquet file")) (\(formatCount(report.samples)) samples, "
                + "\(formatBytes(report.bytes)))"
        ]
        if report.unchanged > 0 { parts.append("\(formatCount(report.unchanged)) unchanged") }
        if report.removed > 0 { parts.append("removed \(formatCount(report.removed)) whose month left the store") }
        printError(parts.joined(separator: ", ") + " under \(report.root)")
    }
}
