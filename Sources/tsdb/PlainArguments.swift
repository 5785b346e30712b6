/// A command's arguments read by hand when they are plain: each option known and given once,
/// every value present and not starting with `-`. ArgumentParser builds its argument sets by
/// reflection and type-name demangling, which was a fifth of a short query's whole process and a
/// tenth of a one-day compaction's. Anything else (help, a mistake, `--tz -05:00`) returns nil
/// and goes ArgumentParser's way, so messages and edge cases stay its own; `QuickQueryTests`
/// checks both ways agree.
struct PlainArguments<Request> {
    /// Options taking a value, and how each sets it.
    var valued: [String: @Sendable (inout Request, String) -> Void]
    var flags: [String: @Sendable (inout Request) -> Void]
    /// Takes a word that is not an option; false when the command has no place for it.
    var positional: @Sendable (inout Request, String) -> Bool

    /// What `arguments` (after the subcommand's name) ask for, starting from `request`; nil when
    /// they are not plain.
    func parse(_ arguments: [String], into request: Request) -> Request? {
        var request = request
        var seen: Set<String> = []
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
            guard seen.insert(name).inserted else { return nil }
            if let set = flags[name] {
                guard value == nil else { return nil }
                set(&request)
            } else if let set = valued[name] {
                if value == nil, i < arguments.count {
                    value = arguments[i]
                    i += 1
                }
                guard let value, !value.isEmpty, !value.hasPrefix("-") else { return nil }
                set(&request, value)
            } else {
                return nil
            }
        }
        return request
    }
}

/// A plain `tsdb query`.
enum QuickQuery {
    static let reader = PlainArguments<QueryRequest>(
        valued: [
            "--range": { $0.range = $1 }, "--bucket": { $0.bucket = $1 }, "--stats": { $0.stats = $1 },
            "--tz": { $0.tz = $1 }, "--week-start": { $0.weekStart = $1 }, "--assign": { $0.assign = $1 },
            "--dedupe": { $0.dedupe = $1 }, "--priority": { $0.priority = $1 }, "--source": { $0.source = $1 },
            "--format": { $0.format = $1 }, "--store": { $0.store = $1 },
        ],
        flags: ["--fill": { $0.fill = true }, "--timings": { $0.timings = true }, "--verbose": { $0.verbose = true }],
        positional: { query, word in
            guard query.type.isEmpty else { return false }
            query.type = word
            return true
        })

    /// The query `arguments` (after `query`) ask for, or nil when they are not plain.
    static func parse(_ arguments: [String]) -> QueryRequest? {
        reader.parse(arguments, into: QueryRequest()).flatMap { $0.type.isEmpty ? nil : $0 }
    }
}

/// A plain `tsdb compact`: the folder, `--store` and the flags (layout options such as `--codec`
/// go ArgumentParser's way).
enum QuickCompact {
    static let reader = PlainArguments<CompactRequest>(
        valued: ["--store": { $0.store = $1 }],
        flags: [
            "--rebuild": { $0.rebuild = true }, "--no-wait": { $0.noWait = true }, "--verbose": { $0.verbose = true },
        ],
        positional: { compact, word in
            guard compact.directory == nil else { return false }
            compact.directory = word
            return true
        })

    static func parse(_ arguments: [String]) -> CompactRequest? { reader.parse(arguments, into: CompactRequest()) }
}
