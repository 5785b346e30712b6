import Testing

@testable import TSDB

@Suite struct DayFileParserTests {
    let hr =
        #"{"type":"HKQuantityTypeIdentifierHeartRate","start":"2025-01-15T10:00:12Z","#
        + #""end":"2025-01-15T10:00:12Z","value":72,"unit":"count/min","source":"com.apple.health.9A1B2C","#
        + #""device":"Apple Watch"}"#

    func day(_ samples: String...) -> String {
        #"{"date":"2025-01-15","exported_at":"2025-01-16T00:05:00Z","device_info":{"phone":"iPhone"},"samples":["#
            + samples.joined(separator: ",") + "]}"
    }

    func parse(_ text: String) throws -> [Sample] { try samples(ofDayFile: Array(text.utf8)) }

    func failure(_ text: String) -> TSDBError? {
        do {
            _ = try parse(text)
            return nil
        } catch let e as TSDBError { return e } catch { return nil }
    }

    /// Every day of 1896–2104 as a string, a substring and a bridged string reads back as itself;
    /// every other month and day number, a wrong length, a misplaced dash or a non-digit in each
    /// place is refused. The oracle: the civil calendar of ``ISO8601/civil(_:)``.
    @Test func calendarDatesAgainstTheCalendar() {
        func text(_ y: Int, _ m: Int, _ d: Int) -> String {
            func pad(_ v: Int, _ n: Int) -> String { String(repeating: "0", count: n - String(v).count) + String(v) }
            return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
        }
        let first = ISO8601.days(year: 1896, month: 1, day: 1)
        let last = ISO8601.days(year: 2104, month: 12, day: 31)
        for day in first...last {
            let (y, m, d) = ISO8601.civil(day)
            let t = text(y, m, d)
            let substring = ("x" + t + ".json").dropFirst().dropLast(5)
            for parsed in [DayFileParser.calendarDate(t), DayFileParser.calendarDate(substring)] {
                #expect(parsed.map { [$0.year, $0.month, $0.day] } == [y, m, d], "\(t)")
            }
        }
        for y in [1900, 2000, 2024, 2025] {
            for m in 0...13 {
                for d in 0...32 {
                    let valid = (1...12).contains(m) && d >= 1 && d <= ISO8601.daysInMonth(year: y, month: m)
                    #expect((DayFileParser.calendarDate(text(y, m, d)) != nil) == valid, "\(text(y, m, d))")
                }
            }
        }
        let good = Array("2025-03-01".utf8)
        let replacements = [UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "a"), UInt8(ascii: "-"), 0xC3]
        for i in good.indices {
            for c in replacements where c != good[i] {
                var bad = good
                bad[i] = c
                #expect(DayFileParser.calendarDate(String(decoding: bad, as: UTF8.self)) == nil, "\(bad)")
            }
        }
        for bad in ["", "2025-03-1", "2025-03-011", "2025-3-01", "+025-03-01", " 2025-03-01", "２025-03-01"] {
            #expect(DayFileParser.calendarDate(bad) == nil, "\(bad)")
        }
    }

    @Test func seedExamplesParse() throws {
        let text = day(
            hr,
            #"{"type":"HKCategoryTypeIdentifierSleepAnalysis","start":"2025-01-15T00:08:00Z","#
                + #""end":"2025-01-15T00:38:00Z","value":4,"unit":null,"source":"com.apple.health.9A1B2C","#
                + #""device":"Apple Watch Series 9","metadata":{"HKTimeZone":"Asia/Singapore"}}"#,
            #"{"type":"HKWorkoutTypeIdentifier","start":"2025-01-15T07:30:00Z","end":"2025-01-15T08:05:00Z","#
                + #""value":null,"unit":null,"source":"s","device":null,"metadata":{"workoutActivityType":37,"#
                + #""totalDistance":5200,"totalDistanceUnit":"m","totalEnergyBurned":420,"#
                + #""totalEnergyBurnedUnit":"kcal"}}"#
        )
        let s = try parse(text)
        #expect(s.count == 3)
        #expect(s[0].value == .decimal(ExactDecimal(mantissa: 72, scale: 0)))
        #expect(s[0].device == .text("Apple Watch"))
        #expect(s[0].metadata == .absent)
        #expect(s[1].unit == .null && s[1].metadata == .text(#"{"HKTimeZone":"Asia/Singapore"}"#))
        #expect(s[1].durationMicroseconds == 30 * 60 * 1_000_000)
        #expect(s[2].value == .null && s[2].device == .null)
        #expect(
            s[2].metadata
                == .text(
                    #"{"totalDistance":5200,"totalDistanceUnit":"m","totalEnergyBurned":420,"#
                        + #""totalEnergyBurnedUnit":"kcal","workoutActivityType":37}"#
                ))
    }

    @Test func keysInAnyOrderAndWhitespace() throws {
        let text =
            "\n {\r\n\t\"samples\" : [ {\"value\" : 1.596 , \"end\":\"2025-01-15T10:00:12.5+08:00\", "
            + "\"type\":\"T\",\"start\":\"2025-01-15T10:00:12.5+08:00\"} ] , \"date\" : \"2025-01-15\" } \n"
        let s = try parse(text)
        #expect(s.count == 1)
        #expect(s[0].value == .decimal(ExactDecimal(mantissa: 1596, scale: 3)))
        #expect(s[0].start.form == TimeForm(offsetMinutes: 480, fractionDigits: 1, isZulu: false))
        #expect(s[0].unit == .absent && s[0].source == .absent)
    }

    @Test func valuesKeepTheirDigits() throws {
        let values = [
            "72", "72.0", "-3.25", "0.000001", "123456789012345678", "1234567890123456789", "1e3", "-0", "2.5E-3", "0",
        ]
        for v in values {
            let s = try parse(
                day(#"{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","value":\#(v)}"#))
            #expect(s[0].value.description == v)
        }
    }

    @Test func stringsWithEscapesAndUnicode() throws {
        let text = day(
            #"{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","source":"Caf\u00e9 \"x\" \\ "#
                + #"\/ \ud83d\udc93 ☺ \n","metadata":{"b":[1,{"z":null,"a":true}],"a":"\u0000"}}"#
        )
        let s = try parse(text)
        #expect(s[0].source == .text("Café \"x\" \\ / 💓 ☺ \n"))
        #expect(s[0].metadata == .text(#"{"a":"\u0000","b":[1,{"a":true,"z":null}]}"#))
    }

    @Test func unknownSampleKeysAreWarnings() throws {
        let parsed = try parseDay(
            day(#"{"type":"T","uuid":"abc","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z"}"#))
        #expect(parsed.samples.count == 1)
        #expect(parsed.warnings.count == 1 && parsed.warnings[0].contains("uuid"))
    }

    @Test(arguments: [
        ("", "empty file"),
        ("   ", "expected the day file to be a JSON object"),
        ("[]", "expected the day file to be a JSON object"),
        (#"{"date":"2025-01-15"}"#, "no \"samples\""),
        (#"{"samples":{}}"#, "\"samples\" must be an array"),
        (#"{"samples":[1]}"#, "samples[0] must be an object"),
        (#"{"samples":[{"start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z"}]}"#, "has no \"type\""),
        (#"{"samples":[{"type":"T","end":"2025-01-15T10:00:12Z"}]}"#, "has no \"start\""),
        (#"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z"}]}"#, "has no \"end\""),
        (#"{"samples":[{"type":7,"start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z"}]}"#, "type as a string"),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","value":"72"}]}"#,
            "must be a number or null"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","value":NaN}]}"#,
            "must be a number or null"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","value":Infinity}]}"#,
            "must be a number or null"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","value":1e400}]}"#,
            "out of range"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","value":01}]}"#,
            "expected ',' or '}'"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-02-30T10:00:12Z","end":"2025-01-15T10:00:12Z"}]}"#,
            "day 30 does not exist"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:11Z"}]}"#,
            "ends before it starts"
        ),
        (
            #"{"samples":[{"type":"T","type":"U","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z"}]}"#,
            "duplicate key \"type\""
        ),
        (#"{"samples":[],"samples":[]}"#, "duplicate key \"samples\""),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","#
                + #""metadata":{"a":1,"a":2}}]}"#,
            "duplicate object key \"a\""
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","metadata":[1]}]}"#,
            "metadata must be an object or null"
        ),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","unit":5}]}"#,
            "unit as a string"
        ),
        (#"{"samples":[{"type":"T\u00","start":"x"}]}"#, "invalid hex digit"),
        (#"{"samples":[{"type":"T\ud800","start":"x"}]}"#, "not followed by a low surrogate"),
        (#"{"samples":[{"type":"T\udc00","start":"x"}]}"#, "lone low surrogate"),
        (#"{"samples":[{"type":"T\q","start":"x"}]}"#, "invalid escape"),
        (#"{"samples":[{"type":"T"#, "unterminated string"),
        (
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z"}"#,
            "expected ',' or ']'"
        ),
        (#"{"samples":[]} x"#, "unexpected content after the top-level object"),
        (#"{"date":"2025-02-30","samples":[]}"#, "expected an existing date"),
        (#"{"samples":[tru]}"#, "samples[0] must be an object"),
        (#"{"x":tru,"samples":[]}"#, "invalid literal"),
    ])
    func rejects(text: String, expected: String) {
        let e = failure(text)
        #expect(e?.kind == .invalidInput)
        #expect(e?.message.contains(expected) == true, "got: \(e.map { "\($0)" } ?? "no error")")
        #expect(e?.path == "test.json")
        #expect(e?.offset != nil && e?.line != nil)
    }

    @Test func byteOrderMarkIsRejected() {
        let e = failure("\u{FEFF}" + day(hr))
        #expect(e?.message.contains("byte order mark") == true && e?.offset == 0)
    }

    @Test func invalidUTF8IsRejectedWithOffset() throws {
        for bad in [
            [0xC3, 0x28], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF8], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80],
        ] as [[UInt8]] {
            let prefix = Array(#"{"samples":[],"x":""#.utf8)
            let bytes = prefix + bad + Array(#""}"#.utf8)
            do {
                _ = try samples(ofDayFile: bytes)
                Issue.record("accepted \(bad)")
            } catch let e as TSDBError {
                #expect(e.message.contains("UTF-8"))
                #expect(e.offset! >= prefix.count && e.offset! <= prefix.count + 1)
            }
        }
    }

    @Test func controlCharacterInStringIsRejected() {
        #expect(failure("{\"samples\":[],\"x\":\"a\u{01}b\"}")?.message.contains("control character") == true)
    }

    @Test func deepNestingIsRejectedNotACrash() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let e = failure(
            #"{"samples":[{"type":"T","start":"2025-01-15T10:00:12Z","end":"2025-01-15T10:00:12Z","#
                + #""metadata":{"a":\#(deep)}}]}"#
        )
        #expect(e?.message.contains("nesting deeper than") == true)
    }

    @Test func errorNamesLineAndOffset() {
        let text =
            "{\n\"samples\": [\n" + hr + ",\n" + #"{"type":"T","start":"2025-01-15T10:00:12Z","end":"bad"}"# + "\n]}"
        let e = failure(text)
        #expect(e?.line == 4)
        #expect(e?.message.contains("samples[1].end") == true)
        #expect(e?.description.hasPrefix("test.json:4 (offset ") == true)
    }
}
