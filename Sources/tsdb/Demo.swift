#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import TSDB

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate a year of data, compact it, query it, and print the figures.",
        discussion: "Uses a new temporary folder unless --dir is given. The folder is kept so you can keep querying it.")

    @Option(help: "Folder to work in (default: a new temporary folder).")
    var dir: String?

    @Option(help: "Days of data to generate.")
    var days: Int = 365

    func run() throws {
        let directory: String
        if let dir { directory = dir } else {
            var template = Array(((environment("TMPDIR") ?? "/tmp") + "/tsdb-demo-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw ValidationError("cannot create a temporary folder") }
            directory = String(cString: made)
        }
        print("1. generating \(days) days of Apple Health data into \(directory)/raw")
        try Generate.parse([directory, "--days", String(days)]).run()

        print("\n2. compacting")
        let layout = try StoreLayout.locate(directory)
        _ = try Compact.parse([directory]).compact(layout, CompactionOptions())

        print("\n3. what is stored (tsdb stats)")
        let store = try Store(layout: layout)
        try Stats.parse(["--store", directory]).run()

        print("\n4. queries")
        let hr = "HKQuantityTypeIdentifierHeartRate"
        guard let info = store.types.first(where: { $0.type == hr }) else { return }
        let firstDay = String(Timestamp(microseconds: info.firstStart, form: .zulu).description.prefix(10))
        let month = String(firstDay.prefix(7))
        for (label, rangeText) in [("one day", firstDay), ("one month", month), ("everything", "..")] {
            let r = try TimeRange.parse(rangeText)
            let clock = ContinuousClock.now
            var cursor = try store.samples(of: hr, from: r.from ?? .min, to: r.to ?? .max)
            var n = 0, sum = 0.0, lo = Double.infinity, hi = -Double.infinity
            while let s = try cursor.next() {
                guard let v = s.value.doubleValue else { continue }
                n += 1; sum += v; lo = min(lo, v); hi = max(hi, v)
            }
            let ms = Double((ContinuousClock.now - clock).components.attoseconds) / 1e15 + Double((ContinuousClock.now - clock).components.seconds) * 1000
            print("   heart rate, \(label) (\(rangeText)): \(formatCount(n)) samples, min \(Int(lo)) max \(Int(hi)) mean \(fixed(sum / Double(max(n, 1)), 1)) bpm — read in \(fixed(ms, 1)) ms")
        }
        print("""

        Try it yourself:
          tsdb query HeartRate --range \(firstDay) --store \(directory)
          tsdb query Steps --range \(month) --format csv --store \(directory)
          tsdb types --store \(directory)
          tsdb export --out /tmp/roundtrip --store \(directory)
        (delete \(directory) when done)
        """)
    }
}
