import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

@Suite struct TimeZoneTests {
    static let zones = [
        "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Sydney", "Australia/Lord_Howe",
        "Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham", "America/Sao_Paulo", "Africa/Casablanca", "UTC",
    ]

    @Test(arguments: zones)
    func offsetsMatchFoundation(zone: String) throws {
        let rules = try TimeZoneRules.named(zone)
        let reference = try #require(TimeZone(identifier: zone))
        var rng = SplitMix64(seed: 9)
        for _ in 0..<3000 {
            let t = Int64.random(in: 631_152_000...2_840_140_800, using: &rng)  // 1990 … 2060
            #expect(
                Int(rules.offset(atUTC: t))
                    == reference.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t))), "\(zone) at \(t)")
        }
    }

    @Test func localMidnightsAcrossDST() throws {
        let paris = try TimeZoneRules.named("Europe/Paris")
        func local(_ s: String) -> Int64 { Timestamp(s + "Z")!.microseconds / 1_000_000 }
        // 2025-03-30: clocks jump 02:00 → 03:00; the day is 23 hours long.
        let day =
            paris.utc(fromLocal: local("2025-03-31T00:00:00")) - paris.utc(fromLocal: local("2025-03-30T00:00:00"))
        #expect(day == 23 * 3600)
        let autumn =
            paris.utc(fromLocal: local("2025-10-27T00:00:00")) - paris.utc(fromLocal: local("2025-10-26T00:00:00"))
        #expect(autumn == 25 * 3600)
        // A wall time in the gap is read after the jump; one in the overlap is the first reading.
        #expect(paris.utc(fromLocal: local("2025-03-30T02:30:00")) == local("2025-03-30T01:30:00"))
        #expect(paris.utc(fromLocal: local("2025-10-26T02:30:00")) == local("2025-10-26T00:30:00"))
    }

    @Test func fixedOffsetsAndErrors() throws {
        #expect(try TimeZoneRules.named("+05:45").offset(atUTC: 0) == 20_700)
        #expect(try TimeZoneRules.named("-03:30").offset(atUTC: 0) == -12_600)
        #expect(caught { _ = try TimeZoneRules.named("Mars/Olympus") }?.kind == .notFound)
        #expect(caught { _ = try TimeZoneRules.named("../etc/passwd") }?.kind == .invalidInput)
    }

    @Test func posixFooterRules() {
        let rule = PosixRule("CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(rule?.standard == 3600 && rule?.daylight == 7200)
        let july2050: Int64 = 2_539_728_000
        #expect(rule?.offset(atUTC: july2050) == 7200)
        #expect(PosixRule("<+0545>-5:45")?.standard == 20_700)
        #expect(PosixRule("AEST-10AEDT,M10.1.0,M4.1.0/3")?.offset(atUTC: july2050) == 36_000)
    }
}
