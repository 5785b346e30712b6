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

    /// The instant (µs) local day `day` starts; equal to ``TimeZoneRules/startOfDay(_:)``. Read off
    /// the run when no offset change comes within two days of the day's midnight (then that
    /// midnight exists once, and no change falls on the day's start): finding it in the zone's
    /// rules was two searches of its transitions per edge, 6% of a year's daily query (callgrind).
    package mutating func startOfDay(_ day: Int64) -> Int64 {
        let midnight = day * 86_400
        func clear(of run: OffsetRun) -> Int64? {
            let t = midnight - Int64(run.offset)
            return run.start <= t - 2 * 86_400 && t + 2 * 86_400 < run.end ? t * 1_000_000 : nil
        }
        if let start = clear(of: run) { return start }
        run = zone.offsetRun(atUTC: midnight - Int64(run.offset))
        return clear(of: run) ?? zone.startOfDay(day)
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
public struct LocalTimestampWriter: Sendable {
    private var offsets: OffsetCache
    private var day = Int64.min
    private var offset = Int32.min
    @usableFromInline var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The instant `text` shows: a row's end is often the next row's start.
    @usableFromInline var shown = Int64.min
    /// The instants (µs, `[from, until)`) with the date and offset in `text`: one day, or the part
    /// of it before or after a change of offset. Their time of day is all a new one needs.
    private var sameDate: (from: Int64, until: Int64) = (0, 0)
    /// The UTC instant (µs) of that day's local midnight at that offset.
    private var midnight: Int64 = 0
    public static let length = 25

    package init(_ zone: TimeZoneRules) { offsets = OffsetCache(zone) }

    package mutating func append(_ micros: Int64, to out: inout [UInt8]) {
        RowBytes.append(to: &out, capacity: Self.length) { write(micros, to: &$0) }
    }

    /// Inlinable (so public): most rows' timestamps are the one shown already.
    @inlinable @inline(__always)
    public mutating func write(_ micros: Int64, to out: inout RowBytes) {
        guard micros == shown else { return show(micros, to: &out) }
        out.write(words: text, count: Self.length)
    }

    /// Makes `text` the timestamp of `micros` (its time of day, once its date and offset are
    /// there) and writes it.
    @usableFromInline
    mutating func show(_ micros: Int64, to out: inout RowBytes) {
        shown = micros
        if micros < sameDate.from || micros >= sameDate.until { showDate(micros) }
        let second = UInt64(truncatingIfNeeded: (micros - midnight) / 1_000_000)
        text = ISO8601.settingTimeOfDay(second, in: text)
        out.write(words: text, count: Self.length)
    }

    /// Puts the local date and offset of `micros` in `text`, and notes the instants that share them.
    private mutating func showDate(_ micros: Int64) {
        let utcSecond = ISO8601.floorDivide(micros, 1_000_000).0
        let run = offsets.run(atUTC: utcSecond)
        // Whole minutes, as localTimestamp(_:_:) shows them (old local mean times had seconds).
        let offset = run.offset / 60 * 60
        let day = ISO8601.floorDivide(utcSecond + Int64(offset), 86_400).0
        // The instant of the day's local midnight, written with the offset.
        midnight = (day * 86_400 - Int64(offset)) * 1_000_000
        if offset != self.offset || day != self.day {
            // Rows of days come one day after another: the next date is the shown one plus a day
            // (written whole, each was 530 instructions of a year's daily rows, callgrind).
            let next = offset == self.offset && day == self.day &+ 1 ? ISO8601.followingDate(in: text) : nil
            (self.offset, self.day) = (offset, day)
            if let next {
                text = next
            } else {
                // Written in place: through an array, each new date cost an allocation (a year's
                // daily rows: 366 dates, 392k instructions).
                let form = TimeForm(offsetMinutes: Int16(offset / 60))
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: ISO8601.longestText) { full in
                    let n = ISO8601.write(midnight, form, to: full.baseAddress!)
                    withUnsafeMutableBytes(of: &text) { $0.copyBytes(from: UnsafeBufferPointer(rebasing: full[0..<n])) }
                }
            }
        }
        func inMicros(_ seconds: Int64) -> Int64 {
            let (m, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
            return overflow ? (seconds < 0 ? .min : .max) : m
        }
        sameDate = (max(midnight, inMicros(run.start)), min(midnight + 86_400_000_000, inMicros(run.end)))
    }
}

extension ISO8601 {
    /// `text` (the words of a `YYYY-MM-DDThh:mm:ss…` text as they lie in memory) with the date of
    /// the day after its own; nil when its year is not four digits or the next one would need five.
    static func followingDate(
        in text: (UInt64, UInt64, UInt64, UInt64)
    ) -> (UInt64, UInt64, UInt64, UInt64)? {
        func digit(_ word: UInt64, _ byte: UInt64) -> Int { Int(truncatingIfNeeded: word >> (8 * byte) & 0xFF) - 48 }
        func digits(_ v: Int, at byte: UInt64) -> UInt64 { twoDigits(UInt64(v), at: byte) }
        let dash = UInt64(UInt8(ascii: "-"))
        // The year's four bytes are digits when none is below "0" or above "9" (a byte above "9"
        // plus 0x46 reaches 0x80), tested all at once: as an array they cost 240 instructions a date.
        let yearBytes = text.0 & 0xFFFF_FFFF
        let digitsOnly =
            (yearBytes &- 0x3030_3030) & ~yearBytes & 0x8080_8080 == 0
            && ((yearBytes &+ 0x4646_4646) | yearBytes) & 0x8080_8080 == 0
        guard text.0 >> 32 & 0xFF == dash, text.0 >> 56 == dash, digitsOnly else { return nil }
        var year = ((digit(text.0, 0) * 10 + digit(text.0, 1)) * 10 + digit(text.0, 2)) * 10 + digit(text.0, 3)
        var month = digit(text.0, 5) * 10 + digit(text.0, 6)
        var day = digit(text.1, 0) * 10 + digit(text.1, 1)
        if day < daysInMonth(year: year, month: month) {
            day += 1
        } else if month < 12 {
            (month, day) = (month + 1, 1)
        } else if year < 9999 {
            (year, month, day) = (year + 1, 1, 1)
        } else {
            return nil
        }
        let date = digits(year / 100, at: 0) | digits(year % 100, at: 2) | digits(month, at: 5)
        return (text.0 & 0xFF00_00FF_0000_0000 | date, text.1 & ~0xFFFF | digits(day, at: 0), text.2, text.3)
    }

    /// `text` (the words of a `YYYY-MM-DDThh:mm:ss…` text as they lie in memory) with `hh:mm:ss`
    /// the time of day of `second` (`0 ..< 86_400`). The words holding bytes 8–15 (`DDThh:mm`) and
    /// 16–23 (`:ss±hh:m`) are made whole and written from registers: stored (by bytes, or by
    /// words) and read back at once, they cannot be forwarded to the read (12% of the row
    /// formatter's samples on one load in perf).
    @inline(__always)
    static func settingTimeOfDay(
        _ second: UInt64, in text: (UInt64, UInt64, UInt64, UInt64)
    ) -> (UInt64, UInt64, UInt64, UInt64) {
        let minutes = second / 60
        let hour = minutes / 60
        // Hours, minutes and seconds in 16-bit lanes, all their tens found at once (x / 10 = x·103 >> 10
        // below 100, which stays inside a lane): a division of each by ten took ~21 instructions a
        // timestamp more (callgrind, a year's minutes as CSV: 193.3 -> 183.8 M).
        let lanes = hour | (minutes &- hour &* 60) << 16 | (second &- minutes &* 60) << 32
        let tens = (lanes &* 103) >> 10 & 0x0000_000F_000F_000F
        // Each lane's two digits, tens first (the lower byte lies first in memory).
        let digits = tens | (lanes &- tens &* 10) << 8 | 0x0000_3030_3030_3030
        let middle = text.1 & 0x0000_FF00_00FF_FFFF | (digits & 0xFFFF) << 24 | (digits >> 16 & 0xFFFF) << 48
        let late = text.2 & 0xFFFF_FFFF_FF00_00FF | (digits >> 32 & 0xFFFF) << 8
        return (text.0, middle, late, text.3)
    }

    /// The two decimal digits of `v` (`0 ..< 100`) as bytes `byte` and `byte + 1` of a word.
    @inline(__always)
    private static func twoDigits(_ v: UInt64, at byte: UInt64) -> UInt64 {
        (48 &+ v / 10) &<< (8 &* byte) | (48 &+ v % 10) &<< (8 &* byte &+ 8)
    }
}
