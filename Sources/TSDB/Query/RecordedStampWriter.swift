/// Writes instants in the form they were recorded in (``TimeForm``), the text
/// ``ISO8601/write(_:_:to:)`` makes, from a template of the last date and form: raw rows come in
/// time order and share them (a day of heart rate is thousands of samples, all `+01:00`), so most
/// timestamps cost their time of day. Three months of heart rate to CSV spent 37% of their
/// instructions formatting each timestamp in full (callgrind).
///
/// Forms with a fraction of a second are written in full every time: neither the day files nor
/// Apple Health's export write them.
struct RecordedStampWriter {
    private var form = TimeForm.zulu
    /// The template's text: `YYYY-MM-DDThh:mm:ss` and `Z` or `±hh:mm`, at the time last written.
    private var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The instant `text` shows: a point sample's end is its start.
    private var shown = Int64.min
    /// The template's length, 20 or 25; 0 before the first.
    private var length = 0
    /// The UTC instant (µs) of the local midnight that starts the template's date in its form.
    private var midnight: Int64 = 0

    @inline(__always)
    mutating func write(_ micros: Int64, _ f: TimeForm, to row: inout RowBytes) {
        if micros == shown && f == form && length > 0 { return row.write(words: text, count: length) }
        let sinceMidnight = micros &- midnight
        guard length > 0, UInt64(bitPattern: sinceMidnight) < UInt64(ISO8601.microsPerDay), f == form else {
            return writeNewDate(micros, f, to: &row)
        }
        let second = UInt64(bitPattern: sinceMidnight) / 1_000_000
        text = ISO8601.settingTimeOfDay(second, in: text)
        shown = micros
        row.write(words: text, count: length)
    }

    /// Makes the template of `micros`' date in `f` (when `f` has no fraction) and writes `micros`.
    private mutating func writeNewDate(_ micros: Int64, _ f: TimeForm, to row: inout RowBytes) {
        form = f
        length = 0
        guard f.fractionDigits == 0 else { return writeInFull(micros, f, to: &row) }
        let local = micros + Int64(f.offsetMinutes) * 60 * ISO8601.microsPerSecond
        let inDay = ISO8601.floorDivide(local, ISO8601.microsPerDay).1
        midnight = micros - inDay
        let n = withUnsafeMutableBytes(of: &text) { raw in
            ISO8601.write(midnight, f, to: raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        (length, shown) = (n, midnight)
        write(micros, f, to: &row)
    }

    private func writeInFull(_ micros: Int64, _ f: TimeForm, to row: inout RowBytes) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: ISO8601.longestText) { full in
            let n = ISO8601.write(micros, f, to: full.baseAddress!)
            row.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: full[0..<n])))
        }
    }
}
