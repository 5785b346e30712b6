import Foundation
import XCTest

@testable import TSDB
@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// Reading a `Record` tag's attributes and dates from its bytes, against the ways they were read
/// before (kept here as oracles): each attribute looked up by name, each date field by a loop.
final class RecordReadingTests: XCTestCase {
    /// Every element of `xml`, handed to `body` while it is valid.
    func scan(_ xml: String, _ body: (HealthXMLScanner.Element) -> Void) throws {
        var scanner = HealthXMLScanner(source: "test")
        try Array(xml.utf8).withUnsafeBytes { try scanner.feed($0) { body($0) } }
        try scanner.finish { body($0) }
    }

    /// One pass finds what a lookup by name finds: the first attribute of each name, whatever
    /// their order, repeats, and other names of the same length (`unit` and `type` share one).
    func testRecordAttributesAreTheFirstOfEachName() throws {
        let names = [
            "type", "sourceName", "sourceVersion", "device", "unit", "creationDate", "startDate", "endDate", "value",
        ]
        let others = [
            "typo", "Unit", "tipe", "valuE", "devize", "endDat3", "startDatE", "sourceNamf", "creationDat_",
            "sourceVersioN", "x", "startDates", "dateComponents", "key",
        ]
        var random = SplitMix64(seed: 17)
        var xml = "<HealthData>\n"
        var checked = 0
        for record in 0..<3_000 {
            xml += "<Record"
            for k in 0..<Int(random.next() % 14) {
                let pool = random.next() % 3 == 0 ? others : names
                let name = pool[Int(random.next() % UInt64(pool.count))]
                xml += " \(name)=\"\(record).\(k)&amp;\(random.next() % 100)\""
            }
            xml += random.next() % 2 == 0 ? "/>\n" : "></Record>\n"
        }
        xml += "</HealthData>\n"
        try scan(xml) { e in
            guard e.isNamed("Record"), e.kind != .end else { return }
            let a = RecordAttributes(e)
            let found: [UnsafeRawBufferPointer?] = [
                a.type, a.sourceName, a.sourceVersion, a.device, a.unit, a.creationDate, a.startDate, a.endDate,
                a.value,
            ]
            let expected: [UnsafeRawBufferPointer?] = [
                e.rawAttribute("type"), e.rawAttribute("sourceName"), e.rawAttribute("sourceVersion"),
                e.rawAttribute("device"), e.rawAttribute("unit"), e.rawAttribute("creationDate"),
                e.rawAttribute("startDate"), e.rawAttribute("endDate"), e.rawAttribute("value"),
            ]
            for (k, (f, x)) in zip(found, expected).enumerated() {
                XCTAssertEqual(f.map(Array.init), x.map(Array.init), "\(names[k]) at line \(e.line)")
                // The same bytes of the tag, not a copy.
                XCTAssertEqual(f?.baseAddress, x?.baseAddress, "\(names[k]) at line \(e.line)")
            }
            checked += 1
        }
        XCTAssertEqual(checked, 3_000)
    }

    /// An element's name is classified as testing it against each name would: the builder's
    /// names, names of their lengths that differ in one byte (first, middle, last), prefixes and
    /// extensions of them, in start, end and empty tags.
    func testElementNamesAreClassifiedAsByName() throws {
        let known: [(StaticString, ExportElementName)] = [
            ("Record", .record), ("Workout", .workout), ("Correlation", .correlation),
            ("MetadataEntry", .metadataEntry), ("HeartRateVariabilityMetadataList", .beatList),
            ("InstantaneousBeatsPerMinute", .beat), ("ActivitySummary", .activitySummary), ("ExportDate", .exportDate),
        ]
        var names = ["Me", "WorkoutRoute", "FileReference", "WorkoutStatistics", "HealthData", "R", "Records"]
        for (name, _) in known {
            let text = "\(name)"
            let bytes = Array(text.utf8)
            for k in [0, bytes.count / 2, bytes.count - 1] {
                var other = bytes
                other[k] = other[k] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
                names.append(String(decoding: other, as: UTF8.self))
            }
            names += [text, String(text.dropLast()), text + "s"]
        }
        var xml = "<HealthData>\n"
        for name in names { xml += "<\(name) a=\"1\">\n</\(name)>\n<\(name)/>\n" }
        xml += "</HealthData>\n"
        var seen = 0
        var matched = 0
        try scan(xml) { e in
            let expected = known.first { e.isNamed($0.0) }?.1 ?? .other
            XCTAssertEqual(ExportElementName(e), expected, "\(e.name) at line \(e.line)")
            seen += 1
            if expected != .other { matched += 1 }
        }
        XCTAssertEqual(seen, names.count * 3 + 2)
        XCTAssertEqual(matched, known.count * 3)
    }

    /// The parser as it was before it read two digits at a time: the oracle.
    static func referenceParse(_ b: [UInt8]) -> (micros: Int64, offsetMinutes: Int)? {
        guard b.count == 25, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20,
            b[20] == 0x2B || b[20] == 0x2D
        else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var v = 0
            for k in r {
                let d = Int(b[k]) - 48
                guard d >= 0 && d <= 9 else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10), let h = number(11..<13),
            let mi = number(14..<16), let s = number(17..<19), let oh = number(21..<23), let om = number(23..<25),
            (1...12).contains(mo), d >= 1, d <= ISO8601.daysInMonth(year: y, month: mo), h < 24, mi < 60, s < 60
        else { return nil }
        let offset = (b[20] == 0x2D ? -1 : 1) * (oh * 60 + om)
        let local = ISO8601.days(year: y, month: mo, day: d) * 86_400 + Int64(h * 3600 + mi * 60 + s)
        return ((local - Int64(offset) * 60) * 1_000_000, offset)
    }

    /// Read date after date, as the builder reads them: most share the day of the one before.
    var dates = HealthDates()

    /// `text` reads as the reference reads it, by ``HealthDate`` and by ``dates`` (after the
    /// texts before it).
    func assertParsesAsBefore(_ text: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let expected = Self.referenceParse(text)
        let what = String(decoding: text, as: UTF8.self)
        for parsed in [text.withUnsafeBytes { HealthDate.parse($0) }, text.withUnsafeBytes { dates.parse($0) }] {
            XCTAssertEqual(parsed?.micros, expected?.micros, what, file: file, line: line)
            XCTAssertEqual(parsed?.offsetMinutes, expected?.offsetMinutes, what, file: file, line: line)
        }
    }

    /// Every day of a leap year and of the years around it (month ends, 29 February), at times
    /// and offsets at their bounds and beyond.
    func testEveryDayParsesAsBefore() {
        let times = ["00:00:00", "23:59:59", "12:34:56", "24:00:00", "23:60:00", "23:59:60", "99:99:99"]
        let offsets = ["+0000", "-0000", "+0545", "-1200", "+1400", "+9959", "-0030"]
        var valid = 0
        for year in [1900, 1999, 2000, 2001, 2024, 2100, 9999] {
            for month in 0...13 {
                for day in 0...32 {
                    let date = String(format: "%04d-%02d-%02d", year, month, day)
                    for (k, time) in times.enumerated() {
                        let text = Array("\(date) \(time) \(offsets[(day + k) % offsets.count])".utf8)
                        assertParsesAsBefore(text)
                        if Self.referenceParse(text) != nil { valid += 1 }
                    }
                }
            }
        }
        // Three of the times are times, every year has 365 days, and 2000 and 2024 have a 29 February.
        XCTAssertEqual(valid, 3 * (7 * 365 + 2))
    }

    /// Each byte of a date replaced by each kind of byte: digits, the separators, the bytes either
    /// side of the digits (which wrap below zero or land just above nine), and bytes beyond ASCII.
    func testEveryPositionAndByteParsesAsBefore() {
        let dates = ["2021-11-09 02:25:29 +0200", "2024-02-29 23:59:59 -1145", "1970-01-01 00:00:00 +0000"]
        let bytes: [UInt8] = Array(0x2B...0x3B) + [0x00, 0x20, 0x41, 0x7F, 0x80, 0xC3, 0xFF]
        for date in dates {
            let text = Array(date.utf8)
            assertParsesAsBefore(text)
            XCTAssertNotNil(text.withUnsafeBytes { HealthDate.parse($0) }, date)
            for position in text.indices {
                for byte in bytes {
                    var changed = text
                    changed[position] = byte
                    // Its day remembered: the change is read against it.
                    _ = text.withUnsafeBytes { self.dates.parse($0) }
                    assertParsesAsBefore(changed)
                }
            }
            for length in [0, 1, 19, 24] { assertParsesAsBefore(Array(text.prefix(length))) }
            assertParsesAsBefore(text + [0x30])
        }
    }

    /// Random texts of date-like bytes, most of them near misses.
    func testRandomTextsParseAsBefore() {
        var random = SplitMix64(seed: 23)
        let shape = Array("2021-11-09 02:25:29 +0200".utf8)
        let alphabet = Array("0123456789-+: /".utf8)
        for _ in 0..<50_000 {
            var text = shape.map { byte -> UInt8 in
                guard byte >= 0x30 && byte <= 0x39 else { return byte }
                return random.next() % 8 == 0 ? alphabet[Int(random.next() % 15)] : UInt8(0x30 + random.next() % 10)
            }
            if random.next() % 16 == 0 { text[Int(random.next() % 25)] = alphabet[Int(random.next() % 15)] }
            assertParsesAsBefore(text)
        }
    }
}
