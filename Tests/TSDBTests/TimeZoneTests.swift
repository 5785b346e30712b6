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

    /// A suggestion is a likely typo or a city's bare name, never a name that merely shares some
    /// letters: "Nowhere" once got "did you mean Antarctica/Rothera?" (three letters of seven).
    @Test(arguments: [
        ("europe/pari", "did you mean Europe/Paris?"), ("Paris", "did you mean Europe/Paris?"),
        ("Europe/Prais", "did you mean Europe/Paris?"), ("Asia/Kathmadnu", "did you mean Asia/Kathmandu?"),
        ("Nowhere", "use an IANA name"), ("Mars/Olympus", "use an IANA name"),
        ("Europe", "Europe is a region; its zones: "),
    ])
    func suggestionsForUnknownZones(name: String, expected: String) {
        let message = caught { _ = try TimeZoneRules.named(name) }?.message ?? ""
        #expect(message.contains(expected), "\(message)")
    }

    /// The distance behind suggestions: a swap of neighbours is one edit; no substring is edited
    /// twice (so "ca" → "abc" is three, not two).
    @Test(arguments: [
        ("", "", 0), ("", "abc", 3), ("abc", "", 3), ("prais", "paris", 1), ("ab", "ba", 1),
        ("kitten", "sitting", 3), ("ca", "abc", 3), ("nowhere", "rothera", 3), ("qurey", "query", 1),
    ])
    func editDistances(a: String, b: String, distance: Int) {
        #expect(TypeNames.editDistance(a, b) == distance)
        #expect(TypeNames.editDistance(b, a) == distance)
    }

    @Test func posixFooterRules() {
        let rule = PosixRule("CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(rule?.standard == 3600 && rule?.daylight == 7200)
        let july2050: Int64 = 2_539_728_000
        #expect(rule?.offset(atUTC: july2050) == 7200)
        #expect(PosixRule("<+0545>-5:45")?.standard == 20_700)
        #expect(PosixRule("AEST-10AEDT,M10.1.0,M4.1.0/3")?.offset(atUTC: july2050) == 36_000)
    }

    /// Footers of the system's zones, each field read: quoted and lettered names, offsets with
    /// minutes and seconds, an explicit daylight offset, negative and past-midnight change times, a
    /// rule with no daylight time; and what is not a rule.
    @Test func posixRuleFieldsAndMalformedRules() {
        typealias Change = (Int, Int, Int, Int32)
        let cases: [(String, Int32, Int32?, Change, Change)] = [
            ("CET-1CEST,M3.5.0,M10.5.0/3", 3600, 7200, (3, 5, 0, 7200), (10, 5, 0, 10_800)),
            ("IST-1GMT0,M10.5.0,M3.5.0/1", 3600, 0, (10, 5, 0, 7200), (3, 5, 0, 3600)),
            ("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", -7200, -3600, (3, 5, 0, -3600), (10, 5, 0, 0)),
            ("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", 37_800, 39_600, (10, 1, 0, 7200), (4, 1, 0, 7200)),
            ("<-04>4<-03>,M9.1.6/24,M4.1.6/24", -14_400, -10_800, (9, 1, 6, 86_400), (4, 1, 6, 86_400)),
            ("<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45", 45_900, 49_500, (9, 5, 0, 9900), (4, 1, 0, 13_500)),
            ("EST5EDT,M3.2.0/2:00:30,M11.1.0", -18_000, -14_400, (3, 2, 0, 7230), (11, 1, 0, 7200)),
            ("<+0545>-5:45", 20_700, nil, (0, 0, 0, 0), (0, 0, 0, 0)),
            ("<+01>-1", 3600, nil, (0, 0, 0, 0), (0, 0, 0, 0)),
        ]
        for (text, standard, daylight, start, end) in cases {
            let rule = PosixRule(text)
            #expect(rule == PosixRule(standard: standard, daylight: daylight, start: start, end: end), "\(text)")
        }
        for bad in [
            "", "AB-1", "CET", "CET-1CEST", "CET-1CEST,M3.5", "CET-1CEST,M3.5.0", "CET-1CEST,J60,J300",
            "CET-1CEST,M3.5.0.1,M10.5.0", "CET-9999999", "CET-1CEST,M3.5.0/,M10.5.0", "<+01-1",
        ] {
            #expect(PosixRule(bad) == nil, "\(bad)")
        }
    }
}
