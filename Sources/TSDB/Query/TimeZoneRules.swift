/// UTC offsets of an IANA time zone, read from the system's TZif files (RFC 8536), without
/// Foundation or ICU (they cost milliseconds of start-up per process).
///
/// Transitions come from the file's 64-bit table; instants after the last one follow the
/// POSIX TZ rule in the file's footer (`CET-1CEST,M3.5.0,M10.5.0/3`), so "slim" zone files work.
public struct TimeZoneRules: Sendable, Equatable {
    public let identifier: String
    /// Transition instants (seconds since the epoch, UTC), sorted, and the offset in force from each.
    let transitions: [Int64]
    let offsets: [Int32]
    /// Offset before the first transition.
    let initialOffset: Int32
    let footer: PosixRule?

    public static let utc = TimeZoneRules(
        identifier: "UTC", transitions: [], offsets: [], initialOffset: 0, footer: nil)

    /// A fixed offset, e.g. for `+05:30`.
    public static func fixed(seconds: Int32) -> TimeZoneRules {
        let minutes = abs(seconds) / 60
        let name = "UTC\(seconds < 0 ? "-" : "+")\(minutes / 60):\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)"
        return TimeZoneRules(
            identifier: seconds == 0 ? "UTC" : name, transitions: [], offsets: [], initialOffset: seconds,
            footer: nil)
    }

    static let zoneDirectories = ["/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo"]

    /// Loads an IANA zone (`Europe/Paris`), `UTC`, or a fixed offset (`+05:30`, `-08:00`).
    public static func named(_ name: String) throws(TSDBError) -> TimeZoneRules {
        if name == "UTC" || name == "Z" || name == "Etc/UTC" { return .utc }
        if let first = name.first, first == "+" || first == "-", let t = Timestamp("2000-01-01T00:00:00" + name) {
            return .fixed(seconds: Int32(t.form.offsetMinutes) * 60)
        }
        guard !name.contains(".."), !name.hasPrefix("/"), !name.isEmpty else {
            throw TSDBError.invalidInput("\"\(name)\" is not a time zone name")
        }
        for dir in zoneDirectories
        where FileSystem.exists(dir + "/" + name) && !FileSystem.isDirectory(dir + "/" + name) {
            let file = try MappedFile(path: dir + "/" + name)
            return try file.withBytes { (b) throws(TSDBError) in try parse(b, identifier: name, path: file.path) }
        }
        throw TSDBError.notFound("unknown time zone \"\(name)\"; " + suggestions(for: name))
    }

    /// Zones to suggest for a name that is not one: a region's zones, or names close to it.
    static func suggestions(for name: String) -> String {
        let zones = knownZoneNames()
        let region = zones.filter { $0.lowercased().hasPrefix(name.lowercased() + "/") }
        if !region.isEmpty {
            let shown = region.prefix(100).joined(separator: ", ")
            return "\(name) is a region; its zones: \(shown)\(region.count > 100 ? ", …" : "")"
        }
        let cities = zones.map { ($0, String($0.split(separator: "/").last ?? "")) }
        let nearCities = Set(TypeNames.closest(to: name, among: cities.map(\.1)))
        let close =
            cities.filter { $0.1.lowercased() == name.lowercased() }.map(\.0)
            + TypeNames.closest(to: name, among: zones) + cities.filter { nearCities.contains($0.1) }.map(\.0)
        if let first = close.first { return "did you mean \(first)?" }
        return "use an IANA name such as Europe/Paris, or an offset such as +05:30"
    }

    /// Zone names listed in the system's zone1970.tab or zone.tab.
    static func knownZoneNames() -> [String] {
        for dir in zoneDirectories {
            for table in ["zone1970.tab", "zone.tab"] {
                guard let file = try? MappedFile(path: dir + "/" + table),
                    let text = try? file.withBytes({ (b) throws(TSDBError) in String(decoding: b, as: UTF8.self) })
                else { continue }
                let names = text.split(separator: "\n").compactMap { line -> String? in
                    guard !line.hasPrefix("#") else { return nil }
                    let fields = line.split(separator: "\t")
                    return fields.count >= 3 ? String(fields[2]) : nil
                }
                if !names.isEmpty { return names.sorted() + ["UTC"] }
            }
        }
        return ["UTC"]
    }

    /// The system zone: `$TZ`, else `/etc/localtime`, else UTC. A `$TZ` that names no zone gives
    /// UTC and a problem to report (what was wrong, and that UTC is used).
    public static func system(environment tz: String?) -> (zone: TimeZoneRules, problem: String?) {
        if let tz, !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            do throws(TSDBError) {
                return (try named(name), nil)
            } catch {
                return (.utc, "TZ=\(tz) is not a time zone this system knows (\(error.message)); using UTC")
            }
        }
        return (systemDefault(), nil)
    }

    static func systemDefault() -> TimeZoneRules {
        if let target = FileSystem.realPath("/etc/localtime") {
            for dir in zoneDirectories where target.hasPrefix(dir + "/") {
                if let z = try? named(String(target.dropFirst(dir.count + 1))) { return z }
            }
            if let file = try? MappedFile(path: target),
                let z = try? file.withBytes({ (b) throws(TSDBError) in
                    try parse(b, identifier: "localtime", path: target)
                })
            {
                return z
            }
        }
        return .utc
    }

    /// The first instant (µs) of local day `day` (days since 1970-01-01): local midnight, or where
    /// midnight falls in a gap, the end of the gap (the first instant with that date).
    public func startOfDay(_ day: Int64) -> Int64 {
        let midnight = day * 86_400
        let t = utc(fromLocal: midnight)
        // In a gap utc(fromLocal:) moves forward by the gap's length; the day starts at the jump.
        if let jump = lastTransition(atOrBefore: t), jump > t - 86_400, jump + Int64(offset(atUTC: jump)) >= midnight,
            jump - 1 + Int64(offset(atUTC: jump - 1)) < midnight
        {
            return jump * 1_000_000
        }
        return t * 1_000_000
    }

    /// Offset from UTC, in seconds, at an instant (µs).
    public func offset(atMicros micros: Int64) -> Int32 { offset(atUTC: ISO8601.floorDivide(micros, 1_000_000).0) }

    /// Offset from UTC, in seconds, at an instant.
    public func offset(atUTC seconds: Int64) -> Int32 {
        if let last = transitions.last, seconds >= last, let footer { return footer.offset(atUTC: seconds) }
        guard let first = transitions.first, seconds >= first else { return initialOffset }
        var lo = 0
        var hi = transitions.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if transitions[mid] <= seconds { lo = mid } else { hi = mid - 1 }
        }
        return offsets[lo]
    }

    /// The instant of a local wall-clock time (seconds since the epoch as if local were UTC).
    /// In a DST gap the wall time does not exist and the later offset's reading is used (02:30 on
    /// a spring-forward day becomes 03:30); in an overlap the earlier instant is chosen.
    public func utc(fromLocal local: Int64) -> Int64 {
        let a = Int64(offset(atUTC: local - 86_400))
        let b = Int64(offset(atUTC: local + 86_400))
        if a == b { return local - a }
        let early = local - a
        let late = local - b
        // Candidates whose offset agrees with themselves are real readings of this wall time.
        let earlyOK = Int64(offset(atUTC: early)) == a
        let lateOK = Int64(offset(atUTC: late)) == b
        if earlyOK && lateOK { return min(early, late) }
        if earlyOK { return early }
        if lateOK { return late }
        return early  // a gap: read with the offset before it, which lands after the jump

    }

    // MARK: Transitions

    /// The first instant after `t` (seconds) at which the offset changes, if any.
    public func nextTransition(after t: Int64) -> Int64? {
        var i = transitions.partitioningIndex { $0 > t }
        while i < transitions.count {
            if offsets[i] != (i == 0 ? initialOffset : offsets[i - 1]) { return transitions[i] }
            i += 1
        }
        guard let footer, footer.daylight != nil else { return nil }
        let floor = max(t, (transitions.last ?? .min) - 1)
        let year = ISO8601.civil(ISO8601.floorDivide(floor, 86_400).0).year
        return (year...year + 1).flatMap { footer.transitions(year: $0) }.filter { $0 > floor }.min()
    }

    /// The last instant at or before `t` (seconds) at which the offset changed, if any.
    public func lastTransition(atOrBefore t: Int64) -> Int64? {
        if let footer, footer.daylight != nil, let last = transitions.last, t >= last {
            let year = ISO8601.civil(ISO8601.floorDivide(t, 86_400).0).year
            if let x = (year - 1...year).flatMap({ footer.transitions(year: $0) }).filter({ $0 <= t && $0 >= last })
                .max()
            {
                return x
            }
        }
        var i = transitions.partitioningIndex { $0 > t } - 1
        while i >= 0 {
            if offsets[i] != (i == 0 ? initialOffset : offsets[i - 1]) { return transitions[i] }
            i -= 1
        }
        return nil
    }

    // MARK: TZif

    static func parse(_ b: UnsafeRawBufferPointer, identifier: String, path: String) throws(TSDBError) -> TimeZoneRules
    {
        var r = ByteReader(b, context: "TZif")
        func header() throws(TSDBError) -> (version: UInt8, counts: [Int]) {
            guard try r.bytes(4, "magic").elementsEqual(Array("TZif".utf8)) else { throw r.fail("not a TZif file") }
            let version = try r.u8("version")
            try r.skip(15, "reserved")
            var counts: [Int] = []
            for _ in 0..<6 { counts.append(Int(UInt32(bigEndian: try r.u32("count")))) }
            return (version, counts)
        }
        do throws(TSDBError) {
            var (version, c) = try header()
            // counts: isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
            var timeSize = 4
            if version >= UInt8(ascii: "2") {
                try r.skip(c[3] * 4 + c[3] + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0], "version 1 data")
                (version, c) = try header()
                timeSize = 8
            }
            var transitions: [Int64] = []
            for _ in 0..<c[3] {
                transitions.append(
                    timeSize == 8
                        ? Int64(bitPattern: UInt64(bigEndian: try r.u64("transition")))
                        : Int64(Int32(bitPattern: UInt32(bigEndian: try r.u32("transition")))))
            }
            var indices: [Int] = []
            for _ in 0..<c[3] { indices.append(Int(try r.u8("type index"))) }
            var typeOffsets: [Int32] = []
            var typeIsDST: [Bool] = []
            for _ in 0..<c[4] {
                typeOffsets.append(Int32(bitPattern: UInt32(bigEndian: try r.u32("utoff"))))
                typeIsDST.append(try r.u8("isdst") != 0)
                _ = try r.u8("abbreviation index")
            }
            guard !typeOffsets.isEmpty, indices.allSatisfy({ $0 < typeOffsets.count }) else {
                throw r.fail("bad local time type")
            }
            try r.skip(c[5] + c[2] * (timeSize + 4) + c[1] + c[0], "abbreviations and flags")
            var footer: PosixRule?
            if timeSize == 8, r.remaining > 2, (try? r.u8()) == 0x0A {
                let rest = try r.bytes(r.remaining, "footer")
                let text = String(decoding: rest.prefix { $0 != 0x0A }, as: UTF8.self)
                footer = PosixRule(text)
            }
            // Before the first transition: the first non-DST type (RFC 8536 §3.2), else type 0.
            let initial = typeOffsets[typeIsDST.firstIndex(of: false) ?? 0]
            return TimeZoneRules(
                identifier: identifier, transitions: transitions, offsets: indices.map { typeOffsets[$0] },
                initialOffset: initial, footer: footer)
        } catch {
            throw error.at(path: path)
        }
    }
}

/// A POSIX TZ rule such as `CET-1CEST,M3.5.0,M10.5.0/3` (offsets west-positive, as POSIX has them).
struct PosixRule: Sendable, Equatable {
    var standard: Int32
    var daylight: Int32?
    /// Start and end of daylight time: (month, week 1–5, weekday 0–6, seconds after local midnight).
    var start: (Int, Int, Int, Int32) = (0, 0, 0, 0)
    var end: (Int, Int, Int, Int32) = (0, 0, 0, 0)

    static func == (a: PosixRule, b: PosixRule) -> Bool {
        a.standard == b.standard && a.daylight == b.daylight && a.start == b.start && a.end == b.end
    }

    /// Parses the rule a TZif footer holds (RFC 8536 §3.3: ASCII), byte by byte: as `Character`s
    /// the Paris rule took 58K instructions of the 130K that reading Europe/Paris took.
    init?(_ text: String) {
        var parser = PosixRuleParser(Array(text.utf8))
        guard let rule = parser.rule() else { return nil }
        self = rule
    }

    init(standard: Int32, daylight: Int32?, start: (Int, Int, Int, Int32), end: (Int, Int, Int, Int32)) {
        (self.standard, self.daylight, self.start, self.end) = (standard, daylight, start, end)
    }

    /// Day number (since the epoch) of the `week`-th `weekday` of `month` (week 5 = last).
    static func ruleDay(year: Int, month: Int, week: Int, weekday: Int) -> Int64 {
        let first = ISO8601.days(year: year, month: month, day: 1)
        let firstWeekday = Int(((first % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4)
        var day = first + Int64((weekday - firstWeekday + 7) % 7) + Int64(7 * (week - 1))
        let monthLength = Int64(ISO8601.daysInMonth(year: year, month: month))
        while day >= first + monthLength { day -= 7 }
        return day
    }

    /// The two instants (seconds, UTC) at which daylight time starts and ends in `year`.
    func transitions(year: Int) -> [Int64] {
        guard let daylight else { return [] }
        let startUTC =
            Self.ruleDay(year: year, month: start.0, week: start.1, weekday: start.2) * 86_400
            + Int64(start.3) - Int64(standard)
        let endUTC =
            Self.ruleDay(year: year, month: end.0, week: end.1, weekday: end.2) * 86_400
            + Int64(end.3) - Int64(daylight)
        return [startUTC, endUTC]
    }

    func offset(atUTC seconds: Int64) -> Int32 {
        guard let daylight else { return standard }
        let (year, _, _) = ISO8601.civil(ISO8601.floorDivide(seconds + Int64(standard), 86_400).0)
        // Transition instants in UTC: start is given in standard time, end in daylight time.
        let startUTC =
            Self.ruleDay(year: year, month: start.0, week: start.1, weekday: start.2) * 86_400 + Int64(start.3)
            - Int64(standard)
        let endUTC =
            Self.ruleDay(year: year, month: end.0, week: end.1, weekday: end.2) * 86_400 + Int64(end.3)
            - Int64(daylight)
        if startUTC < endUTC { return seconds >= startUTC && seconds < endUTC ? daylight : standard }
        return seconds >= endUTC && seconds < startUTC ? standard : daylight  // southern hemisphere
    }
}

extension RandomAccessCollection where Element == Int64, Index == Int {
    /// The first index whose element satisfies `belongs` (which must be false, then true, along the
    /// collection); `endIndex` when none does.
    func partitioningIndex(where belongs: (Int64) -> Bool) -> Int {
        var lo = startIndex
        var hi = endIndex
        while lo < hi {
            let mid = (lo + hi) / 2
            if belongs(self[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}

/// An instant as ISO 8601 in `zone`, whole seconds, with that zone's offset.
public func localTimestamp(_ micros: Int64, _ zone: TimeZoneRules) -> String {
    let offset = Int16(zone.offset(atMicros: micros) / 60)
    return ISO8601.format(micros, TimeForm(offsetMinutes: offset, fractionDigits: 0, isZulu: false))
}

/// The local date (`YYYY-MM-DD`) of an instant in `zone`.
func localDate(_ micros: Int64, _ zone: TimeZoneRules) -> Substring { localTimestamp(micros, zone).prefix(10) }

/// The grammar of a POSIX TZ rule: `std offset [dst [offset] ,start[/time] ,end[/time]]`, names
/// of three or more letters or `<...>`, offsets and times `[+-]hh[:mm[:ss]]`, dates `Mm.w.d`.
private struct PosixRuleParser {
    let bytes: [UInt8]
    var i = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func rule() -> PosixRule? {
        guard name(), let std = time() else { return nil }
        guard i < bytes.count else {
            return PosixRule(standard: -std, daylight: nil, start: (0, 0, 0, 0), end: (0, 0, 0, 0))
        }
        guard name() else { return nil }
        var daylight = -std + 3600
        if let b = next, b != UInt8(ascii: ",") {
            guard let dst = time() else { return nil }
            daylight = -dst
        }
        guard let start = date(), let end = date() else { return nil }
        return PosixRule(standard: -std, daylight: daylight, start: start, end: end)
    }

    private var next: UInt8? { i < bytes.count ? bytes[i] : nil }
    private var nextIsDigit: Bool { next.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }

    private mutating func take(_ b: UInt8) -> Bool {
        guard next == b else { return false }
        i += 1
        return true
    }

    private mutating func name() -> Bool {
        if take(UInt8(ascii: "<")) {
            guard let close = bytes[i...].firstIndex(of: UInt8(ascii: ">")) else { return false }
            i = close + 1
            return true
        }
        let first = i
        while let b = next, (b | 0x20) >= UInt8(ascii: "a"), (b | 0x20) <= UInt8(ascii: "z") { i += 1 }
        return i - first >= 3
    }

    /// Decimal digits (at least one, at most six).
    private mutating func number() -> Int? {
        let first = i
        var v = 0
        while nextIsDigit && i - first < 6 {
            v = v * 10 + Int(bytes[i] - UInt8(ascii: "0"))
            i += 1
        }
        return i > first && !nextIsDigit ? v : nil
    }

    /// `[+-]hh[:mm[:ss]]` in seconds.
    private mutating func time() -> Int32? {
        var sign = 1
        if take(UInt8(ascii: "-")) { sign = -1 } else { _ = take(UInt8(ascii: "+")) }
        guard let hours = number() else { return nil }
        var seconds = hours * 3600
        if take(UInt8(ascii: ":")) {
            guard let minutes = number() else { return nil }
            seconds += minutes * 60
            if take(UInt8(ascii: ":")) {
                guard let s = number() else { return nil }
                seconds += s
            }
        }
        return Int32(exactly: sign * seconds)
    }

    /// `,Mm.w.d[/time]`: month, week 1–5, weekday 0–6, and the local time (default 02:00).
    private mutating func date() -> (Int, Int, Int, Int32)? {
        guard take(UInt8(ascii: ",")), take(UInt8(ascii: "M")), let month = number(), take(UInt8(ascii: ".")),
            let week = number(), take(UInt8(ascii: ".")), let weekday = number(), next != UInt8(ascii: ".")
        else { return nil }
        var at: Int32 = 7200
        if take(UInt8(ascii: "/")) {
            guard let t = time() else { return nil }
            at = t
        }
        return (month, week, weekday, at)
    }
}
