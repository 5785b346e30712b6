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
        // A whole day and month well inside the data.
        let middle = Timestamp(microseconds: info.firstStart + (info.lastStart - info.firstStart) / 3, form: .zulu).description
        let firstDay = String(middle.prefix(10)), month = String(middle.prefix(7))
        for (label, rangeText) in [("one day", firstDay), ("one month", month)] {
            let r = try TimeRange.parse(rangeText)
            let clock = ContinuousClock.now
            var cursor = try store.samples(of: hr, from: r.from!, to: r.to!)
            var n = 0
            while try cursor.next() != nil { n += 1 }
            print("   tsdb query HeartRate --range \(rangeText): \(formatCount(n)) samples, decoded in \(milliseconds(since: clock)) ms")
        }
        // Columnar scan: daily (UTC) count/min/max/mean of heart rate over all the data.
        let clock = ContinuousClock.now
        var days: [Int64: DayStats] = [:]
        var total = 0
        try store.forEachBlock(of: hr) { segment, block in
            var day = Int64.min, acc = DayStats()
            for i in 0..<block.count {
                guard let v = block.value(at: i, in: segment) else { continue }
                let d = block.starts[i] / 86_400_000_000
                if d != day {
                    if acc.n > 0 { days[day, default: DayStats()].merge(acc) }
                    day = d
                    acc = DayStats()
                }
                acc.n += 1; acc.lo = min(acc.lo, v); acc.hi = max(acc.hi, v); acc.sum += v
            }
            if acc.n > 0 { days[day, default: DayStats()].merge(acc) }
            total += block.count
        }
        print("   daily heart-rate count/min/max/mean over \(days.count) days (\(formatCount(total)) samples, columnar scan): \(milliseconds(since: clock)) ms")
        print("""

        Try it yourself:
          tsdb query HeartRate --range \(firstDay) --store \(directory)
          tsdb query Steps --range \(month) --format csv --store \(directory)
          tsdb query Sleep --range \(firstDay)..\(month)-28 --store \(directory)
          tsdb types --store \(directory)
          tsdb export --out /tmp/roundtrip --store \(directory)
        (delete \(directory) when done)
        """)
    }
}

func milliseconds(since start: ContinuousClock.Instant) -> String {
    let d = ContinuousClock.now - start
    return fixed(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15, 2)
}

struct DayStats {
    var n = 0, lo = Double.infinity, hi = -Double.infinity, sum = 0.0

    mutating func merge(_ o: DayStats) {
        n += o.n; lo = min(lo, o.lo); hi = max(hi, o.hi); sum += o.sum
    }
}
