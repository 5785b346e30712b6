import Benchmark
import Foundation
import TSDB

/// A generated year, compacted once per benchmark process, shared by the read benchmarks.
let fixture: (directory: String, rawBytes: Int, heartRate: Int) = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsdb-bench-year").path
    let layout = StoreLayout(appleHealthDirectory: directory)
    if !FileManager.default.fileExists(atPath: layout.manifestPath) {
        var options = HealthDataGenerator.Options()
        options.days = 365
        try! HealthDataGenerator(options: options).write(rawDirectory: layout.rawDirectory)
        _ = try! Compactor(layout: layout).run()
    }
    let store = try! Store(layout: layout)
    let rawBytes = store.manifest.rawFiles.reduce(0) { $0 + $1.size }
    let hr = store.types.first { $0.type == heartRate }!.sampleCount
    return (directory, rawBytes, hr)
}()

let heartRate = "HKQuantityTypeIdentifierHeartRate"

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
                                           maxDuration: .seconds(5), maxIterations: 50)

    Benchmark("Compaction.Year", configuration: .init(metrics: [.wallClock, .peakMemoryResident], maxIterations: 5)) { benchmark in
        let layout = StoreLayout(appleHealthDirectory: fixture.directory)
        benchmark.startMeasurement()
        let report = try Compactor(layout: layout).run()
        benchmark.stopMeasurement()
        blackHole(report.samplesStored)
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
                    let d = block.starts[i] / 86_400_000_000
                    let old = days[d] ?? (0, .infinity, -.infinity, 0)
                    days[d] = (old.0 + 1, min(old.1, v), max(old.2, v), old.3 + v)
                }
            }
            blackHole(days.count)
        }
    }
}
