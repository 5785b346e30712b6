import Benchmark
import Foundation
@_spi(Benchmarks) import TSDB
import TSDBSynthetic

/// A generated year, compacted once per benchmark process, shared by the read benchmarks.
let fixture: (directory: String, rawBytes: Int, heartRate: Int) = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsdb-bench-year").path
    let layout = StoreLayout(appleHealthDirectory: directory)
    if !FileManager.default.fileExists(atPath: layout.rawDirectory + "/2025/12/2025-12-31.json") {
        var options = HealthDataGenerator.Options()
        options.days = 365
        try! HealthDataGenerator(options: options).write(rawDirectory: layout.rawDirectory)
    }
    // Up to date in milliseconds; rebuilds a store left by an older build.
    _ = try! Compactor(layout: layout).run()
    let store = try! Store(layout: layout)
    let rawBytes = store.manifest.rawFiles.reduce(0) { $0 + $1.size }
    let hr = store.types.first { $0.type == heartRate }!.sampleCount
    return (directory, rawBytes, hr)
}()

let heartRate = "HKQuantityTypeIdentifierHeartRate"

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(5), maxIterations: 50)

    // A full rebuild of the year (the store is otherwise up to date, which is the next one).
    Benchmark(
        "Compaction.Year.Rebuild", configuration: .init(metrics: [.wallClock, .peakMemoryResident], maxIterations: 5)
    ) { benchmark in
        var options = CompactionOptions()
        options.rebuild = true
        let compactor = Compactor(layout: StoreLayout(appleHealthDirectory: fixture.directory), options: options)
        benchmark.startMeasurement()
        let report = try compactor.run()
        benchmark.stopMeasurement()
        precondition(report.isFullRebuild)
        blackHole(report.samplesStored)
    }

    Benchmark("Compaction.Year.NothingChanged", configuration: .init(metrics: [.wallClock], maxIterations: 20)) {
        benchmark in
        let compactor = Compactor(layout: StoreLayout(appleHealthDirectory: fixture.directory))
        benchmark.startMeasurement()
        let report = try compactor.run()
        benchmark.stopMeasurement()
        precondition(report.upToDate)
    }

    // Raw JSON: one realistic day file, parsed and validated (throughput counts bytes).
    let dayFile =
        (try? Data(contentsOf: URL(fileURLWithPath: fixture.directory + "/raw/2025/05/2025-05-02.json"))).map {
            Array($0)
        } ?? []
    Benchmark(
        "Raw.Parse.DayFile",
        configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .one)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let n = try dayFile.withUnsafeBytes { try BenchmarkHooks.parseDayFile($0) }
            blackHole(n)
        }
    }

    // Integer columns and block codecs on a heart-rate-like series (1 M values).
    var rng = SystemRandomNumberGenerator()
    var t: Int64 = 0
    let starts = (0..<1_000_000).map { i -> Int64 in
        t += (i / 2000) % 3 == 0 ? Int64.random(in: 4...6, using: &rng) : Int64.random(in: 60...180, using: &rng)
        return t
    }
    let column = BenchmarkHooks.encodeColumn(starts)
    Benchmark("Encoding.IntColumn.Encode", configuration: .init(metrics: [.wallClock, .throughput])) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(BenchmarkHooks.encodeColumn(starts)) }
    }
    Benchmark("Encoding.IntColumn.Decode", configuration: .init(metrics: [.wallClock, .throughput])) { benchmark in
        var out = [Int64](repeating: 0, count: starts.count)
        for _ in benchmark.scaledIterations { try BenchmarkHooks.decodeColumn(column, count: starts.count, into: &out) }
        blackHole(out[0])
    }
    // Means of whole numbers as an hourly heart-rate aggregate writes them (a sum of ~20-200
    // readings over their count; whole means left out, which tsdb writes without ".0"), by our
    // shortest-digit search and by the standard library's: the same text, checked first.
    let means = (0..<100_000).map { _ -> Double in
        let count = Int.random(in: 20...200, using: &rng)
        return Double(Int.random(in: (40 * count)...(180 * count), using: &rng)) / Double(count)
    }.filter { $0 != $0.rounded() }
    var ours: [UInt8] = []
    var theirs: [UInt8] = []
    _ = BenchmarkHooks.writeNumbers(means, into: &ours)
    _ = BenchmarkHooks.writeNumbersByTheStandardLibrary(means, into: &theirs)
    precondition(ours == theirs, "the shortest digits differ from the standard library's")
    Benchmark("Output.Means.ShortestDecimal", configuration: .init(metrics: [.wallClock, .throughput])) { benchmark in
        var out: [UInt8] = []
        for _ in benchmark.scaledIterations { blackHole(BenchmarkHooks.writeNumbers(means, into: &out)) }
    }
    Benchmark("Output.Means.StandardLibrary", configuration: .init(metrics: [.wallClock, .throughput])) { benchmark in
        var out: [UInt8] = []
        for _ in benchmark.scaledIterations {
            blackHole(BenchmarkHooks.writeNumbersByTheStandardLibrary(means, into: &out))
        }
    }

    // Codecs on compressible real input (a day file's bytes); bit-packed columns barely
    // compress, and a benchmark must never time a failure.
    for codec in [BlockCodec.lz4, .zstd] {
        guard let stored = BenchmarkHooks.compress(codec, dayFile) else {
            fatalError("\(codec) did not compress the day file")
        }
        Benchmark("Encoding.\(codec).Compress", configuration: .init(metrics: [.wallClock, .throughput])) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(BenchmarkHooks.compress(codec, dayFile)) }
        }
        Benchmark("Encoding.\(codec).Decompress", configuration: .init(metrics: [.wallClock, .throughput])) {
            benchmark in
            var out = [UInt8](repeating: 0, count: dayFile.count)
            for _ in benchmark.scaledIterations { try BenchmarkHooks.decompress(codec, stored, into: &out) }
            precondition(out == dayFile, "\(codec) round trip differs")
        }
    }

    // The year-scale daily heart-rate aggregate, in the wearer's zone (answered from summaries) and UTC.
    for zone in ["Europe/Paris", "UTC"] {
        Benchmark("Aggregate.HeartRate.Year.Daily.\(zone.replacingOccurrences(of: "/", with: "-"))") { benchmark in
            let store = try Store(at: fixture.directory)
            var o = AggregateOptions()
            o.bucket = .calendar(.day)
            o.zone = try TimeZoneRules.named(zone)
            let year = try TimeRange.parse("2025")
            for _ in benchmark.scaledIterations {
                blackHole(try store.aggregate(heartRate, from: year.from, to: year.to, options: o).rows.count)
            }
        }
    }

    Benchmark("Query.HeartRate.Day", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let store = try Store(at: fixture.directory)
        let day = try TimeRange.parse("2025-05-02")
        for _ in benchmark.scaledIterations {
            var cursor = try store.samples(of: heartRate, from: day.from!, to: day.to!)
            var n = 0
            while try cursor.next() != nil { n += 1 }
            blackHole(n)
        }
    }

    // `tsdb latest`: every type's newest sample, from the index (a fresh Store each time, as a command has).
    Benchmark("Query.Latest.AllTypes", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            let store = try Store(at: fixture.directory)
            for t in store.types { blackHole(try store.latest(of: t.type)) }
        }
    }

    Benchmark("Query.HeartRate.Month") { benchmark in
        let store = try Store(at: fixture.directory)
        let month = try TimeRange.parse("2025-05")
        for _ in benchmark.scaledIterations {
            var cursor = try store.samples(of: heartRate, from: month.from!, to: month.to!)
            var n = 0
            while try cursor.next() != nil { n += 1 }
            blackHole(n)
        }
    }

    Benchmark("Scan.HeartRate.Year.Decode") { benchmark in
        let store = try Store(at: fixture.directory)
        for _ in benchmark.scaledIterations {
            var n = 0
            try store.forEachBlock(of: heartRate) { _, block in n += block.count }
            blackHole(n)
        }
    }

    Benchmark("Scan.HeartRate.Year.DailyStats") { benchmark in
        let store = try Store(at: fixture.directory)
        for _ in benchmark.scaledIterations {
            var days: [Int64: (Int, Double, Double, Double)] = [:]
            try store.forEachBlock(of: heartRate) { segment, block in
                for i in 0..<block.count {
                    guard let v = block.value(at: i, in: segment) else { continue }
                    let d = block.start(at: i) / 86_400_000_000
                    let old = days[d] ?? (0, .infinity, -.infinity, 0)
                    days[d] = (old.0 + 1, min(old.1, v), max(old.2, v), old.3 + v)
                }
            }
            blackHole(days.count)
        }
    }
}
