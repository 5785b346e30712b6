import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A raw file's path kept as its day file's date: the same text, order, equality and stored bytes
/// as the path string it replaces, for day files and for everything that only looks like one.
@Suite struct RawPathTests {
    /// Day files of every kind of date, and paths one step away from a day file's form.
    static func pool(_ rng: inout SplitMix64) -> [String] {
        var paths = [
            "../exports/2025-06-01.zip", "../exports/export.xml", "0000/01/0000-01-01.json", "9999/12/9999-12-31.json",
            "2024/02/2024-02-29.json", "2025/02/2025-02-29.json", "2025/03/2025-04-01.json",
            "2026/03/2025-03-01.json", "2025/03/2025-03-01.jsonx", "2025/03/2025-03-01.JSON", "2025/3/2025-03-01.json",
            "2025-03/2025-03-01.json", "2025/03/2025/03/01.json", "2025/03/2025-03-00.json", "2025/13/2025-13-01.json",
            "2025/03/2025-03-01.json ", "2025/03/2025-03-01", "", "2025/03/2025-03-1a.json", "ä025/03/2025-03-01.json",
        ]
        for _ in 0..<200 {
            let day = Int64.random(in: -719_528..<2_932_897, using: &rng)  // 0000-01-01 ..< 10000-01-01
            let (y, m, d) = ISO8601.civil(day)
            paths.append(String(format: "%04d/%02d/%04d-%02d-%02d.json", y, m, y, m, d))
        }
        return paths
    }

    @Test func keepsTheTextItWasMadeFrom() {
        var rng = SplitMix64(seed: 11)
        for text in Self.pool(&rng) {
            let path = RawPath(text)
            #expect(path.description == text)
            #expect(RawPath(path.description) == path)
            // Only a day file's own form is read as a date, and its date is the file name's.
            let u = Array(text.utf8)
            let isDayFile =
                u.count == 23 && u[4] == UInt8(ascii: "/") && u[7] == UInt8(ascii: "/") && text.hasSuffix(".json")
                && text.prefix(4) == text.dropFirst(8).prefix(4)
                && text.dropFirst(5).prefix(2) == text.dropFirst(13).prefix(2)
                && DayFileParser.isCalendarDate(String(text.dropFirst(8).prefix(10)))
            #expect((path.day != nil) == isDayFile, "\(text)")
            if let day = path.day, let date = DayFileParser.calendarDate(text.dropFirst(8).prefix(10)) {
                #expect(day == ISO8601.days(year: date.year, month: date.month, day: date.day))
            }
        }
    }

    @Test func ordersAndComparesAsItsText() {
        var rng = SplitMix64(seed: 12)
        let texts = Self.pool(&rng)
        for _ in 0..<4000 {
            let (a, b) = (texts.randomElement(using: &rng)!, texts.randomElement(using: &rng)!)
            #expect((RawPath(a) < RawPath(b)) == (a < b), "\(a) < \(b)")
            #expect((RawPath(a) == RawPath(b)) == (a == b), "\(a) == \(b)")
        }
        #expect(texts.map(RawPath.init).sorted().map(\.description) == texts.sorted())
    }

    @Test func storesTheBytesOfItsText() throws {
        var rng = SplitMix64(seed: 13)
        for text in Self.pool(&rng) {
            var expected = ByteWriter()
            expected.string(text)
            var written = ByteWriter()
            RawPath(text).write(to: &written)
            #expect(written.bytes == expected.bytes, "\(text)")
            let read = try written.bytes.withUnsafeBytes { bytes in
                var reader = ByteReader(bytes, context: "test")
                return try reader.rawPath("raw path")
            }
            #expect(read == RawPath(text) && read.description == text)
        }
    }

    @Test func refusesAPathThatIsNotUTF8() {
        var w = ByteWriter()
        w.uvarint(23)
        w.append(Array("2025/03/2025-03-01.jso".utf8) + [0xFF])
        #expect(throws: TSDBError.self) {
            try w.bytes.withUnsafeBytes { bytes in
                var reader = ByteReader(bytes, context: "test")
                return try reader.rawPath("raw path")
            }
        }
    }
}
