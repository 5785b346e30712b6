import XCTest

@testable import TSDB
@testable import TSDBSynthetic

/// The word-at-a-time test for text that goes into a JSON string as it is, against its
/// definition a byte at a time, and the in-place writer against the appending one.
final class JSONEscapingTests: XCTestCase {
    static func needsNoEscapingByDefinition(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }
    }

    /// Every byte value at every position of texts of 0–24 bytes, amid plain bytes and amid bytes
    /// beyond ASCII (whose high bits the word test must not take for a match).
    func testEveryByteAtEveryPosition() {
        for filler: UInt8 in [0x61, 0xFF, 0x80, 0x21, 0x5D] {
            for length in 0...24 {
                let plain = [UInt8](repeating: filler, count: length)
                XCTAssertEqual(plain.withUnsafeBytes(DayFileWriter.needsNoEscaping), true, "\(filler) × \(length)")
                for position in 0..<length {
                    for byte in 0...255 {
                        var text = plain
                        text[position] = UInt8(byte)
                        XCTAssertEqual(
                            text.withUnsafeBytes(DayFileWriter.needsNoEscaping), Self.needsNoEscapingByDefinition(text),
                            "byte \(byte) at \(position) of \(length), amid \(filler)")
                    }
                }
            }
        }
    }

    /// Random texts of bytes near the ones that need escaping, and the writer into a row: the same
    /// bytes as the appending writer, within the room it is promised.
    func testRandomTextsAndTheRowWriter() {
        let near: [UInt8] = [
            0x00, 0x01, 0x09, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xDC,
        ]
        var random = SplitMix64(seed: 29)
        var escapedTexts = 0
        for round in 0..<20_000 {
            let text = (0..<Int(random.next() % 40)).map { _ in
                random.next() % 12 == 0
                    ? near[Int(random.next() % UInt64(near.count))] : UInt8(0x20 + random.next() % 95)
            }
            let plain = text.withUnsafeBytes(DayFileWriter.needsNoEscaping)
            XCTAssertEqual(plain, Self.needsNoEscapingByDefinition(text), "round \(round): \(text)")
            if !plain { escapedTexts += 1 }
            var appended: [UInt8] = []
            text.withUnsafeBytes { DayFileWriter.appendJSONString(utf8: $0, to: &appended) }
            var written: [UInt8] = []
            text.withUnsafeBytes { t in
                RowBytes.append(to: &written, capacity: 6 * t.count + 2) {
                    DayFileWriter.writeJSONString(utf8: t, to: &$0)
                }
            }
            XCTAssertEqual(written, appended, "round \(round)")
        }
        XCTAssertGreaterThan(escapedTexts, 5_000)  // both paths taken often
    }
}
