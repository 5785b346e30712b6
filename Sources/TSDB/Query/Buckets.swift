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
            let (seconds, overflow) = n.multipliedReportingOverflow(by: unit)
            guard !overflow, seconds <= longestSeconds else {
                throw TSDBError.invalidInput("bucket \"\(text)\" is longer than 10,000 years")
            }
            return .fixed(seconds: seconds)
        }
        throw TSDBError.invalidInput(
            "bucket \"\(text)\" is not minute, hour, day, week, month, year or a duration like 15m, 6h, 2d")
    }

    /// The longest fixed duration: 10,000 years of 366 days, longer than any range aggregated
    /// (``AggregatePlan/earliest`` to ``AggregatePlan/latest``), and short enough that bucket
    /// arithmetic in microseconds stays far from overflowing (``BucketGrid/limit``).
    public static let longestSeconds: Int64 = 3_660_000 * 86_400

    /// Throws unless a fixed duration is positive and at most ``longestSeconds`` (a library caller
    /// may make one that ``parse(_:)`` would refuse).
    func validate() throws(TSDBError) {
        guard case .fixed(let seconds) = self, seconds <= 0 || seconds > Self.longestSeconds else { return }
        throw TSDBError.invalidInput("a bucket of \(seconds) s is not between 1 s and 10,000 years")
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .calendar(let u): u.rawValue
        case .fixed(let s): "\(s)s"
        }
    }
}

/// One bucket: `[start, end)`, µs since the epoch.
public struct Bucket: Sendable, Equatable {
    public var start: Int64
    public var end: Int64
}

/// Finds buckets lazily, so a query over years of one-second buckets holds one bucket at a time.
///
/// Calendar units follow local wall-clock time in the zone: a day is the instants whose local
/// date is that day (23 or 25 hours when clocks change; when midnight falls in a gap the day
/// starts where the gap ends); weeks, months and years are runs of days. Minutes and hours are
/// runs of instants with the same local minute or hour *and the same UTC offset*, so the hour
/// repeated when clocks go back is a bucket of its own, and zones that move by 30 minutes
/// (Australia/Lord_Howe) get a 30-minute bucket at the change. Fixed durations count from local
/// midnight of the first day.
public struct BucketWalker: Sendable {
    let spec: BucketSpec
    let zone: TimeZoneRules
    let weekStart: Int
    /// `.none`: the whole range; `.fixed`: the anchor.
    let from: Int64, to: Int64
    let anchor: Int64

    public init(spec: BucketSpec, zone: TimeZoneRules, weekStart: Int = 1, from: Int64, to: Int64) {
        self.spec = spec
        self.zone = zone
        self.weekStart = weekStart
        self.from = from
        self.to = to
        anchor = zone.startOfDay(Self.localDay(from, zone))
    }

    static let micros: Int64 = 1_000_000

    static func localDay(_ t: Int64, _ zone: TimeZoneRules) -> Int64 {
        let seconds = ISO8601.floorDivide(t, micros).0
        return ISO8601.floorDivide(seconds + Int64(zone.offset(atUTC: seconds)), 86_400).0
    }

    /// ``localDay(_:_:)`` from the run of offsets `offsets` holds.
    static func localDay(_ t: Int64, _ offsets: inout OffsetCache) -> Int64 {
        let seconds = ISO8601.floorDivide(t, micros).0
        return ISO8601.floorDivide(seconds + Int64(offsets.run(atUTC: seconds).offset), 86_400).0
    }

    /// The bucket holding instant `t`.
    public func bucket(containing t: Int64) -> Bucket {
        var offsets = OffsetCache(zone)
        return bucket(containing: t, offsets: &offsets)
    }

    /// The bucket holding instant `t`, with the zone's offsets from `offsets` (scans ask in order).
    func bucket(containing t: Int64, offsets: inout OffsetCache) -> Bucket {
        switch spec {
        case .none:
            return Bucket(start: from, end: to)
        case .fixed(let seconds):
            let width = seconds * Self.micros
            let k = ISO8601.floorDivide(t - anchor, width).0
            return Bucket(start: anchor + k * width, end: anchor + (k + 1) * width)
        case .calendar(let unit):
            switch unit {
            case .minute: return wallClockBucket(t, unit: 60, &offsets)
            case .hour: return wallClockBucket(t, unit: 3600, &offsets)
            case .day, .week, .month, .year:
                // By edges, not by t's own date: where clocks fall back across midnight the date
                // repeats, but a bucket stays one run of instants.
                // Each edge is found once, mostly from the cached run of the zone's offset.
                var (first, next) = dayRange(Self.localDay(t, &offsets), unit)
                var start = offsets.startOfDay(first)
                while start > t {
                    (first, next) = dayRange(first - 1, unit)
                    start = offsets.startOfDay(first)
                }
                var end = offsets.startOfDay(next)
                while end <= t {
                    (first, next) = dayRange(next, unit)
                    (start, end) = (end, offsets.startOfDay(next))
                }
                return Bucket(start: start, end: end)
            }
        }
    }

    /// Every bucket from the one holding `from` to the one holding `to - 1` (for tests and small ranges).
    func buckets(from: Int64, to: Int64) -> [Bucket] {
        guard to > from else { return [] }
        var out = [bucket(containing: from)]
        while out.last!.end < to { out.append(bucket(after: out.last!)) }
        return out
    }

    /// The bucket after `b`.
    public func bucket(after b: Bucket) -> Bucket { bucket(containing: b.end) }

    /// First day of the calendar unit holding `day`, and the first day of the next one.
    func dayRange(_ day: Int64, _ unit: BucketSpec.CalendarUnit) -> (Int64, Int64) {
        let (y, m, _) = ISO8601.civil(day)
        switch unit {
        case .week:
            let isoWeekday = Int(((day % 7) + 10) % 7) + 1  // 1 = Monday … 7 = Sunday
            let first = day - Int64((isoWeekday - weekStart + 7) % 7)
            return (first, first + 7)
        case .month:
            return (
                ISO8601.days(year: y, month: m, day: 1),
                ISO8601.days(year: m == 12 ? y + 1 : y, month: m == 12 ? 1 : m + 1, day: 1)
            )
        case .year:
            return (ISO8601.days(year: y, month: 1, day: 1), ISO8601.days(year: y + 1, month: 1, day: 1))
        default:
            return (day, day + 1)
        }
    }

    /// The run of instants sharing `t`'s local minute or hour and UTC offset.
    @inline(__always)  // the unit is a constant at each call: its divisions become multiplications
    func wallClockBucket(_ t: Int64, unit: Int64, _ offsets: inout OffsetCache) -> Bucket {
        let seconds = ISO8601.floorDivide(t, Self.micros).0
        let run = offsets.run(atUTC: seconds)
        let offset = Int64(run.offset)
        let start = max(ISO8601.floorDivide(seconds + offset, unit).0 * unit - offset, run.start)
        let end = min(ISO8601.floorDivide(start + offset, unit).0 * unit + unit - offset, run.end)
        return Bucket(start: start * Self.micros, end: end * Self.micros)
    }

    /// The stretch around `b`, a bucket this walker found, where buckets run at one width and so are
    /// found by arithmetic (``BucketGrid``): for fixed buckets, from `b` on; for local minutes,
    /// hours, days and weeks, from `b` (when whole: not cut short or stretched by an offset change)
    /// while the offset at its start lasts, as local midnights at one offset are 24 hours apart. A
    /// day or week must end before the next change, as one that sets clocks back across its
    /// midnight makes the date repeat and the day go on; minutes and hours may end at it. Sparse
    /// samples skip buckets: minutes of resting heart rate come one to three minutes apart. (A
    /// year's days each found from the zone's rules were 0.12M of the 3.4M instructions of its
    /// daily heart rate as a whole query; a year's minutes each found by stepping from the last
    /// bucket, ~110 instructions a row.)
    func grid(around b: Bucket, offsets: inout OffsetCache) -> BucketGrid {
        let width: Int64
        switch spec {
        case .fixed(let seconds): width = seconds * Self.micros
        case .calendar(.minute): width = 60 * Self.micros
        case .calendar(.hour): width = 3600 * Self.micros
        case .calendar(.day): width = 86_400 * Self.micros
        case .calendar(.week): width = 7 * 86_400 * Self.micros
        default: return .none
        }
        let limit = BucketGrid.limit
        guard b.end - b.start == width, b.start > -limit, b.end < limit else { return .none }
        var last = limit
        if case .calendar = spec {
            let startSeconds = ISO8601.floorDivide(b.start, Self.micros).0
            let run = offsets.run(atUTC: startSeconds)
            guard run.contains(startSeconds) else { return .none }
            let runEnd = run.end >= limit / Self.micros ? limit : run.end * Self.micros
            last = width >= 86_400 * Self.micros ? runEnd - 1 : runEnd
        }
        let end = b.start + (last - b.start) / width * width
        guard end >= b.end else { return .none }
        return BucketGrid(start: b.start, end: end, width: width)
    }

    /// Whether every bucket boundary in `[from, to)` (µs) lies on the 15-minute grid of slot
    /// summaries (segment-v3.md §6.1), known without finding the buckets: fixed buckets of whole
    /// quarter hours from a quarter-hour anchor, or calendar buckets of an hour or more while
    /// the offset (a whole quarter hour) does not change.
    func boundariesOnSlotGrid(from: Int64, to: Int64, offsets: inout OffsetCache) -> Bool {
        let quarter = SlotSummary.micros / Self.micros
        switch spec {
        case .none:
            return true
        case .fixed(let seconds):
            return seconds % quarter == 0 && anchor % SlotSummary.micros == 0
        case .calendar(.minute):
            return false
        case .calendar:
            let first = ISO8601.floorDivide(from, Self.micros).0
            let run = offsets.run(atUTC: first)
            return run.contains(ISO8601.floorDivide(to - 1, Self.micros).0) && Int64(run.offset) % quarter == 0
                && (run.start == .min || run.start % quarter == 0)
        }
    }
}

/// A stretch of time where buckets run at one width: each bucket in `[start, end)` is
/// `[start + k · width, start + (k + 1) · width)` (none when `end <= start`).
struct BucketGrid {
    let start: Int64, end: Int64, width: Int64

    static let none = BucketGrid(start: 0, end: 0, width: 1)
    /// How far a grid reaches either side of the epoch (µs, ~73,000 years): its arithmetic cannot
    /// overflow within it, and aggregates stay well inside (``AggregatePlan/latest``).
    static let limit = Int64.max / 4

    /// The bucket holding `t`, when the grid holds it.
    @inline(__always)
    func bucket(containing t: Int64) -> Bucket? {
        guard t >= start && t < end else { return nil }
        let bucketStart = start + (t - start) / width * width
        return Bucket(start: bucketStart, end: bucketStart + width)
    }
}

/// A ``BucketWalker`` that remembers the last two buckets it found. A scan asks for the same
/// bucket many times (once per block, slot group and row), and finding a local day costs a
/// dozen offset lookups; scans move forward, so two suffice: the bucket being closed and the next.
struct BucketCursor {
    let walker: BucketWalker
    private var recent = Bucket(start: 0, end: 0)
    private var previous = Bucket(start: 0, end: 0)
    private var offsets: OffsetCache
    /// Where the buckets around the last one the walker found run at one width.
    private(set) var grid = BucketGrid.none

    init(_ walker: BucketWalker) {
        self.walker = walker
        offsets = OffsetCache(walker.zone)
    }

    /// The bucket holding instant `t`.
    mutating func bucket(containing t: Int64) -> Bucket {
        if t >= recent.start && t < recent.end { return recent }
        if t >= previous.start && t < previous.end { return previous }
        previous = recent
        // Rows of minutes or quarter hours ask for a bucket ahead each time: found by arithmetic.
        if let next = grid.bucket(containing: t) {
            recent = next
        } else {
            recent = walker.bucket(containing: t, offsets: &offsets)
            grid = walker.grid(around: recent, offsets: &offsets)
        }
        return recent
    }

    /// See ``BucketWalker/boundariesOnSlotGrid(from:to:offsets:)``.
    mutating func boundariesOnSlotGrid(from: Int64, to: Int64) -> Bool {
        walker.boundariesOnSlotGrid(from: from, to: to, offsets: &offsets)
    }

    /// The bucket after `b`.
    mutating func bucket(after b: Bucket) -> Bucket { bucket(containing: b.end) }
}

extension BlockSummary {
    /// Whether a scan of `[lo, hi)` takes the block whole: every sample starts in the range and in
    /// the bucket of its first, whose end `bucketEnd` gives. The scan and the choice of a second
    /// thread (``Store/splitBlocks(_:walker:)``) both ask this, so they agree on it.
    @inline(__always)
    func liesInOneBucket(_ lo: Int64, _ hi: Int64, bucketEnd: (Int64) -> Int64) -> Bool {
        firstStart >= lo && lastStart < hi && bucketEnd(firstStart) > lastStart
    }
}
