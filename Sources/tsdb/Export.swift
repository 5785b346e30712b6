import ArgumentParser
import TSDB

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write samples back out: as day files (the raw layout), NDJSON or CSV.",
        discussion:
            "With --out DIR, writes DIR/YYYY/MM/YYYY-MM-DD.json day files (never into the raw folder). Without it, "
            + "streams NDJSON or CSV to stdout."
    )

    @Option(help: "Only this type (default: all).")
    var type: String?

    @Option(help: "Time range, as for `tsdb query` (a date as the end is included). Default: everything.")
    var range: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "Output folder for day files.")
    var out: String?

    @Option(help: "Output to stdout: ndjson (default), csv or json. Not with --out, which writes JSON day files.")
    var format: String?

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        let store = try storeOption.open()
        let all = store.types.map(\.type)
        let types = try type.map { [try TypeNames.resolve($0, among: all)] } ?? all
        let r = try ZoneOption.range(range, in: zoneOption.rules())
        if out != nil, let format {
            throw ValidationError(
                "--format \(format) does not apply with --out, which writes day files (JSON); leave one out")
        }
        if let out {
            let (files, samples) = try store.exportDayFiles(
                to: out, types: types, from: r.from ?? .min, to: r.to ?? .max)
            printError("exported \(formatCount(samples)) samples into \(formatCount(files)) day files under \(out)")
            return
        }
        guard let f = OutputFormat(rawValue: format ?? "ndjson"), f != .table else {
            throw ValidationError("--format must be ndjson, csv or json")
        }
        if f == .csv || f == .ndjson {
            let out = OutputBuffer()
            if f == .csv { out.write(DayFileWriter.csvHeader) }
            for t in types.sorted() {
                try store.writeSamples(
                    of: t, from: r.from ?? .min, to: r.to ?? .max, format: f == .csv ? .csv : .ndjson
                ) { out.write(bytes: $0) }
            }
            out.flush()
            return
        }
        var writer = SampleWriter(format: f)
        for t in types.sorted() {
            var cursor = try store.samples(of: t, from: r.from ?? .min, to: r.to ?? .max)
            while let s = try cursor.next() { writer.write(s) }
        }
        writer.finish()
    }
}
