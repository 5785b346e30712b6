/// Where a raw file is, relative to `raw/`. A day file's path follows from its date
/// (raw-json-v1.md §1: `YYYY/MM/YYYY-MM-DD.json`), so it is kept as that date and its text made only
/// when asked for; any other path (an export's `../exports/<name>`) is kept as text. A compaction
/// with nothing to do made, compared, copied and freed a path string for each of a year's day
/// files several times over (listing, manifest, plan, new manifest).
///
/// Equal paths are equal values (a day file's text is always read as its date), and the order is
/// the texts' order: `YYYY/MM/YYYY-MM-DD.json` has fixed widths, so it sorts as the dates do.
public struct RawPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    private enum Form: Hashable {
        /// Days since 1970-01-01 of a date in years 0000-9999.
        case day(Int64)
        case text(String)
    }

    private let form: Form

    /// The length of `YYYY/MM/YYYY-MM-DD.json`.
    static let dayFileLength = 23

    /// The path of the day file of `day` (days since 1970-01-01, in years 0000-9999).
    init(day: Int64) {
        assert((ISO8601.days(year: 0, month: 1, day: 1)..<ISO8601.days(year: 10_000, month: 1, day: 1)).contains(day))
        form = .day(day)
    }

    /// `text`, read as a day file's date when it has that form.
    public init(_ text: String) {
        var text = text
        let day = text.withUTF8 { Self.day(UnsafeRawBufferPointer($0)) }
        form = day.map { .day($0) } ?? .text(text)
    }

    /// The path whose UTF-8 bytes are `bytes`: a day file's made without a string; any other's
    /// through `text` (which may refuse it).
    init<E: Error>(bytes: UnsafeRawBufferPointer, text: (UnsafeRawBufferPointer) throws(E) -> String) throws(E) {
        if let day = Self.day(bytes) {
            form = .day(day)
        } else {
            form = .text(try text(bytes))
        }
    }

    /// The date of a day file's path, or nil when `bytes` are not one: its form checked byte by
    /// byte, then its name's date read as a listing reads it (through generic slice comparisons,
    /// the form took ~950 instructions a path).
    private static func day(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count == dayFileLength, let p = bytes.baseAddress else { return nil }
        @inline(__always) func at(_ i: Int) -> UInt8 { p.load(fromByteOffset: i, as: UInt8.self) }
        // The folders' year and month are the file name's.
        guard at(0) == at(8), at(1) == at(9), at(2) == at(10), at(3) == at(11), at(5) == at(13), at(6) == at(14),
            at(4) == slash, at(7) == slash, p.loadUnaligned(fromByteOffset: 18, as: UInt32.self) == dotJSON,
            at(22) == UInt8(ascii: "n"),
            let date = DayFileParser.calendarDate(
                bytes: UnsafeBufferPointer(start: (p + 8).assumingMemoryBound(to: UInt8.self), count: 10))
        else { return nil }
        return ISO8601.days(year: date.year, month: date.month, day: date.day)
    }

    /// `.jso` as the little-endian word it loads as.
    private static let dotJSON = UInt32(littleEndian: 0x6F73_6A2E)
    private static let slash = UInt8(ascii: "/")

    /// The day file's date as days since 1970-01-01, or nil for any other path.
    public var day: Int64? {
        if case .day(let d) = form { d } else { nil }
    }

    /// The path as text.
    public var description: String {
        switch form {
        case .text(let s): s
        case .day(let d): String(unsafeUninitializedCapacity: Self.dayFileLength) { Self.write(day: d, to: $0) }
        }
    }

    /// Relative paths of exports start here (manifest entries are relative to `raw/`).
    static let exportPrefix = "../exports/"

    /// An Apple Health export kept in `exports/` rather than a day file.
    public var isExport: Bool {
        if case .text(let s) = form { s.hasPrefix(Self.exportPrefix) } else { false }
    }

    public static func < (a: RawPath, b: RawPath) -> Bool {
        switch (a.form, b.form) {
        case (.day(let x), .day(let y)): x < y
        default: a.description < b.description
        }
    }

    /// The 23 bytes of `YYYY/MM/YYYY-MM-DD.json`, as three little-endian words (the last holds 7).
    /// Made in registers: digit by digit into a buffer, a manifest's paths took ~1,000 instructions
    /// each to write.
    private static func words(day: Int64) -> (UInt64, UInt64, UInt64) {
        let (y, m, d) = ISO8601.civil(day)
        @inline(__always) func digit(_ v: Int, _ shift: UInt64) -> UInt64 { UInt64(48 + v % 10) << shift }
        let year = digit(y / 1000, 0) | digit(y / 100, 8) | digit(y / 10, 16) | digit(y, 24)
        let month = digit(m / 10, 0) | digit(m, 8)
        // `YYYY/MM/`, `YYYY-MM-`, `DD.json`.
        let folder = year | 0x2F << 32 | month << 40 | 0x2F << 56
        let stem = year | 0x2D << 32 | month << 40 | 0x2D << 56
        let name = digit(d / 10, 0) | digit(d, 8) | 0x6E_6F73_6A2E << 16
        return (folder, stem, name)
    }

    private static func write(day: Int64, to out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let (a, b, c) = words(day: day)
        let raw = UnsafeMutableRawPointer(out.baseAddress!)
        raw.storeBytes(of: a.littleEndian, toByteOffset: 0, as: UInt64.self)
        raw.storeBytes(of: b.littleEndian, toByteOffset: 8, as: UInt64.self)
        withUnsafeBytes(of: c.littleEndian) { raw.advanced(by: 16).copyMemory(from: $0.baseAddress!, byteCount: 7) }
        return dayFileLength
    }

    /// Appends the path as the manifest stores it: its length as a uvarint, then its bytes.
    func write(to w: inout ByteWriter) {
        switch form {
        case .text(let s): w.string(s)
        case .day(let d):
            // The length (23, one byte) and the path: 24 bytes, three words, one append.
            let (a, b, c) = Self.words(day: d)
            w.record(capacity: 24) { r in
                r.u64(UInt64(Self.dayFileLength) | a << 8)
                r.u64(a >> 56 | b << 8)
                r.u64(b >> 56 | c << 8)
            }
        }
    }
}
