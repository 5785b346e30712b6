import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A segment's dictionaries (Formats/segment-v3.md §4) as the writer builds them from the
/// compactor's interner: each sample reads back its own strings, whatever their number and order.
@Suite struct SegmentDictionaryTests {
    /// Writes `file`'s samples (sorted) as one segment and reads it back.
    func roundTrip(_ file: inout ParsedDayFile) throws -> [Sample] {
        Compactor.sortAndDeduplicate(&file.samples)
        let bytes = file.samples.withUnsafeBufferPointer {
            SegmentWriter().encode(type: "T", year: 2025, month: 3, samples: $0, strings: file.strings)
        }
        return try readSegment(SegmentReader(file: bytes.withUnsafeBytes { MappedFile(copying: $0, path: "t") }))
    }

    /// Thousands of distinct strings drawn from a much larger interner (mostly other segments'
    /// strings), repeated in random order: the dictionaries' tables grow many times, and a sample's
    /// strings are its own (the oracle is each sample's texts, kept beside it).
    @Test func manyDistinctStringsComeBackAsEachSamplesOwn() throws {
        var random = SplitMix64(seed: 23)
        var file = ParsedDayFile()
        for k in 0..<40_000 { _ = file.intern("another segment's string \(k)") }
        let start: Int64 = 1_740_787_200_000_000  // 2025-03-01
        var expected: [Int64: (source: String?, device: String?, metadata: String?)] = [:]
        for i in 0..<20_000 {
            let m = random.next() % 6_000
            let texts = (
                source: m % 7 == 0 ? nil : "source \(m % 500)", device: m % 5 == 0 ? nil : "device \(m % 40)",
                metadata: m % 11 == 0 ? nil : #"{"k":\#(m)}"#
            )
            func id(_ text: String?) -> Int32 { text.map { file.intern($0) } ?? ParsedDayFile.absentText }
            let at = Timestamp(microseconds: start + Int64(i) * 1_000_000)
            file.add(
                at, at, .decimal(ExactDecimal(mantissa: Int64(m), scale: 0)), type: file.intern("T"),
                unit: file.intern("count"), source: id(texts.source), device: id(texts.device),
                metadata: id(texts.metadata))
            expected[at.microseconds] = texts
        }
        let decoded = try roundTrip(&file)
        #expect(decoded.count == 20_000)
        var mismatches = 0
        for s in decoded {
            func text(_ t: OptionalText) -> String? { if case .text(let v) = t { v } else { nil } }
            let texts = expected[s.start.microseconds]
            if texts?.source != text(s.source) || texts?.device != text(s.device)
                || texts?.metadata != text(s.metadata)
            {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    /// Interned bytes that are not UTF-8 are stored repaired, as `String(decoding:)` repairs them.
    @Test func bytesThatAreNotUTF8AreRepaired() throws {
        var file = ParsedDayFile()
        let texts: [[UInt8]] = [[0x61, 0xFF, 0x62], [0xC3], Array("ok é".utf8), [0xE2, 0x82], [0xED, 0xA0, 0x80]]
        let at = Timestamp(microseconds: 1_740_787_200_000_000)
        for (k, bytes) in texts.enumerated() {
            let id = bytes.withUnsafeBytes { file.intern($0) }
            let t = Timestamp(microseconds: at.microseconds + Int64(k))
            file.add(
                t, t, .null, type: file.intern("T"), unit: id, source: id, device: id, metadata: ParsedDayFile.nullText)
        }
        let decoded = try roundTrip(&file)
        for (s, bytes) in zip(decoded, texts) {
            let repaired = String(decoding: bytes, as: UTF8.self)
            #expect(s.unit == .text(repaired) && s.source == .text(repaired) && s.device == .text(repaired))
            #expect(s.metadata == .null)
        }
        #expect(decoded.count == texts.count)
    }
}
