import ArgumentParser
import TSDB

struct Latest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latest",
        abstract: "The most recent sample of each type: value, unit, local time, source.",
        discussion: "Without TYPE, every stored type. Answered from the store's index: one block per type is decoded.")

    @Argument(help: "Sample types, e.g. HeartRate BodyMass (default: all stored types).")
    var types: [String] = []

    @OptionGroup var zoneOption: ZoneOption

    @Option(help: "Output: table, csv, json, ndjson or markdown.")
    var format: String = "table"

    @OptionGroup var storeOption: StoreOption

    var request: LookupRequest {
        LookupRequest(types: types, tz: zoneOption.tz, format: format, store: storeOption.store)
    }

    func run() throws { try Self.run(request) }

    static func run(_ request: LookupRequest) throws {
        let store = try StoreOption.open(request.store)
        let zone = try ZoneOption.rules(request.tz)
        let f = try AggregateFormat.parse(request.format)
        let types = request.types
        let stored = store.types.map(\.type)
        if stored.isEmpty { printError("the store holds no samples yet") }
        let wanted =
            try types.isEmpty
            ? stored.sorted { TypeNames.shortName($0) < TypeNames.shortName($1) }
            : types.map { try TypeNames.resolve($0, among: stored) }
        var rows: [[String]] = []
        for type in wanted {
            guard let s = try store.latest(of: type) else { continue }
            rows.append([
                TypeNames.shortName(type), store.catalog.describeValue(of: s), s.unit.string ?? "",
                localTimestamp(s.start.microseconds, zone),
                [s.source.string, s.device.string].compactMap { $0 }.joined(separator: " / "),
            ])
        }
        printRows(["type", "value", "unit", "time", "source"], rows, format: f)
    }
}
