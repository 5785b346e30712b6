import Foundation
import Testing

@testable import TSDB

/// Every UTC-offset change from 1990 to 2037 in every zone of the system's zone database, against
/// vectors computed once by Python's zoneinfo (Vectors/make-zone-vectors.py): day and hour bucket
/// edges around the change, and where a local time inside the gap or overlap maps.
@Suite struct ZoneVectorTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors/zone-transitions.tsv.gz").path

    static func lines() throws -> [Substring] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "gzip -dc \"$0\"", vectors]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }

    @Test func bucketEdgesAndGapsMatchAnIndependentImplementation() throws {
        let lines = try Self.lines()
        let header = String(lines.first ?? "")
        let system =
            (try? String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8))?
            .split(separator: "\n").first.map { String($0.split(separator: " ").last ?? "") } ?? "?"
        try #require(
            header.contains("tzdata \(system);"),
            """
            the vectors were made from \(header), this system has tzdata \(system): \
            run python3 Tests/TSDBTests/Vectors/make-zone-vectors.py
            """)
        var zones: [String: TimeZoneRules] = [:]
        var failures: [String] = []
        var checked = 0
        for line in lines.dropFirst() {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let name = f[0]
            let change = Int64(f[1])!
            let before = Int32(f[2])!
            let after = Int32(f[3])!
            let zone = try zones[name] ?? TimeZoneRules.named(name)
            zones[name] = zone
            let m: Int64 = 1_000_000
            func fail(_ what: String) { if failures.count < 20 { failures.append("\(name) at \(change): \(what)") } }
            if zone.nextTransition(after: change - 1) != change || zone.offset(atUTC: change - 1) != before
                || zone.offset(atUTC: change) != after
            {
                fail("transition or offsets differ")
            }
            let day = BucketWalker(spec: .calendar(.day), zone: zone, from: change * m, to: (change + 1) * m)
                .bucket(containing: change * m)
            if day != Bucket(start: Int64(f[4])! * m, end: Int64(f[5])! * m) {
                fail("day \(day.start / m)..<\(day.end / m), expected \(f[4])..<\(f[5])")
            }
            let a = (change - 3 * 3600) * m
            let b = (change + 3 * 3600) * m
            let hours = BucketWalker(spec: .calendar(.hour), zone: zone, from: a, to: b).buckets(from: a, to: b)
            let edges = Set(hours.flatMap { [$0.start, $0.end] }.filter { $0 > a && $0 < b }.map { $0 / m })
            let expected = Set(f[6].split(separator: ",").map { Int64($0)! })
            if edges != expected { fail("hour edges \(edges.sorted()), expected \(expected.sorted())") }
            let mapped = zone.utc(fromLocal: Int64(f[7])!)
            if mapped != Int64(f[8])! { fail("local \(f[7]) maps to \(mapped), expected \(f[8])") }
            checked += 1
        }
        #expect(checked > 20_000)
        #expect(failures.isEmpty, "mismatches (first 20):\n\(failures.joined(separator: "\n"))")
    }
}
