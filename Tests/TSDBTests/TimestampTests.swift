import Testing

@testable import TSDB

@Suite struct TimestampTests {
    @Test(
        arguments: [
            ("2025-01-15T10:00:12Z", Int64(1_736_935_212_000_000)),
            ("2025-01-15T18:00:12+08:00", Int64(1_736_935_212_000_000)),
            ("2025-01-15T04:30:12-05:30", Int64(1_736_935_212_000_000)),
            ("1970-01-01T00:00:00Z", Int64(0)),
            ("1969-12-31T23:59:59.999999Z", Int64(-1)),
            ("2024-02-29T12:00:00.5Z", Int64(1_709_208_000_500_000)),
            ("2025-01-15T10:00:12.123456789Z", nil),
            ("2025-01-15T10:00:12.123456000Z", Int64(1_736_935_212_123_456)),
        ] as [(String, Int64?)])
    func parses(text: String, micros: Int64?) {
        let t = Timestamp(text)
        #expect(t?.microseconds == micros)
    }

    @Test(arguments: [
        "2025-01-15T10:00:12Z", "2025-01-15T18:00:12+08:00", "2025-07-01T01:02:03.4-09:30",
        "2025-07-01T01:02:03.000+00:00",
        "2025-07-01T01:02:03.120000Z", "2025-07-01T01:02:03.123456789+05:45".replacingOccurrences("789", "000"),
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999+14:00", "2025-12-31T23:59:59-12:00",
    ])
    func formatsBackExactly(text: String) throws {
        let t = try #require(Timestamp(text))
        #expect(t.description == text)
    }

    @Test(arguments: [
        ("2025-13-01T00:00:00Z", "month 13"), ("2025-02-29T00:00:00Z", "day 29"), ("2025-04-31T00:00:00Z", "day 31"),
        ("2025-01-01T24:00:00Z", "hour 24"), ("2025-01-01T00:60:00Z", "minute 60"),
        ("2025-06-30T23:59:60Z", "leap seconds"),
        ("2025-01-01T00:00:00", "missing zone"), ("2025-01-01 00:00:00Z", "'T'"),
        ("2025-01-01T00:00:00+0100", "±HH:MM"),
        ("2025-01-01T00:00:00.Z", "digits after '.'"), ("2025-01-01T00:00:00+24:00", "out of range"),
        ("2025-01-01T00:00:00.1234567Z", "sub-microsecond"), ("2025-01-01T00:00:00Zjunk", "unexpected characters"),
        ("2025-1-01T00:00:00Z", "expected"), ("", "too short"),
    ])
    func rejects(text: String, reason: String) {
        var s = text
        let message = s.withUTF8 { p -> String? in
            do throws(ISO8601.Failure) {
                _ = try ISO8601.parse(UnsafeRawBufferPointer(p))
                return nil
            } catch { return error.message }
        }
        #expect(message?.contains(reason) == true, "\(text): \(message ?? "accepted")")
    }

    @Test func civilDateRoundTripSweep() {
        var day: Int64 = -800_000
        while day < 800_000 {
            let (y, m, d) = ISO8601.civil(day)
            #expect(ISO8601.days(year: y, month: m, day: d) == day)
            day += 997
        }
    }

    @Test func decimalText() {
        #expect(ExactDecimal(mantissa: 72, scale: 0).description == "72")
        #expect(ExactDecimal(mantissa: 1596, scale: 3).description == "1.596")
        #expect(ExactDecimal(mantissa: 720, scale: 1).description == "72.0")
        #expect(ExactDecimal(mantissa: -5, scale: 3).description == "-0.005")
        #expect(ExactDecimal(mantissa: .min, scale: 18).description == "-9.223372036854775808")
    }
}

extension String {
    func replacingOccurrences(_ a: String, _ b: String) -> String {
        split(separator: a, omittingEmptySubsequences: false).joined(separator: b)
    }
}
