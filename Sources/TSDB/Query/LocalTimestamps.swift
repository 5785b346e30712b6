/// The UTC offset in force over a run of instants, `[start, end)` in seconds since the epoch:
/// the offset does not change inside it.
package struct OffsetRun: Sendable, Equatable {
    package var start: Int64
    package var end: Int64
    package var offset: Int32

    func contains(_ seconds: Int64) -> Bool { seconds >= start && seconds < end }
}

extension TimeZoneRules {
    /// The run of instants around `seconds` with its offset: from the last change at or before it
    /// to the next change after it (`OffsetCacheTests` checks every zone the system has).
    func offsetRun(atUTC seconds: Int64) -> OffsetRun {
        OffsetRun(
            start: lastTransition(atOrBefore: seconds) ?? .min, end: nextTransition(after: seconds) ?? .max,
            offset: offset(atUTC: seconds))
    }
}

/// A zone's offsets for instants that come mostly in order (the rows of an aggregate): one
/// lookup per run between clock changes instead of a search per instant.
package struct OffsetCache: Sendable {
    package let zone: TimeZoneRules
    private(set) var run = OffsetRun(start: 0, end: 0, offset: 0)

    package init(_ zone: TimeZoneRules) { self.zone = zone }

    /// The run holding instant `seconds`.
    package mutating func run(atUTC seconds: Int64) -> OffsetRun {
        if !run.contains(seconds) { run = zone.offsetRun(atUTC: seconds) }
        return run
    }

    /// Offset from UTC, in seconds, at an instant (µs); equal to ``TimeZoneRules/offset(atMicros:)``.
    package mutating func offset(atMicros micros: Int64) -> Int32 {
        run(atUTC: ISO8601.floorDivide(micros, 1_000_000).0).offset
    }
}

/// Writes ``localTimestamp(_:_:)``'s texts one after another into a 25-byte template
/// (`YYYY-MM-DDThh:mm:ss±hh:mm`) whose date and offset are rewritten only when they change: a
/// long aggregate's rows share them (24 hourly rows a day), so most timestamps cost their time
/// of day, and no reference counting or search.
package struct LocalTimestampWriter: Sendable {
    private var offsets: OffsetCache
    private var day = Int64.min
    private var offset = Int32.min
    private var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The instant `text` shows: a row's end is often the next row's start.
    private var shown = Int64.min
    package static let length = 25

    package init(_ zone: TimeZoneRules) { offsets = OffsetCache(zone) }

    package mutating func append(_ micros: Int64, to out: inout [UInt8]) {
        RowBytes.append(to: &out, capacity: Self.length) { write(micros, to: &$0) }
    }

    package mutating func write(_ micros: Int64, to out: inout RowBytes) {
        if micros != shown { show(micros) }
        out.write(words: text, count: Self.length)
    }

    /// Makes `text` the timestamp of `micros`.
    private mutating func show(_ micros: Int64) {
        shown = micros
        // Whole minutes, as localTimestamp(_:_:) shows them (old local mean times had seconds).
        let offset = offsets.offset(atMicros: micros) / 60 * 60
        let local = ISO8601.floorDivide(micros, 1_000_000).0 + Int64(offset)
        let (day, second) = ISO8601.floorDivide(local, 86_400)
        if offset != self.offset || day != self.day {
            (self.offset, self.day) = (offset, day)
            var full: [UInt8] = []
            // The instant of the day's local midnight, written with the offset.
            let midnight = (day * 86_400 - Int64(offset)) * 1_000_000
            ISO8601.append(midnight, TimeForm(offsetMinutes: Int16(offset / 60)), to: &full)
            withUnsafeMutableBytes(of: &text) { $0.copyBytes(from: full) }
        }
        withUnsafeMutableBytes(of: &text) { t in
            func two(_ v: Int64, at i: Int) {
                t[i] = UInt8(48 + v / 10)
                t[i + 1] = UInt8(48 + v % 10)
            }
            two(second / 3600, at: 11)
            two(second / 60 % 60, at: 14)
            two(second % 60, at: 17)
        }
    }
}
