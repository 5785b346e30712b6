import TSDB

/// A failed request: the status, what was wrong, and the query parameter at fault.
struct APIError: Error {
    var status: Int
    var message: String
    var parameter: String?

    static func bad(_ parameter: String, _ message: String) -> APIError {
        APIError(status: 400, message: message, parameter: parameter)
    }

    var json: JSONText {
        .object([("error", .string(message))] + (parameter.map { [("parameter", JSONText.string($0))] } ?? []))
    }
}

/// A request's query parameters, read with the CLI's own parsers; each failure names its parameter.
struct APIRequest {
    let path: String
    let parameters: [String: String]
    let store: Store
    let defaultZone: TimeZoneRules

    func string(_ name: String) -> String? { parameters[name].flatMap { $0.isEmpty ? nil : $0 } }

    func type() throws(APIError) -> String {
        guard let name = string("type") else { throw .bad("type", "missing: name a sample type, e.g. HeartRate") }
        do {
            return try TypeNames.resolve(name, among: store.typeNames)
        } catch {
            throw .bad("type", error.message)
        }
    }

    func zone() throws(APIError) -> TimeZoneRules {
        guard let tz = string("tz") else { return defaultZone }
        do { return try TimeZoneRules.named(tz) } catch { throw .bad("tz", error.message) }
    }

    /// `range` as in the CLI (`2025-03`, `A..B`), or `from`/`to` instants (ISO 8601 or µs since
    /// the epoch, the form the dashboard sends while zooming).
    func range(_ zone: TimeZoneRules) throws(APIError) -> TimeRange {
        if let text = string("range") {
            do { return try TimeRange.parse(text, zone: zone) } catch { throw .bad("range", error.message) }
        }
        func instant(_ name: String) throws(APIError) -> Int64? {
            guard let text = string(name) else { return nil }
            if let micros = Int64(text) { return micros }
            guard let t = Timestamp(text) else {
                throw .bad(
                    name, "expected an instant such as 2025-03-01T08:00:00+01:00 or µs since 1970, found \"\(text)\"")
            }
            return t.microseconds
        }
        let r = TimeRange(from: try instant("from"), to: try instant("to"))
        if let a = r.from, let b = r.to, b <= a { throw .bad("to", "must be after from") }
        return r
    }

    func bucket() throws(APIError) -> BucketSpec? {
        guard let text = string("bucket") else { return nil }
        do { return try BucketSpec.parse(text) } catch { throw .bad("bucket", error.message) }
    }

    func integer(_ name: String, default value: Int, in limits: ClosedRange<Int>) throws(APIError) -> Int {
        guard let text = string(name) else { return value }
        guard let n = Int(text), limits.contains(n) else {
            throw .bad(
                name, "expected a whole number from \(limits.lowerBound) to \(limits.upperBound), found \"\(text)\"")
        }
        return n
    }

    func statistics() throws(APIError) -> [Statistic]? {
        guard let text = string("stats") else { return nil }
        do { return try Statistic.parseList(text) } catch { throw .bad("stats", error.message) }
    }

    /// Aggregate options as `tsdb query` builds them.
    func aggregateOptions(_ zone: TimeZoneRules) throws(APIError) -> AggregateOptions {
        var o = AggregateOptions()
        o.zone = zone
        o.bucket = try bucket() ?? .none
        o.statistics = try statistics()
        o.source = string("source")
        return o
    }
}

/// Query strings: `a=1&b=x%20y` → `["a": "1", "b": "x y"]` (`+` is a space, as forms send it).
func parseQuery(_ query: String) -> [String: String] {
    var out: [String: String] = [:]
    for pair in query.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard let key = parts.first.map({ percentDecoded(String($0)) }) else { continue }
        out[key] = parts.count > 1 ? percentDecoded(String(parts[1])) : ""
    }
    return out
}

func percentDecoded(_ s: String) -> String {
    var bytes: [UInt8] = []
    var u = Array(s.utf8)[...]
    while let c = u.popFirst() {
        if c == UInt8(ascii: "+") {
            bytes.append(0x20)
        } else if c == UInt8(ascii: "%"), u.count >= 2,
            let v = UInt8(String(decoding: u.prefix(2), as: UTF8.self), radix: 16)
        {
            bytes.append(v)
            u = u.dropFirst(2)
        } else {
            bytes.append(c)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
