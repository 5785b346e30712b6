import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Samples read by matching the bytes of an earlier one (``SampleTemplate``) and timestamps read
/// from the date and zone of the last (``RecentTimestamps``) must be what a full parse gives.
@Suite struct SampleTemplateTests {
    /// Random day files of a few kinds of sample, mostly repeating each other's bytes, sometimes
    /// not (key order, spacing, escapes, values kept as text, new metadata, unknown keys): every
    /// sample equals the same sample parsed alone, in a file where no template can serve it.
    @Test(arguments: 0..<12)
    func samplesReadFromTemplatesEqualSamplesParsedAlone(seed: UInt64) throws {
        var rng = SplitMix64(seed: 100 + seed)
        var texts: [String] = []
        var unknownKeys = 0
        var t = 1_736_899_200 + Int(rng.next() % 86_400)
        var unknown = false
        for _ in 0..<400 {
            t += Int(rng.next() % 400)
            // Unknown keys come in runs, so that samples with one repeat each other's bytes.
            let text: String
            (text, unknown) = Self.sample(
                at: t, &rng, unknownKey: rng.next() % 30 == 0 || unknown && rng.next() % 2 == 0)
            texts.append(text)
            unknownKeys += unknown ? 1 : 0
        }
        let whole = try parseDay(Self.file(texts))
        var strings = whole.strings
        let read = whole.samples.map { unpack($0, &strings) }
        #expect(read.count == texts.count)
        for (k, text) in texts.enumerated() where k < read.count {
            let alone = try samples(ofDayFile: Array(Self.file([text]).utf8))
            guard alone == [read[k]] else {
                Issue.record("seed \(seed), samples[\(k)]: \(read[k]) ≠ \(alone) from \(text)")
                return
            }
        }
        #expect(whole.warnings.count == unknownKeys)
    }

    /// A sample that repeats a template's bytes but has an impossible time or ends before it starts
    /// is reported as a full parse reports it: its index, and the offset of the value or sample.
    @Test func errorsInSamplesLikeTheOnesBeforeAreReportedAsAlways() {
        let good = (0..<3).map { Self.heartRate(start: "2025-01-15T10:00:1\($0)+01:00", value: "7\($0)") }
        let badHour = Self.heartRate(start: "2025-01-15T25:00:13+01:00", value: "73")
        let text = Self.file(good + [badHour])
        let hourError = failure(text)
        #expect(hourError?.message.contains("samples[3].start") == true)
        #expect(hourError?.message.contains("hour 25 is not 00–23") == true, "got \(String(describing: hourError))")
        #expect(hourError?.offset == Self.offset(of: "\"2025-01-15T25", in: text))

        let backwards = Self.heartRate(
            start: "2025-01-15T10:00:19+01:00", end: "2025-01-15T10:00:18+01:00", value: "73")
        let text2 = Self.file(good + [backwards])
        let order = failure(text2)
        #expect(order?.message.contains("samples[3] ends before it starts") == true)
        #expect(order?.offset == Self.offset(of: "{\"type\"", in: text2, occurrence: 3))
    }

    /// Numbers read by the template's short path are what the scanner and `exactDecimal` make of
    /// them; the short path declines the rest (exponents, leading zeros, long or odd numbers), and
    /// takes the plain ones.
    @Test func shortDecimalsEqualTheScannersReading() {
        var rng = SplitMix64(seed: 21)
        var texts = [
            "0", "52", "-5.5", "73.22", "0.05", "-0", "-0.0", "01", "1.", "1e3", "1E-2", "1.5e2", ".5", "-", "--1",
            "999999999999999", "1000000000000000", "99999999999999.9", "0.000000000000001", "1.0000000000000000001",
            "123456789012345678", "1.2.3", "12a", "-00",
        ]
        let alphabet = Array("0123456789.-eE")
        for _ in 0..<20_000 {
            let length = Int(rng.next() % 20) + 1
            texts.append(String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
        }
        var taken = 0
        for text in texts {
            for after in [",", "}", " ", ""] {
                let bytes = Array((text + after).utf8)
                bytes.withUnsafeBytes { raw in
                    var scanner = JSONScanner(raw)
                    let scanned = (try? scanner.number()).flatMap { range -> (ExactDecimal, Int)? in
                        guard !scanner.lastNumberHadExponent, range.upperBound < raw.count,
                            ![UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(raw[range.upperBound]),
                            !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(raw[range.upperBound])
                        else { return nil }
                        return DayFileParser.exactDecimal(UnsafeRawBufferPointer(rebasing: raw[range])).map {
                            ($0, range.upperBound)
                        }
                    }
                    guard let (mantissa, scale, end) = SampleTemplate.shortDecimal(raw, at: 0) else { return }
                    taken += 1
                    #expect(scanned?.0 == ExactDecimal(mantissa: mantissa, scale: scale), "\(text + after)")
                    #expect(scanned?.1 == end, "\(text + after)")
                }
            }
        }
        for plain in ["0", "52", "-5.5", "73.22", "0.05", "999999999999999"] {
            Array((plain + ",").utf8).withUnsafeBytes { raw in
                #expect(SampleTemplate.shortDecimal(raw, at: 0) != nil, "\(plain)")
            }
        }
        #expect(taken > 1_000)
    }

    /// Timestamps read from the last one's date and zone equal full parses, valid or not: every
    /// time of day around the edges, other dates and zones, fractions, `Z` and `-00:00`.
    @Test func timestampsReadFromTheLastDateEqualFullParses() {
        var rng = SplitMix64(seed: 7)
        var recent = RecentTimestamps()
        let dates = ["2025-01-15", "2025-01-16", "2024-02-29", "2025-02-29", "1970-01-01"]
        let zones = ["Z", "+01:00", "-00:00", "+05:45", "-09:30", "+24:00", "+01:60", "+1:00"]
        let times = ["00:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "12:3a:00", "12-30:00", "9:30:000"]
        var checked = 0
        for _ in 0..<20_000 {
            let date = dates[Int(rng.next() % UInt64(dates.count))]
            let zone = zones[Int(rng.next() % UInt64(zones.count))]
            let time: String
            if rng.next() % 3 == 0 {
                time = times[Int(rng.next() % UInt64(times.count))]
            } else {
                let s = Int(rng.next() % 86_400)
                time = Self.twoDigits(s / 3600) + ":" + Self.twoDigits(s / 60 % 60) + ":" + Self.twoDigits(s % 60)
            }
            let fraction = rng.next() % 6 == 0 ? ".25" : ""
            var text = date + "T" + time + fraction + zone
            let viaRecent = text.withUTF8 { try? recent.parse(UnsafeRawBufferPointer($0)) }
            let full = text.withUTF8 { try? ISO8601.parse(UnsafeRawBufferPointer($0)) }
            #expect(viaRecent == full, "\(text)")
            if viaRecent == full { checked += 1 }
        }
        #expect(checked == 20_000)
    }

    // MARK: Random samples

    static func sample(at t: Int, _ rng: inout SplitMix64, unknownKey: Bool) -> (String, unknown: Bool) {
        func pick<T>(_ options: [T]) -> T { options[Int(rng.next() % UInt64(options.count))] }
        func chance(_ n: UInt64) -> Bool { rng.next() % n == 0 }
        let start = stamp(t, &rng)
        let kind = rng.next() % 4
        var fields: [(String, String)]
        switch kind {
        case 0, 1:
            let values = ["\(60 + rng.next() % 90)", "72.5", "null", "1e2", "1234567890123456789", "-0", "0.98"]
            fields = [
                ("type", #""HKQuantityTypeIdentifierHeartRate""#), ("start", start),
                ("end", chance(4) ? stamp(t + 5, &rng) : start), ("value", chance(3) ? pick(values) : values[0]),
                ("unit", #""count/min""#), ("source", #""com.apple.health.81C3F6A2""#),
                ("device", chance(20) ? #""Apple Watch \u0053eries 9""# : #""Apple Watch Series 9""#),
            ]
            let metadata = [
                #"{"HKMetadataKeyHeartRateMotionContext":1}"#, #"{"HKMetadataKeyHeartRateMotionContext":0}"#,
                #"{ "HKMetadataKeyHeartRateMotionContext" : 2 }"#, #"{"b":[1,{"c":null}],"a":"x"}"#, "null",
                #"{"HKMetadataKeyHeartRateMotionContext":\#(rng.next() % 1000)}"#,
            ]
            if !chance(10) { fields.append(("metadata", pick(metadata))) }
        case 2:
            fields = [
                ("type", #""HKCategoryTypeIdentifierSleepAnalysis""#), ("start", start), ("end", stamp(t + 600, &rng)),
                ("value", "\(rng.next() % 5)"), ("unit", "null"), ("source", #""com.apple.health.81C3F6A2""#),
                ("device", #""Apple Watch Series 9""#), ("metadata", #"{"HKTimeZone":"Europe/Paris"}"#),
            ]
        default:
            fields = [
                ("type", #""HKQuantityTypeIdentifierStepCount""#), ("start", start), ("end", stamp(t + 60, &rng)),
                ("value", "\(rng.next() % 200)"), ("unit", #""count""#), ("source", #""com.apple.health.81C3F6A2""#),
            ]
        }
        if chance(25) { fields.swapAt(Int(rng.next() % UInt64(fields.count)), 0) }
        if unknownKey { fields.insert(("uuid", chance(2) ? #""A1""# : #""\#(rng.next() % 100)""#), at: 1) }
        let separator = chance(15) ? " , " : ","
        return ("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: separator) + "}", unknownKey)
    }

    /// A timestamp at `t` (seconds) in a zone, mostly `+01:00` without a fraction.
    static func stamp(_ t: Int, _ rng: inout SplitMix64) -> String {
        let zones = [("+01:00", 3600), ("Z", 0), ("-00:00", 0), ("+05:45", 20_700)]
        let (zone, offset) = rng.next() % 8 == 0 ? zones[Int(rng.next() % 4)] : zones[0]
        let local = t + offset
        let (days, s) = (local / 86_400, local % 86_400)
        let (y, m, d) = ISO8601.civil(Int64(days))
        let date = "\(y)-" + twoDigits(m) + "-" + twoDigits(d)
        let time = twoDigits(s / 3600) + ":" + twoDigits(s / 60 % 60) + ":" + twoDigits(s % 60)
        let fraction = rng.next() % 12 == 0 ? ".5" : ""
        let text = date + "T" + time + fraction + zone
        // Now and then a digit escaped: the same timestamp, written so that only a full parse reads it.
        return rng.next() % 40 == 0 ? "\"" + #"\u0032"# + text.dropFirst() + "\"" : "\"" + text + "\""
    }

    static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    static func heartRate(start: String, end: String? = nil, value: String) -> String {
        #"{"type":"HKQuantityTypeIdentifierHeartRate","start":"\#(start)","end":"\#(end ?? start)","#
            + #""value":\#(value),"unit":"count/min","source":"s","metadata":{"m":1}}"#
    }

    static func file(_ samples: [String]) -> String {
        #"{"date":"2025-01-15","samples":["# + samples.joined(separator: ",\n    ") + "]}"
    }

    static func offset(of needle: String, in text: String, occurrence: Int = 0) -> Int? {
        let (h, n) = (Array(text.utf8), Array(needle.utf8))
        var found = 0
        for i in 0...(h.count - n.count) where Array(h[i..<i + n.count]) == n {
            if found == occurrence { return i }
            found += 1
        }
        return nil
    }

    func failure(_ text: String) -> TSDBError? {
        do {
            _ = try parseDay(text)
            return nil
        } catch let e as TSDBError { return e } catch { return nil }
    }
}
