import ArgumentParser
import TSDB

@main
struct TSDBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tsdb",
        abstract: "A columnar time-series store for Apple Health day files.",
        discussion: """
        Compact raw day files (raw/YYYY/MM/YYYY-MM-DD.json) into per-type, per-month segments,
        then query them. The raw files are never modified; the store can be deleted and rebuilt.
        Start with `tsdb demo`.
        """,
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
