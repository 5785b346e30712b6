import ArgumentParser
import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@main
struct TSDBCommand: ParsableCommand {
    static let version = "0.5.0"

    static let configuration = CommandConfiguration(
        commandName: "tsdb",
        abstract: "A columnar time-series store for Apple Health day files.",
        discussion: """
            Compacts Apple Health day files (raw/YYYY/MM/YYYY-MM-DD.json, as written by a day-file \
            exporter app) into per-type, per-month columnar segments beside them, and answers queries \
            and aggregates from those. The raw files are never modified; the store can be deleted and \
            rebuilt at any time. Start with `tsdb demo`.
            """,
        version: version,
        subcommands: [
            Demo.self, Compact.self, Query.self, SleepCommand.self, Workouts.self, Summary.self, Report.self,
            Latest.self, Types.self, Stats.self, Plot.self, Serve.self, Import.self, Export.self, Verify.self,
            Generate.self,
        ]
    )

    /// Runs a command like ArgumentParser's `main`, plus: a failed write to stdout is an error, a
    /// mistyped subcommand gets a suggestion, and a usage error shows that subcommand's usage.
    static func main() {
        StandardOutput.prepare()
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Answered by hand: ArgumentParser would build every command's argument sets first (about
        // 40% of that process) and print through stdio, which ignores a failed write.
        if arguments == ["--version"] { finish(Self.self) { output(version) } }
        // A plain `tsdb query` or `tsdb compact` runs without ArgumentParser (``PlainArguments``).
        if arguments.first == "query", let request = QuickQuery.parse(Array(arguments.dropFirst())) {
            finish(Query.self) { try request.run() }
        }
        if arguments.first == "compact", let request = QuickCompact.parse(Array(arguments.dropFirst())) {
            finish(Compact.self) { try request.run() }
        }
        // And a plain `tsdb sleep`, `workouts`, `report`, `summary`, `types`, `stats` or `latest`.
        if arguments.first == "sleep", let request = QuickReport.sleep(Array(arguments.dropFirst())) {
            finish(SleepCommand.self) { try SleepCommand.run(request) }
        }
        if arguments.first == "workouts", let request = QuickReport.workouts(Array(arguments.dropFirst())) {
            finish(Workouts.self) { try Workouts.run(request) }
        }
        if arguments.first == "report", let request = QuickReport.report(Array(arguments.dropFirst())) {
            finish(Report.self) { try Report.run(request) }
        }
        if arguments.first == "summary", let request = QuickSummary.parse(Array(arguments.dropFirst())) {
            finish(Summary.self) { try Summary.run(request) }
        }
        if let name = arguments.first, ["types", "stats", "latest"].contains(name),
            let request = QuickLookup.parse(name, Array(arguments.dropFirst()))
        {
            switch name {
            case "types": finish(Types.self) { try Types.run(request) }
            case "stats": finish(Stats.self) { try Stats.run(request) }
            default: finish(Latest.self) { try Latest.run(request) }
            }
        }
        let command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            // Only once parsing failed: naming the subcommands costs runtime metadata lookups.
            if let first = arguments.first, let hint = unknownSubcommandHint(first) {
                printError("Error: \(hint)\n" + usage(of: Self.self))
                Glibc.exit(64)
            }
            exit(withError: error)
        }
        var running = command
        finish(type(of: command)) { try running.run() }
    }

    /// Runs `body` (a command of type `command`) and exits with its outcome: output flushed, each
    /// kind of error reported its own way.
    static func finish(_ command: ParsableCommand.Type, _ body: () throws -> Void) -> Never {
        do {
            try body()
            StandardOutput.flush()
            Glibc.exit(0)
        } catch let code as ExitCode {
            StandardOutput.flush()
            Glibc.exit(code.rawValue)
        } catch let problem as ValidationError {
            StandardOutput.flush()
            printError("Error: \(problem.message)\n" + usage(of: command))
            Glibc.exit(64)
        } catch let error as TSDBError {
            StandardOutput.flush()
            printError("Error: " + describe(error) + advice(for: error))
            Glibc.exit(1)
        } catch {
            StandardOutput.flush()
            exit(withError: error)
        }
    }

    static func unknownSubcommandHint(_ word: String) -> String? {
        guard !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(word) else { return nil }
        let close = TypeNames.closest(to: word, among: names)
        return "unknown command '\(word)'" + (close.isEmpty ? "" : "; did you mean \(close.joined(separator: " or "))?")
    }

    static func usage(of command: ParsableCommand.Type) -> String {
        let name = command == Self.self ? "tsdb" : "tsdb " + command._commandName
        return "Usage: " + usageString(for: command) + "\n  See '\(name) --help' for more information."
    }

    /// An engine error for people: where, then what (the kind is for programs).
    static func describe(_ error: TSDBError) -> String {
        var place = error.path ?? ""
        if let line = error.line { place += place.isEmpty ? "line \(line)" : ":\(line)" }
        if let offset = error.offset { place += place.isEmpty ? "offset \(offset)" : " (offset \(offset))" }
        return place.isEmpty ? error.message : place + ": " + error.message
    }

    /// What to do about an error the engine reported.
    static func advice(for error: TSDBError) -> String {
        switch error.kind {
        case .corruption:
            return "\n  The store is damaged: `tsdb compact` rebuilds the damaged months from the raw files "
                + "(`tsdb verify` lists them; `tsdb compact --rebuild` rebuilds everything)."
        case .notFound where error.path?.hasSuffix("/tsdb/MANIFEST") == true:
            let folder = String(error.path!.dropLast("/tsdb/MANIFEST".count))
            return "\n  To create it, run `tsdb compact \(folder)` first."
        case .unsupportedVersion:
            return "\n  The store was written by another version of tsdb: `tsdb compact --rebuild` rebuilds it."
        default:
            return ""
        }
    }
}

/// A `--week-start` day name as ISO numbering (1 = Monday … 7 = Sunday).
func isoWeekday(_ name: String) throws -> Int {
    let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    guard let i = days.firstIndex(of: name.lowercased()) else {
        throw ValidationError("--week-start must be a day name, e.g. monday")
    }
    return i + 1
}

/// `--store`, then `$TSDB_STORE`, then the current folder.
struct StoreOption: ParsableArguments {
    @Option(
        help: """
            The store: the folder holding raw/, a life-db imports/ root, or the tsdb/ folder. \
            Default: $TSDB_STORE, then the current folder.
            """)
    var store: String?

    var path: String { Self.path(store) }

    func layout() throws -> StoreLayout { try Self.layout(store) }

    static func layout(_ store: String?) throws -> StoreLayout { try StoreLayout.locate(path(store)) }

    func open() throws -> Store { try Self.open(store) }

    static func path(_ store: String?) -> String { store ?? environment("TSDB_STORE") ?? "." }

    /// Opens the store for the rest of the process: its segments are unmapped and its tables freed by
    /// the exit, all at once, rather than one by one before it (clang's `-disable-free` makes the
    /// same choice).
    static func open(_ store: String?) throws -> Store {
        let opened = try Store(layout: StoreLayout.locate(path(store)))
        openUntilExit.withLock { $0.append(opened) }
        return opened
    }

    private static let openUntilExit = Locked<[Store]>([])
}

/// `--threads`, shared by the commands that aggregate (`query`, `sleep`, `report`, `summary`);
/// kept as given and checked with their other options.
struct ThreadsOption: ParsableArguments {
    @Option(help: "Threads: 1 keeps the work on one core; more (the default, one per core) let a long range use two.")
    var threads: String?

    /// `given` as a thread count: nil when not given, else a whole number from 1 up, or a usage
    /// error quoting what was given.
    static func count(_ given: String?) throws -> Int? {
        guard let given else { return nil }
        guard let count = Int(given), count >= 1 else {
            throw ValidationError("--threads must be a whole number, at least 1; found \"\(given)\"")
        }
        return count
    }
}

/// `--tz`, and ranges read in that zone.
struct ZoneOption: ParsableArguments {
    @Option(
        help: """
            IANA time zone for ranges, buckets and printed times, e.g. Europe/Paris \
            (default: $TZ, then the system zone).
            """)
    var tz: String?

    func rules() throws -> TimeZoneRules { try Self.rules(tz) }

    static func rules(_ tz: String?) throws -> TimeZoneRules {
        if let tz { return try TimeZoneRules.named(tz) }
        let (zone, problem) = TimeZoneRules.system(environment: environment("TZ"))
        if let problem { printError("warning: \(problem)") }
        return zone
    }

    /// Parses a `--range` value with its calendar dates in `zone`.
    static func range(_ text: String?, in zone: TimeZoneRules) throws -> TimeRange {
        guard let text else { return TimeRange(from: nil, to: nil) }
        return try TimeRange.parse(text, zone: zone)
    }
}
