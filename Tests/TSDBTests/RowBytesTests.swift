import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// `RowBytes`' word-at-a-time writers against byte-by-byte oracles, in rows of every room from
/// exactly enough (byte by byte there) to plenty (whole words), so both paths are swept.
@Suite struct RowBytesTests {
    /// What `write(untilControlByte:limit:)` must copy: the bytes before the first one below 0x20.
    static func prefixBeforeControl(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.prefix { $0 >= 0x20 })
    }

    /// Copies from `source` into a row of `room` bytes; returns the count and the row's bytes.
    static func copy(_ source: [UInt8], room: Int) -> (Int, [UInt8]) {
        var copied = 0
        var bytes: [UInt8] = []
        source.withUnsafeBufferPointer { source in
            RowBytes.append(to: &bytes, capacity: room) { out in
                copied = out.write(untilControlByte: source.baseAddress!, limit: source.count)
            }
        }
        return (copied, bytes)
    }

    /// A control byte (tab, new line, 0x00, 0x1F) at every position of sources up to 24 bytes, and
    /// none at all; the other bytes printable ASCII, 0x20 and 0x7F, and bytes of 0x80 and above.
    @Test func copiesUpToTheFirstControlByteWhereverItLies() {
        var random = SplitMix64(seed: 31)
        let plain: [UInt8] = [0x20, 0x21, 0x30, 0x39, 0x41, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0xC3, 0xFF]
        let controls: [UInt8] = [0x09, 0x0A, 0x00, 0x1F]
        for length in 0...24 {
            for at in 0...length {
                var source = (0..<length).map { _ in plain[Int(random.next() % UInt64(plain.count))] }
                if at < length { source[at] = controls[Int(random.next() % UInt64(controls.count))] }
                let expected = Self.prefixBeforeControl(source)
                for room in [expected.count, expected.count + 3, expected.count + 8, expected.count + 40] {
                    let (copied, bytes) = Self.copy(source, room: room)
                    #expect(copied == expected.count && bytes == expected, "length \(length), at \(at), room \(room)")
                }
            }
        }
    }

    /// Control bytes after the first never change what is copied (a borrow from the first must not
    /// hide it or flag an earlier byte).
    @Test func laterControlBytesDoNotMoveTheFirst() {
        let source: [UInt8] = Array("abcdefg".utf8) + [0x00, 0x09, 0x01, 0x0A] + Array("hijklmnop".utf8)
        for start in 0..<source.count {
            let tail = Array(source[start...])
            let (copied, bytes) = Self.copy(tail, room: 64)
            #expect(bytes == Self.prefixBeforeControl(tail) && copied == bytes.count, "from \(start)")
        }
    }

    /// Spaces in rows from exactly enough room to plenty, after a few bytes already written.
    @Test func spacesFillExactlyWhatIsAsked() {
        for before in 0..<3 {
            for n in 0...20 {
                for slack in [0, 1, 7, 8, 30] {
                    var bytes: [UInt8] = []
                    RowBytes.append(to: &bytes, capacity: before + n + slack) { out in
                        for _ in 0..<before { out.byte(UInt8(ascii: "x")) }
                        out.spaces(n)
                    }
                    let expected =
                        [UInt8](repeating: UInt8(ascii: "x"), count: before)
                        + [UInt8](repeating: UInt8(ascii: " "), count: n)
                    #expect(bytes == expected, "\(before) bytes, \(n) spaces, \(slack) spare")
                }
            }
        }
    }
}
