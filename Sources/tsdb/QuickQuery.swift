/// `tsdb query` arguments read by hand when they are plain: each option known and given once,
/// every value present and not starting with `-`. ArgumentParser builds its argument sets by
/// reflection and type-name demangling, which was a fifth of a short query's whole process.
/// Anything else (help, a mistake, `--tz -05:00`) returns nil and goes ArgumentParser's way, so
/// messages and edge cases stay its own; `QuickQueryTests` checks both ways agree.
enum QuickQuery {
    /// Options taking a value, and how each sets it.
    static let valued: [String: @Sendable (inout QueryRequest, String) -> Void] = [
        "--range": { $0.range = $1 }, "--bucket": { $0.bucket = $1 }, "--stats": { $0.stats = $1 },
        "--tz": { $0.tz = $1 }, "--week-start": { $0.weekStart = $1 }, "--assign": { $0.assign = $1 },
        "--dedupe": { $0.dedupe = $1 }, "--priority": { $0.priority = $1 }, "--source": { $0.source = $1 },
        "--format": { $0.format = $1 }, "--store": { $0.store = $1 },
    ]
    static let flags: [String: @Sendable (inout QueryRequest) -> Void] = [
        "--fill": { $0.fill = true }, "--timings": { $0.timings = true }, "--verbose": { $0.verbose = true },
    ]

    /// The query `arguments` (after `query`) ask for, or nil when they are not plain.
    static func parse(_ arguments: [String]) -> QueryRequest? {
        var query = QueryRequest()
        var type: String?
        var seen: Set<String> = []
        var i = 0
        while i < arguments.count {
            let word = arguments[i]
            i += 1
            guard word.hasPrefix("-") else {
                guard type == nil, !word.isEmpty else { return nil }
                type = word
                continue
            }
            var (name, value) = (word, String?.none)
            if let equals = word.firstIndex(of: "=") {
                (name, value) = (String(word[..<equals]), String(word[word.index(after: equals)...]))
            }
            guard seen.insert(name).inserted else { return nil }
            if let set = flags[name] {
                guard value == nil else { return nil }
                set(&query)
            } else if let set = valued[name] {
                if value == nil, i < arguments.count {
                    value = arguments[i]
                    i += 1
                }
                guard let value, !value.isEmpty, !value.hasPrefix("-") else { return nil }
                set(&query, value)
            } else {
                return nil
            }
        }
        guard let type else { return nil }
        query.type = type
        return query
    }
}
