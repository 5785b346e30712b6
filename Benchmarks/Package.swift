// swift-tools-version:6.1
// Nested package so the benchmark dependencies stay out of the library build.
// Run from this folder: `swift package benchmark`.
import PackageDescription

let package = Package(
    name: "TSDBBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "tsdb", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "TSDBBenchmarks",
            dependencies: [
                .product(name: "TSDB", package: "tsdb"),
                .product(name: "TSDBSynthetic", package: "tsdb"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/TSDBBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // The library's rows in memory, for Benchmarks/compare/ranges.py (no benchmark dependencies).
        .executableTarget(
            name: "tsdb-rows",
            dependencies: [.product(name: "TSDB", package: "tsdb")],
            path: "RowsInMemory"
        ),
    ]
)
