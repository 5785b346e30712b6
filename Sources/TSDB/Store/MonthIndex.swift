/// A UTC calendar month as one number, `year * 12 + month - 1`: the unit segments are cut by and
/// compaction redoes (manifest-v4.md stores it in raw-file entries).
public struct MonthIndex: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public init(year: Int, month: Int) { rawValue = Int32(year * 12 + month - 1) }

    public var year: Int { Int(ISO8601.floorDivide(Int64(rawValue), 12).0) }
    public var month: Int { Int(ISO8601.floorDivide(Int64(rawValue), 12).1) + 1 }

    /// `YYYY-MM`.
    public var description: String { monthKey(year: year, month: month) }

    public var next: MonthIndex { MonthIndex(rawValue: rawValue + 1) }

    /// The first instant of the month, µs since the epoch.
    public var start: Int64 { ISO8601.days(year: year, month: month, day: 1) * ISO8601.microsPerDay }

    /// The month holding an instant (µs), with its bounds.
    package static func containing(_ micros: Int64) -> (month: MonthIndex, start: Int64, end: Int64) {
        let (day, _) = ISO8601.floorDivide(micros, ISO8601.microsPerDay)
        let (y, m, _) = ISO8601.civil(day)
        let month = MonthIndex(year: y, month: m)
        return (month, month.start, month.next.start)
    }

    public static func < (a: MonthIndex, b: MonthIndex) -> Bool { a.rawValue < b.rawValue }
}

extension Manifest.SegmentEntry {
    public var monthIndex: MonthIndex { MonthIndex(year: year, month: month) }
}
