import XCTest

@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// The export scanner reads a tag written as Health writes it in one pass; anything else it reads
/// as before, in two. The two must agree on every input: the same elements, lines, offsets and
/// attributes, or the same error message.
final class XMLTagReadingTests: XCTestCase {
    /// Tags as an export has them, and the bytes that make a tag malformed or unusual.
    static let tags = [
        "<Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\"Watch\" value=\"62\"/>",
        "<Record type='a' unit=\"count/min\" startDate=\"2025-01-01 08:00:00 +0100\">",
        "<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"1\"/>", "</Record>", "</Record >",
        "<Workout a=\"1\"b=\"2\">", "<Me\n  x=\"&amp;&lt;\"\r\n/>", "<a/>", "<a>", "</a>",
        "<HealthData locale=\"en_US\">",
    ]
    static let noise: [UInt8] = Array("<>/=\"' \n\r\tab!?-[]&;9é".utf8) + [0x0B, 0x80, 0xFF]

    /// `text` scanned whole in one pass, then in random chunks in one pass and in two.
    func assertSameReading(_ text: [UInt8], _ random: inout SplitMix64, _ what: String) {
        text.withUnsafeBytes { bytes in
            let onePass = scanExportXML(bytes, chunk: max(bytes.count, 1))
            let chunk = 1 + Int(random.next() % 64)
            XCTAssertEqual(onePass, scanExportXML(bytes, chunk: chunk, onePass: false), "\(what), chunks of \(chunk)")
            XCTAssertEqual(onePass, scanExportXML(bytes, chunk: chunk), "\(what), chunks of \(chunk)")
        }
    }

    /// Runs of export tags, each byte of which may be dropped, doubled or replaced by markup.
    func testOnePassReadsWhatTwoPassesRead() {
        var random = SplitMix64(seed: 11)
        var elements = 0
        for run in 0..<4_000 {
            var text: [UInt8] = []
            for _ in 0..<(1 + random.next() % 6) {
                text += Array(Self.tags[Int(random.next() % UInt64(Self.tags.count))].utf8) + [0x0A]
            }
            let mutations = Int(random.next() % 3)
            for _ in 0..<mutations where !text.isEmpty {
                let at = Int(random.next() % UInt64(text.count))
                switch random.next() % 3 {
                case 0: text.remove(at: at)
                case 1: text.insert(text[at], at: at)
                default: text[at] = Self.noise[Int(random.next() % UInt64(Self.noise.count))]
                }
            }
            assertSameReading(text, &random, "run \(run): \(String(decoding: text, as: UTF8.self))")
            if mutations == 0 { elements += 1 }
        }
        XCTAssertGreaterThan(elements, 1_000)
    }

    /// Every tag cut at every byte, then ended: each prefix is malformed or incomplete somewhere.
    func testEveryCutOfEveryTag() {
        var random = SplitMix64(seed: 5)
        for tag in Self.tags {
            let bytes = Array(tag.utf8)
            for cut in 0...bytes.count {
                for tail in ["", ">", "/>", "\"/>", "'>", " b=\"c\">"] {
                    assertSameReading(
                        Array(bytes[..<cut]) + Array(tail.utf8), &random, "\(tag) cut at \(cut) + \(tail)")
                }
            }
        }
    }

    /// A record's element as the builder sees it: kind, name, line, offset, each attribute decoded.
    func testARecordsElement() {
        let text = Array(Self.tags[0].utf8)
        let lines = text.withUnsafeBytes { scanExportXML($0, chunk: $0.count) }
        XCTAssertEqual(
            lines,
            [
                "empty Record 1 0 [\"type=HKQuantityTypeIdentifierHeartRate\", \"sourceName=Watch\", \"value=62\"]"
            ])
    }
}
