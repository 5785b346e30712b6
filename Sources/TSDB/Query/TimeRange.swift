/// A half-open interval of instants `[from, to)`, µs since the epoch; nil bounds are open.
public struct TimeRange: Sendable, Equatable, CustomStringConvertible {
    public var from: Int64?
    public var to: Int64?

    public init(from: Int64?, to: Int64?) {
        self.from = from
        self.to = to
    }

    /// The bounds as instants in `zone` (open bounds shown as "…").
    public func description(in zone: TimeZoneRules) -> String {
        func show(_ t: Int64?) -> String { t.map { localTimestamp($0, zone) } ?? "…" }
        return "[\(show(from)), \(show(to))) in \(zone.identifier)"
    }

    public var description: String {
        "[\(from.map { ISO8601.format($0, .zulu) } ?? "-∞"), \(to.map { ISO8601.format($0, .zulu) } ?? "+∞"))"
    }

    /// Parses `2025`, `2025-03`, `2025-03-01`, `2025-03-01T08:00[:SS][Z|±HH:MM]`, and `A..B`
    /// ranges of those (either side may be empty). Calendar values and wall-clock times without an
    /// offset are local to `zone`.
    ///
    /// A calendar-named end is inclusive: `2025-01..2025-03` is January through March and
    /// `2025-03-01..2025-03-07` seven days. An instant as the end is exclusive.
    public static func parse(_ text: String, zone: TimeZoneRules = .utc) throws(TSDBError) -> TimeRange {
        let t = text.trimmingSpaces
        if let (before, after) = halves(t) {
            let a = String(before)
            let b = String(after)
            let from = a.isEmpty ? nil : try point(a, zone: zone, text: text).start
            let end = b.isEmpty ? nil : try point(b, zone: zone, text: text)
            let to = end?.exclusiveEnd
            // A date as the end ending where the range starts names a period wholly before it
            // (`2025..2024`): reversed, where two equal instants are an empty half-open range.
            if let from, let end, let to, to < from || (to == from && end.end != nil) {
                throw TSDBError.invalidInput("range \"\(text)\" ends before it starts")
            }
            return TimeRange(from: from, to: to)
        }
        let p = try point(t, zone: zone, text: text)
        guard let end = p.end else {
            throw TSDBError.invalidInput(
                "\"\(text)\" is an instant, not a range; write \(t)..<end> or a date such as 2025-03")
        }
        return TimeRange(from: p.start, to: end)
    }

    /// `t` cut at its first `..`, if it has one. By hand: `split(separator: "..")` goes through the
    /// string-processing library's generic searchers, whose type metadata a whole `tsdb query`
    /// process paid about 0.1 ms to instantiate.
    private static func halves(_ t: String) -> (Substring, Substring)? {
        let u = t.utf8
        var i = u.startIndex
        while i < u.endIndex {
            let next = u.index(after: i)
            if next < u.endIndex && u[i] == UInt8(ascii: ".") && u[next] == UInt8(ascii: ".") {
                return (t[..<i], t[u.index(after: next)...])
            }
            i = next
        }
        return nil
    }

    /// An instant (end nil) or a calendar period.
    private static func point(_ s: String, zone: TimeZoneRules, text: String) throws(TSDBError) -> Point {
        let u = Array(s.utf8)
        func bad() -> TSDBError {
            TSDBError.invalidInput(
                "cannot read \"\(s)\" in range \"\(text)\"; expected 2025, 2025-03, 2025-03-01, "
                    + "2025-03-01T08:00[+01:00] or A..B"
            )
        }
        func num(_ r: Range<Int>) throws(TSDBError) -> Int {
            guard r.upperBound <= u.count else { throw bad() }
            var v = 0
            for i in r {
                guard u[i] >= 48 && u[i] <= 57 else { throw bad() }
                v = v * 10 + Int(u[i] - 48)
            }
            return v
        }
        func local(_ y: Int, _ m: Int, _ d: Int, _ seconds: Int = 0) -> Int64 {
            zone.utc(fromLocal: ISO8601.days(year: y, month: m, day: d) * 86_400 + Int64(seconds)) * 1_000_000
        }
        func day(_ y: Int, _ m: Int, _ d: Int) -> Int64 { zone.startOfDay(ISO8601.days(year: y, month: m, day: d)) }
        switch u.count {
        case 4:
            let y = try num(0..<4)
            return Point(start: day(y, 1, 1), end: day(y + 1, 1, 1))
        case 7:
            let y = try num(0..<4)
            let m = try num(5..<7)
            guard u[4] == 45, (1...12).contains(m) else { throw bad() }
            return Point(start: day(y, m, 1), end: m == 12 ? day(y + 1, 1, 1) : day(y, m + 1, 1))
        case 10:
            guard DayFileParser.isCalendarDate(s) else { throw bad() }
            let y = try num(0..<4)
            let m = try num(5..<7)
            let d = try num(8..<10)
            let next = ISO8601.civil(ISO8601.days(year: y, month: m, day: d) + 1)
            return Point(start: day(y, m, d), end: day(next.year, next.month, next.day))
        default:
            if let stamp = Timestamp(s) { return Point(start: stamp.microseconds, end: nil) }
            // Minutes precision with a zone: YYYY-MM-DDTHH:MMZ or …HH:MM±HH:MM.
            if u.count > 16, u[13] == 58, u[16] != 58,
                let stamp = Timestamp(String(s.prefix(16)) + ":00" + String(s.dropFirst(16)))
            {
                return Point(start: stamp.microseconds, end: nil)
            }
            // Wall-clock time without a zone: YYYY-MM-DDTHH:MM[:SS].
            guard u.count == 16 || u.count == 19, u[10] == UInt8(ascii: "T"), u[13] == 58,
                DayFileParser.isCalendarDate(String(s.prefix(10)))
            else { throw bad() }
            let h = try num(11..<13)
            let mi = try num(14..<16)
            let sec = u.count == 19 ? try num(17..<19) : 0
            guard h < 24, mi < 60, sec < 60 else { throw bad() }
            let at = local(try num(0..<4), try num(5..<7), try num(8..<10), h * 3600 + mi * 60 + sec)
            return Point(start: at, end: nil)
        }
    }
}

/// A calendar period (`end` set) or an instant.
private struct Point {
    var start: Int64
    var end: Int64?
    /// As the end of a range: a period includes itself, an instant is excluded.
    var exclusiveEnd: Int64 { end ?? start }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
