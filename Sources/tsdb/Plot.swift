import ArgumentParser
import TSDB
import TSDBCharts

struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a type as a chart: SVG, or PNG (with librsvg).",
        discussion:
            "The chart fits the type: heart rate and other discrete types as a min-max band with the mean line "
            + "(points with a trend line when samples are few), steps and other cumulative types as bars of the "
            + "de-duplicated sum, sleep as stages stacked per night, workouts on a day-by-time calendar. Times and "
            + "days are local to --tz (DST days have 23 or 25 hours). Without --out, writes the SVG to stdout. "
            + "An existing --out file is replaced only if tsdb plot wrote it.")

    @Argument(help: "Sample type, e.g. HeartRate, Steps, SleepAnalysis, Workout.")
    var type: String

    @Option(help: "Time range, as for `tsdb query` (default: all of the type's samples).")
    var range: String?

    @Option(help: "Bucket size, as for `tsdb query --bucket` (default: one that fits the range).")
    var bucket: String?

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "Only samples whose source or device contains this text.")
    var source: String?

    @Flag(help: "Cumulative types: stack each source's own sum, with the de-duplicated total marked.")
    var bySource = false

    @Option(help: "Output file, .svg or .png.")
    var out: String?

    @Option(help: "auto (light, dark where the viewer prefers it), light or dark.")
    var theme: String = "auto"

    @Option(help: "Width in CSS pixels.")
    var width: Double = 960

    @Option(help: "Height in CSS pixels.")
    var height: Double = 400

    @OptionGroup var storeOption: StoreOption

    func validate() throws {
        guard Chart.Theme(rawValue: theme) != nil else { throw ValidationError("--theme must be auto, light or dark") }
        guard (200...8000).contains(width), (120...8000).contains(height) else {
            throw ValidationError("--width must be 200-8000 and --height 120-8000")
        }
        if let out, !(out.hasSuffix(".svg") || out.hasSuffix(".png")) {
            throw ValidationError("--out must name a .svg or .png file")
        }
    }

    func run() throws {
        let store = try storeOption.open()
        let zone = try zoneOption.rules()
        let resolved = try TypeNames.resolve(type, among: store.typeNames)
        let r = try ZoneOption.range(range, in: zone)
        var chart = try ChartBuilder.chart(
            store, type: resolved, from: r.from, to: r.to, bucket: try bucket.map { try BucketSpec.parse($0) },
            zone: zone, source: source, bySource: bySource)
        chart.width = width
        chart.height = height
        chart.theme = Chart.Theme(rawValue: theme) ?? .auto
        if chart.isEmpty { printError("no \(TypeNames.shortName(resolved)) samples in this range: the chart is empty") }
        let svg = chart.svg()
        guard let out else {
            output(svg, terminator: "")
            return
        }
        // PNG through `tsdb-png`, which loads librsvg: a fully static tsdb cannot (SiblingProgram).
        let bytes =
            out.hasSuffix(".png")
            ? try SiblingProgram.filter("tsdb-png", [String(width), String(height)], input: Array(svg.utf8))
            : Array(svg.utf8)
        try ChartFile.write(bytes, to: out)
        printError("wrote \(out) (\(formatBytes(bytes.count)))")
    }
}
