/// A command's arguments read by hand when they are plain: each option known and given once,
/// every value present and not starting with `-`. ArgumentParser builds its argument sets by
/// reflection and type-name demangling, which was a fifth of a short query's whole process and a
/// tenth of a one-day compaction's. Anything else (help, a mistake, `--tz -05:00`) returns nil
/// and goes ArgumentParser's way, so messages and edge cases stay its own; `QuickQueryTests`
/// checks both ways agree.
///
/// A command gives its options as names and one function that sets any of them: tables of
/// closures (a dictionary per command) made the runtime build their types' metadata from mangled
/// names on every run, 0.1 ms of a 3.5 ms query process.
enum PlainArguments {
    /// What `arguments` (after the subcommand's name) ask for, starting from `request`; nil when
    /// they are not plain. `set` sets option `name` (one of `valued`, with its value, or one of
    /// `flags`, with nil); `positional` takes a word that is not an option, false when the command
    /// has no place for it.
    static func parse<Request>(
        _ arguments: [String], into request: Request, valued: [String], flags: [String],
        set: (inout Request, _ name: String, _ value: String?) -> Void,
        positional: (inout Request, String) -> Bool
    ) -> Request? {
        var request = request
        var seen: [String] = []
        var i = 0
        while i < arguments.count {
            let word = arguments[i]
            i += 1
            guard word.hasPrefix("-") else {
                guard !word.isEmpty, positional(&request, word) else { return nil }
                continue
            }
            var (name, value) = (word, String?.none)
            if let equals = word.firstIndex(of: "=") {
                (name, value) = (String(word[..<equals]), String(word[word.index(after: equals)...]))
            }
            guard !seen.contains(name) else { return nil }
            seen.append(name)
            if flags.contains(name) {
                guard value == nil else { return nil }
                set(&request, name, nil)
            } else if valued.contains(name) {
                if value == nil, i < arguments.count {
                    value = arguments[i]
                    i += 1
                }
                guard let value, !value.isEmpty, !value.hasPrefix("-") else { return nil }
                set(&request, name, value)
            } else {
                return nil
            }
        }
        return request
    }
}

/// A plain `tsdb query`.
enum QuickQuery {
    static let valued = [
        "--range", "--bucket", "--stats", "--tz", "--week-start", "--assign", "--dedupe", "--priority", "--threads",
        "--source", "--format", "--store",
    ]
    static let flags = ["--fill", "--timings", "--verbose"]

    /// The query `arguments` (after `query`) ask for, or nil when they are not plain.
    static func parse(_ arguments: [String]) -> QueryRequest? {
        let request = PlainArguments.parse(
            arguments, into: QueryRequest(), valued: valued, flags: flags,
            set: { query, name, value in
                switch name {
                case "--range": query.range = value
                case "--bucket": query.bucket = value
                case "--stats": query.stats = value
                case "--tz": query.tz = value
                case "--week-start": query.weekStart = value
                case "--assign": query.assign = value
                case "--dedupe": query.dedupe = value
                case "--priority": query.priority = value
                case "--threads": query.threads = value
                case "--source": query.source = value
                case "--format": query.format = value!
                case "--store": query.store = value
                case "--fill": query.fill = true
                case "--timings": query.timings = true
                case "--verbose": query.verbose = true
                default: preconditionFailure("\(name) is listed but not set")
                }
            },
            positional: { query, word in
                guard query.type.isEmpty else { return false }
                query.type = word
                return true
            })
        return request.flatMap { $0.type.isEmpty ? nil : $0 }
    }
}

/// A plain `tsdb compact`: the folder, `--store`, `--threads` and the flags (layout options such as
/// `--codec` go ArgumentParser's way).
enum QuickCompact {
    static let valued = ["--store", "--threads"]
    static let flags = ["--rebuild", "--no-wait", "--verbose"]

    static func parse(_ arguments: [String]) -> CompactRequest? {
        // A count that is not a whole number is left to ArgumentParser, for its message.
        var wholeNumbers = true
        let request = PlainArguments.parse(
            arguments, into: CompactRequest(), valued: valued, flags: flags,
            set: { compact, name, value in
                switch name {
                case "--store": compact.store = value
                case "--threads":
                    compact.threads = value.flatMap { Int($0) }
                    wholeNumbers = wholeNumbers && compact.threads != nil
                case "--rebuild": compact.rebuild = true
                case "--no-wait": compact.noWait = true
                case "--verbose": compact.verbose = true
                default: preconditionFailure("\(name) is listed but not set")
                }
            },
            positional: { compact, word in
                guard compact.directory == nil else { return false }
                compact.directory = word
                return true
            })
        return wholeNumbers ? request : nil
    }
}

/// `tsdb types`, `stats` or `latest` as plain values: made from the command's parsed options, or
/// by ``QuickLookup`` without ArgumentParser (which was about three quarters of these commands'
/// instructions: 7.1 of `tsdb types`' 9.1 M, callgrind).
struct LookupRequest: Equatable {
    /// `latest`'s types (none: every stored type).
    var types: [String] = []
    var tz: String?
    /// `stats` and `latest`.
    var format = "table"
    var store: String?
}

/// A plain `tsdb types`, `stats` or `latest`: each takes `--tz` and `--store`; `stats` and `latest`
/// also `--format`, and `latest` type names.
enum QuickLookup {
    /// What `arguments` (after `command`, one of the three) ask for, or nil when they are not plain.
    static func parse(_ command: String, _ arguments: [String]) -> LookupRequest? {
        PlainArguments.parse(
            arguments, into: LookupRequest(),
            valued: command == "types" ? ["--tz", "--store"] : ["--tz", "--format", "--store"], flags: [],
            set: { request, name, value in
                switch name {
                case "--tz": request.tz = value
                case "--format": request.format = value!
                case "--store": request.store = value
                default: preconditionFailure("\(name) is listed but not set")
                }
            },
            positional: { request, word in
                guard command == "latest" else { return false }
                request.types.append(word)
                return true
            })
    }
}

/// A plain `tsdb sleep`, `workouts` or `report`: ``ReportOptions``' `--range`, `--tz`, `--format`,
/// `--store` and `--verbose`, with sleep's `--priority` and `--source`, workouts' `--with` and
/// `--route`, or report's `--period` and `--week-start`.
enum QuickReport {
    static let valued = ["--range", "--tz", "--format", "--store"]

    /// Sets one of ``ReportOptions``' options; false when `name` is not one.
    static func set(_ report: inout ReportRequest, _ name: String, _ value: String?) -> Bool {
        switch name {
        case "--range": report.range = value
        case "--tz": report.tz = value
        case "--format": report.format = value!
        case "--store": report.store = value
        case "--verbose": report.verbose = true
        default: return false
        }
        return true
    }

    /// What `arguments` ask of a command taking ``ReportOptions``' options and its own (`valued`,
    /// `flags`, given to `set`); nil when they are not plain.
    static func parse<Request: ReportOptionsRequest>(
        _ arguments: [String], valued: [String], flags: [String], set: (inout Request, String, String?) -> Void
    ) -> Request? {
        PlainArguments.parse(
            arguments, into: Request(), valued: Self.valued + valued, flags: flags,
            set: { request, name, value in
                if !Self.set(&request.report, name, value) { set(&request, name, value) }
            },
            positional: { _, _ in false })
    }

    static func sleep(_ arguments: [String]) -> SleepRequest? {
        parse(arguments, valued: ["--priority", "--source", "--threads"], flags: ["--verbose"]) { sleep, name, value in
            switch name {
            case "--priority": sleep.priority = value!
            case "--source": sleep.source = value
            case "--threads": sleep.threads = value
            default: preconditionFailure("\(name) is listed but not set")
            }
        }
    }

    static func workouts(_ arguments: [String]) -> WorkoutsRequest? {
        parse(arguments, valued: ["--with", "--route"], flags: ["--verbose"]) { workouts, name, value in
            switch name {
            case "--with": workouts.with = value
            case "--route": workouts.route = value
            default: preconditionFailure("\(name) is listed but not set")
            }
        }
    }

    static func report(_ arguments: [String]) -> PeriodReportRequest? {
        parse(arguments, valued: ["--period", "--week-start", "--threads"], flags: ["--verbose"]) {
            report, name, value in
            switch name {
            case "--period": report.period = value!
            case "--week-start": report.weekStart = value!
            case "--threads": report.threads = value
            default: preconditionFailure("\(name) is listed but not set")
            }
        }
    }
}

/// A request of a command that takes ``ReportOptions``' options, as ``ReportRequest``, beside its own.
protocol ReportOptionsRequest: Equatable {
    init()
    var report: ReportRequest { get set }
}

extension SleepRequest: ReportOptionsRequest {}
extension WorkoutsRequest: ReportOptionsRequest {}
extension PeriodReportRequest: ReportOptionsRequest {}
extension SummaryRequest: ReportOptionsRequest {}

/// A plain `tsdb summary`: ``ReportRequest``'s `--range`, `--tz`, `--format` and `--store` (not
/// `--verbose`), with `--out`, `--pattern` and `--force`.
enum QuickSummary {
    static func parse(_ arguments: [String]) -> SummaryRequest? {
        QuickReport.parse(arguments, valued: ["--out", "--pattern", "--threads"], flags: ["--force"]) {
            summary, name, value in
            switch name {
            case "--out": summary.out = value
            case "--pattern": summary.pattern = value
            case "--threads": summary.threads = value
            case "--force": summary.force = true
            default: preconditionFailure("\(name) is listed but not set")
            }
        }
    }
}
