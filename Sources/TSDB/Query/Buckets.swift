/// How results are grouped in time.
public enum BucketSpec: Sendable, Equatable, CustomStringConvertible {
    /// One row for the whole range.
    case none
    /// Local calendar units in the query's time zone (DST-correct: a day can be 23 or 25 hours).
    case calendar(CalendarUnit)
    /// A fixed duration, anchored at local midnight of the range's first day.
    case fixed(seconds: Int64)

    public enum CalendarUnit: String, Sendable, CaseIterable {
        case minute, hour, day, week, month, year
    }

    /// `minute|hour|day|week|month|year`, or a duration such as `15m`, `6h`, `90s`, `2d`.
    public static func parse(_ text: String) throws(TSDBError) -> BucketSpec {
        if let unit = CalendarUnit(rawValue: text.lowercased()) { return .calendar(unit) }
        let scale: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let last = text.last, let unit = scale[last], let n = Int64(text.dropLast()), n > 0 {
            return .fixed(seconds: n * unit)
        }
        throw TSDBError(.invalidInput, "bucket \"\(text)\" is not minute, hour, day, week, month, year or a duration like 15m, 6h, 2d")
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .calendar(let u): u.rawValue
        case .fixed(let s): "\(s)s"
        }
    }
}

/// Bucket edges as UTC instants (µs): bucket i is `[edges[i], edges[i+1])`.
struct BucketEdges {
    let edges: [Int64]

    var count: Int { edges.count - 1 }

    init(spec: BucketSpec, zone: TimeZoneRules, weekStart: Int, from: Int64, to: Int64) {
        let micros: Int64 = 1_000_000
        guard to > from else { edges = [from, from]; return }
        func utc(_ localSeconds: Int64) -> Int64 { zone.utc(fromLocal: localSeconds) * micros }
        let fromSeconds = ISO8601.floorDivide(from, micros).0
        let local = fromSeconds + Int64(zone.offset(atUTC: fromSeconds))
        let localDay = ISO8601.floorDivide(local, 86_400).0
        var out: [Int64] = []
        switch spec {
        case .none:
            out = [from, to]
        case .fixed(let seconds):
            // Anchored at local midnight of the first day, then plain elapsed time.
            var e = utc(localDay * 86_400)
            while e + seconds * micros <= from { e += seconds * micros }
            out.append(e)
            while e < to { e += seconds * micros; out.append(e) }
        case .calendar(let unit):
            // Walk local wall-clock boundaries and convert each to UTC.
            var (y, m, d) = ISO8601.civil(localDay)
            var wall: Int64
            switch unit {
            case .minute: wall = ISO8601.floorDivide(local, 60).0 * 60
            case .hour: wall = ISO8601.floorDivide(local, 3600).0 * 3600
            case .day: wall = localDay * 86_400
            case .week:
                let isoWeekday = Int(((localDay % 7) + 10) % 7) + 1 // 1 = Monday … 7 = Sunday
                wall = (localDay - Int64((isoWeekday - weekStart + 7) % 7)) * 86_400
                (y, m, d) = ISO8601.civil(wall / 86_400)
            case .month: wall = ISO8601.days(year: y, month: m, day: 1) * 86_400; d = 1
            case .year: wall = ISO8601.days(year: y, month: 1, day: 1) * 86_400; m = 1; d = 1
            }
            _ = d
            func next(_ wall: Int64) -> Int64 {
                switch unit {
                case .minute: return wall + 60
                case .hour: return wall + 3600
                case .day: return wall + 86_400
                case .week: return wall + 7 * 86_400
                case .month:
                    let (yy, mm, _) = ISO8601.civil(wall / 86_400)
                    return ISO8601.days(year: mm == 12 ? yy + 1 : yy, month: mm == 12 ? 1 : mm + 1, day: 1) * 86_400
                case .year:
                    let (yy, _, _) = ISO8601.civil(wall / 86_400)
                    return ISO8601.days(year: yy + 1, month: 1, day: 1) * 86_400
                }
            }
            if unit == .minute || unit == .hour {
                // Whole local minutes/hours, stepping in UTC: a repeated hour when clocks go back
                // is a bucket of its own, a skipped one does not exist.
                let u: Int64 = unit == .minute ? 60 : 3600
                var e = wall - Int64(zone.offset(atUTC: fromSeconds))
                if e > fromSeconds { e -= u }
                out.append(e * micros)
                while e * micros < to {
                    var n = e + u
                    let offset = Int64(zone.offset(atUTC: n))
                    let localNext = n + offset
                    if localNext % u != 0 { n = ISO8601.floorDivide(localNext, u).0 * u - offset }
                    if n <= e { n += u }
                    out.append(n * micros)
                    e = n
                }
                edges = out
                return
            }
            var e = utc(wall)
            out.append(e)
            while e < to {
                wall = next(wall)
                let n = utc(wall)
                if n > e { out.append(n); e = n } // a wall time repeated by DST gives no empty bucket
            }
        }
        edges = out
    }

    /// Index of the bucket holding `t`, or nil outside all buckets.
    func index(of t: Int64) -> Int? {
        guard t >= edges[0], t < edges[edges.count - 1] else { return nil }
        var lo = 0, hi = edges.count - 2
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if edges[mid] <= t { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }
}
