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

/// The months a raw file's samples start in (a manifest's raw-file entry, manifest-v4.md §1). A
/// day file's are one or two (its day in the wearer's zone against UTC months), kept in the entry
/// itself; an export's, more, in an array. An array per entry was an allocation and a release for
/// each of a year's day files wherever entries were decoded, copied or dropped.
public struct MonthList: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    private enum Storage: Hashable {
        /// Up to two months; `count` of them are meaningful, the rest zero.
        case inline(count: Int8, first: Int32, second: Int32)
        case array([MonthIndex])
    }

    private var storage: Storage

    public init(_ months: some Collection<MonthIndex>) {
        switch months.count {
        case 0: storage = .inline(count: 0, first: 0, second: 0)
        case 1: storage = .inline(count: 1, first: months.first!.rawValue, second: 0)
        case 2:
            let (first, second) = (months.first!, months.dropFirst().first!)
            storage = .inline(count: 2, first: first.rawValue, second: second.rawValue)
        default: storage = .array(Array(months))
        }
    }

    public init(arrayLiteral months: MonthIndex...) { self.init(months) }

    init(one month: MonthIndex) { storage = .inline(count: 1, first: month.rawValue, second: 0) }

    init(_ first: MonthIndex, _ second: MonthIndex) {
        storage = .inline(count: 2, first: first.rawValue, second: second.rawValue)
    }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .inline(let count, _, _): Int(count)
        case .array(let months): months.count
        }
    }

    public subscript(i: Int) -> MonthIndex {
        switch storage {
        case .inline(let count, let first, let second):
            precondition(i >= 0 && i < Int(count), "month \(i) of \(count)")
            return MonthIndex(rawValue: i == 0 ? first : second)
        case .array(let months): return months[i]
        }
    }
}
