import ArgumentParser
import TSDB

@main
struct TSDBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tsdb",
        abstract: "A columnar time-series store for Apple Health day files.",
        discussion: "Compacts Apple Health day files (raw/YYYY/MM/YYYY-MM-DD.json) into per-type, per-month columnar segments beside them, and answers queries and aggregates from those. The raw files are never modified; the store can be deleted and rebuilt at any time. Start with `tsdb demo`.",
        subcommands: [Demo.self, Compact.self, Query.self, SleepCommand.self, Workouts.self, Types.self, Stats.self, Export.self, Verify.self, Generate.self]
    )
}

/// `--store`, then `$TSDB_STORE`, then the current folder.
struct StoreOption: ParsableArguments {
    @Option(name: .long, help: "The store: the folder holding raw/, a life-db imports/ root, or the tsdb/ folder. Default: $TSDB_STORE, then the current folder.")
    var store: String?

    func open() throws -> Store {
        let path = store ?? environment("TSDB_STORE") ?? "."
        return try Store(at: path)
    }
}

/// `--tz`, and ranges read in that zone.
struct ZoneOption: ParsableArguments {
    @Option(help: "IANA time zone for ranges, buckets and printed times, e.g. Europe/Paris (default: $TZ, then the system zone).")
    var tz: String?

    func rules() throws -> TimeZoneRules {
        try tz.map { try TimeZoneRules.named($0) } ?? TimeZoneRules.system(environment: environment("TZ"))
    }

    /// Parses a `--range` value with its calendar dates in `zone`.
    static func range(_ text: String?, in zone: TimeZoneRules) throws -> TimeRange {
        guard let text else { return TimeRange(from: nil, to: nil) }
        return try TimeRange.parse(text) { local in Int(zone.offset(atUTC: zone.utc(fromLocal: local / 1_000_000))) / 60 }
    }
}
