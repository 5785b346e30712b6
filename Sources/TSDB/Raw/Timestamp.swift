/// How a timestamp was written, so it can be written back exactly:
/// its UTC offset, whether the offset was spelled `Z`, and how many fraction digits it had.
public struct TimeForm: Hashable, Sendable {
    /// Offset from UTC in minutes (`+08:00` is 480).
    public var offsetMinutes: Int16
    /// Digits after the seconds' decimal point, 0–9 (only the first 6 may be non-zero).
    public var fractionDigits: UInt8
    /// The offset was written `Z` rather than `+00:00`.
    public var isZulu: Bool
    /// The offset was written `-00:00` (RFC 3339: UTC, local offset unknown) rather than `+00:00`.
    public var isNegativeZero: Bool

    public init(offsetMinutes: Int16 = 0, fractionDigits: UInt8 = 0, isZulu: Bool = false, isNegativeZero: Bool = false)
    {
        self.offsetMinutes = offsetMinutes
        self.fractionDigits = fractionDigits
        self.isZulu = isZulu
        self.isNegativeZero = isNegativeZero && offsetMinutes == 0 && !isZulu
    }

    public static let zulu = TimeForm(offsetMinutes: 0, fractionDigits: 0, isZulu: true)
}

/// An instant with microsecond precision plus the form it was written in.
public struct Timestamp: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64
    public var form: TimeForm

    public init(microseconds: Int64, form: TimeForm = .zulu) {
        self.microseconds = microseconds
        self.form = form
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// The ISO 8601 text in the timestamp's own form.
    public var description: String { ISO8601.format(microseconds, form) }

    /// Parses RFC 3339 / ISO 8601 extended format: `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)`.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Timestamp(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// ``init(_:)`` from the text's UTF-8 bytes.
    package init?(utf8 bytes: UnsafeRawBufferPointer) {
        guard let parsed = try? ISO8601.parse(bytes) else { return nil }
        self = parsed
    }
}

/// Hand-written ISO 8601 parsing and formatting (no Foundation, no ICU; ~ns per timestamp).
package enum ISO8601 {
    struct Failure: Error { var message: String }

    static let microsPerSecond: Int64 = 1_000_000
    package static let microsPerDay: Int64 = 86_400 * microsPerSecond

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    @inline(__always) package static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day number (`civil_from_days`).
    @inline(__always) package static func civil(_ z: Int64) -> (year: Int, month: Int, day: Int) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
    }

    package static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func parse(_ s: UnsafeRawBufferPointer) throws(Failure) -> Timestamp {
        let n = s.count
        guard n >= 19 else { throw Failure(message: "timestamp too short, expected YYYY-MM-DDTHH:MM:SS and a zone") }
        @inline(__always) func d(_ i: Int) -> Int { Int(s[i]) &- 48 }
        func digits(_ at: Int, _ count: Int) throws(Failure) {
            for i in at..<at + count where !(0...9).contains(d(i)) {
                throw Failure(message: "expected a digit at character \(i + 1) of the timestamp")
            }
        }
        func sep(_ at: Int, _ c: Character) throws(Failure) {
            guard s[at] == c.asciiValue! else {
                throw Failure(message: "expected '\(c)' at character \(at + 1) of the timestamp")
            }
        }
        // Fixed positions: check all separators and digits at once; only on failure walk them in
        // order to name the first wrong character.
        var wrong =
            s[4] != UInt8(ascii: "-") || s[7] != UInt8(ascii: "-") || s[10] != UInt8(ascii: "T")
            || s[13] != UInt8(ascii: ":") || s[16] != UInt8(ascii: ":")
        for i in [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18] { wrong = wrong || UInt(bitPattern: d(i)) > 9 }
        if wrong {
            try digits(0, 4)
            try sep(4, "-")
            try digits(5, 2)
            try sep(7, "-")
            try digits(8, 2)
            try sep(10, "T")
            try digits(11, 2)
            try sep(13, ":")
            try digits(14, 2)
            try sep(16, ":")
            try digits(17, 2)
        }
        let year = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3)
        let month = d(5) * 10 + d(6)
        let day = d(8) * 10 + d(9)
        let hour = d(11) * 10 + d(12)
        let minute = d(14) * 10 + d(15)
        let second = d(17) * 10 + d(18)
        guard month >= 1 && month <= 12 else { throw Failure(message: "month \(month) is not 01–12") }
        guard day >= 1 && day <= daysInMonth(year: year, month: month) else {
            throw Failure(message: "day \(day) does not exist in \(year)-\(month < 10 ? "0" : "")\(month)")
        }
        guard hour <= 23 else { throw Failure(message: "hour \(hour) is not 00–23") }
        guard minute <= 59 else { throw Failure(message: "minute \(minute) is not 00–59") }
        guard second <= 59 else {
            throw Failure(message: "second \(second) is not 00–59 (leap seconds are not accepted)")
        }
        var i = 19
        var micros: Int64 = 0
        var fractionDigits = 0
        if i < n && s[i] == UInt8(ascii: ".") {
            i += 1
            while i < n, s[i] >= 48, s[i] <= 57 {
                let d = Int64(s[i] - 48)
                if fractionDigits < 6 {
                    micros = micros * 10 + d
                } else if d != 0 {
                    throw Failure(message: "sub-microsecond precision is not supported")
                }
                fractionDigits += 1
                i += 1
            }
            guard fractionDigits >= 1 else { throw Failure(message: "expected digits after '.' in the timestamp") }
            guard fractionDigits <= 9 else { throw Failure(message: "more than 9 fraction digits") }
            if fractionDigits < 6 { for _ in fractionDigits..<6 { micros *= 10 } }
        }
        guard i < n else { throw Failure(message: "missing zone: expected 'Z' or ±HH:MM") }
        var offset = 0
        var zulu = false
        var negativeZero = false
        if s[i] == UInt8(ascii: "Z") {
            zulu = true
            i += 1
        } else if s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-") {
            guard i + 6 <= n else { throw Failure(message: "truncated zone offset, expected ±HH:MM") }
            try digits(i + 1, 2)
            try sep(i + 3, ":")
            try digits(i + 4, 2)
            let oh = d(i + 1) * 10 + d(i + 2)
            let om = d(i + 4) * 10 + d(i + 5)
            guard oh <= 23, om <= 59 else { throw Failure(message: "zone offset \(oh):\(om) is out of range") }
            offset = (oh * 60 + om) * (s[i] == UInt8(ascii: "-") ? -1 : 1)
            negativeZero = offset == 0 && s[i] == UInt8(ascii: "-")
            i += 6
        } else {
            throw Failure(message: "expected 'Z' or ±HH:MM after the time, found '\(Character(Unicode.Scalar(s[i])))'")
        }
        guard i == n else { throw Failure(message: "unexpected characters after the zone") }
        let local =
            days(year: year, month: month, day: day) * microsPerDay
            + Int64(hour * 3600 + minute * 60 + second) * microsPerSecond + micros
        return Timestamp(
            microseconds: local - Int64(offset) * 60 * microsPerSecond,
            form: TimeForm(
                offsetMinutes: Int16(offset), fractionDigits: UInt8(fractionDigits), isZulu: zulu,
                isNegativeZero: negativeZero))
    }

    package static func format(_ micros: Int64, _ form: TimeForm) -> String {
        var out = [UInt8]()
        out.reserveCapacity(32)
        append(micros, form, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The longest text ``write(_:_:to:)`` makes: date, time, nine fraction digits and an offset.
    package static let longestText = 35

    /// Appends the ISO 8601 text of an instant in `form` to `out`.
    package static func append(_ micros: Int64, _ form: TimeForm, to out: inout [UInt8]) {
        // Made on the stack and appended once: long outputs format a timestamp per row.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: longestText) { text in
            let n = write(micros, form, to: text.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[0..<n]))
        }
    }

    /// Writes the ISO 8601 text of an instant in `form` at `text` (room for ``longestText`` bytes);
    /// returns its length.
    package static func write(_ micros: Int64, _ form: TimeForm, to text: UnsafeMutablePointer<UInt8>) -> Int {
        let local = micros + Int64(form.offsetMinutes) * 60 * microsPerSecond
        let (dayNumber, inDay) = floorDivide(local, microsPerDay)
        let (y, m, d) = civil(dayNumber)
        let secondOfDay = Int(inDay / microsPerSecond)
        let fraction = Int(inDay % microsPerSecond)
        var n = 0
        @inline(__always) func put(_ v: Int, _ width: Int) {
            // Most significant digit first.
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                text[n] = UInt8(truncatingIfNeeded: 48 + (v / divisor) % 10)
                n += 1
                divisor /= 10
            }
        }
        @inline(__always) func put(_ c: Unicode.Scalar) {
            text[n] = UInt8(ascii: c)
            n += 1
        }
        put(y, 4)
        put("-")
        put(m, 2)
        put("-")
        put(d, 2)
        put("T")
        put(secondOfDay / 3600, 2)
        put(":")
        put(secondOfDay / 60 % 60, 2)
        put(":")
        put(secondOfDay % 60, 2)
        if form.fractionDigits > 0 {
            put(".")
            let digits = Int(form.fractionDigits)
            if digits <= 6 {
                var f = fraction
                for _ in digits..<6 { f /= 10 }
                put(f, digits)
            } else {
                put(fraction, 6)
                for _ in 6..<min(digits, 9) { put("0") }
            }
        }
        if form.isZulu {
            put("Z")
        } else {
            let o = Int(form.offsetMinutes)
            put(o < 0 || form.isNegativeZero ? "-" : "+")
            put(abs(o) / 60, 2)
            put(":")
            put(abs(o) % 60, 2)
        }
        return n
    }

    @inline(__always) package static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b
        let r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }
}

/// The date and zone of the last timestamp parsed without a fraction: consecutive samples share
/// them (`2025-03-01T` … `+01:00`), and then only the time of day needs reading, the rest being
/// known valid. Anything else is parsed in full by ``ISO8601/parse(_:)``.
struct RecentTimestamps {
    /// Bytes 0–7 of the text (`YYYY-MM-`) and bytes 8–10 (`DDT`), and the zone after the seconds.
    private var date: (UInt64, UInt32) = (0, 0)
    private var zone: UInt64 = 0
    private var zoneMask: UInt64 = 0
    /// The instant of the local day's midnight at that offset, and the form.
    private var midnight: Int64 = 0
    private var form = TimeForm.zulu
    private var isSet = false
    /// The last one's length: 20 (`Z`) or 25 (`±HH:MM`).
    private var length = 0

    /// The timestamp at `offset` of `bytes` if it has the last one's length, date and zone and is
    /// followed by a quote (the end of its JSON string), and its length; nil to parse it in full.
    /// Read through the base pointer with the zone's mask kept from the last parse: through a
    /// rebased slice, with the mask made from the length each time, a timestamp read in ~155
    /// instructions (the year's compaction reads a million).
    @inline(__always)
    func quick(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (Timestamp, Int)? {
        guard isSet, let base = bytes.baseAddress, offset &+ length < bytes.count,
            base.load(fromByteOffset: offset &+ length, as: UInt8.self) == UInt8(ascii: "\""),
            let stamp = known(at: base + offset)
        else { return nil }
        return (stamp, length)
    }

    mutating func parse(_ s: UnsafeRawBufferPointer) throws(ISO8601.Failure) -> Timestamp {
        if let stamp = known(s) { return stamp }
        let stamp = try ISO8601.parse(s)
        // Remembered when it is `YYYY-MM-DDTHH:MM:SS` and `Z` or `±HH:MM`: no fraction.
        guard s.count == 20 || s.count == 25, s[19] != UInt8(ascii: "."), let seconds = Self.timeOfDay(s) else {
            return stamp
        }
        (date, zone, form, isSet, length) = (Self.date(s), Self.zone(s), stamp.form, true, s.count)
        zoneMask = Self.zoneMask(s.count)
        midnight = stamp.microseconds - seconds * ISO8601.microsPerSecond
        return stamp
    }

    /// `s` if it is the last one's date and zone at another valid time of day.
    @inline(__always) private func known(_ s: UnsafeRawBufferPointer) -> Timestamp? {
        guard isSet, s.count == length, let text = s.baseAddress else { return nil }
        return known(at: text)
    }

    /// The `length` bytes at `text` (readable) if they are the last one's date and zone at
    /// another valid time of day.
    @inline(__always) private func known(at text: UnsafeRawPointer) -> Timestamp? {
        guard text.loadUnaligned(as: UInt64.self) == date.0,
            text.loadUnaligned(fromByteOffset: 7, as: UInt32.self) == date.1,
            text.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self) & zoneMask == zone,
            let seconds = Self.timeOfDay(word: text.loadUnaligned(fromByteOffset: 11, as: UInt64.self))
        else { return nil }
        return Timestamp(microseconds: midnight &+ seconds &* ISO8601.microsPerSecond, form: form)
    }

    @inline(__always) private static func date(_ s: UnsafeRawBufferPointer) -> (UInt64, UInt32) {
        (s.loadUnaligned(as: UInt64.self), s.loadUnaligned(fromByteOffset: 7, as: UInt32.self))
    }

    /// Bytes 19 and on of a 20- or 25-byte text (its zone), as the high bytes of its last word.
    @inline(__always) private static func zone(_ s: UnsafeRawBufferPointer) -> UInt64 {
        s.loadUnaligned(fromByteOffset: s.count - 8, as: UInt64.self) & zoneMask(s.count)
    }

    /// The bits of a 20- or 25-byte text's last word that hold its zone.
    @inline(__always) private static func zoneMask(_ count: Int) -> UInt64 { ~0 << (8 * (8 - (count - 19))) }

    /// `HH:MM:SS` at offset 11 as seconds, or nil if it is not a valid time of day. Checked and
    /// read as one word, with the zone: byte by byte, the year's compaction read its templates'
    /// timestamps in 192M instructions, as words in 156M (callgrind).
    @inline(__always) private static func timeOfDay(_ s: UnsafeRawBufferPointer) -> Int64? {
        timeOfDay(word: s.loadUnaligned(fromByteOffset: 11, as: UInt64.self))
    }

    /// `HH:MM:SS` as the 8 bytes of `word`, as in ``timeOfDay(_:)``.
    @inline(__always) private static func timeOfDay(word: UInt64) -> Int64? {
        // Little-endian: byte k of the text is bits 8k ..< 8k + 8 of the word.
        let colons: UInt64 = 0x0000_FF00_00FF_0000
        let highNibbles: UInt64 = 0xF0F0_00F0_F000_F0F0
        let lowNibbles: UInt64 = 0x0F0F_000F_0F00_0F0F
        // Colons at 13 and 16; digits elsewhere: high nibble 3, low nibble at most 9 (adding 6
        // carries into the high nibble from 10 up).
        guard word & colons == 0x0000_3A00_003A_0000, word & highNibbles == 0x3030_0030_3000_3030,
            (word & lowNibbles &+ 0x0606_0006_0600_0606) & highNibbles == 0
        else { return nil }
        let v = word & lowNibbles
        @inline(__always) func two(_ at: UInt64) -> Int64 { Int64((v >> at & 0xF) * 10 + (v >> (at + 8) & 0xF)) }
        let (hour, minute, second) = (two(0), two(24), two(48))
        guard hour <= 23, minute <= 59, second <= 59 else { return nil }
        return hour * 3600 + minute * 60 + second
    }
}
