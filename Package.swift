// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "tsdb",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "TSDB", targets: ["TSDB"]),
        .library(name: "TSDBSynthetic", targets: ["TSDBSynthetic"]),
        .library(name: "TSDBParquet", targets: ["TSDBParquet"]),
        .library(name: "TSDBCharts", targets: ["TSDBCharts"]),
        .executable(name: "tsdb", targets: ["tsdb"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        // System C libraries, imported only by the engine.
        .systemLibrary(
            name: "CTSDBZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        .systemLibrary(
            name: "CTSDBLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(
            name: "TSDB",
            dependencies: ["CTSDBZstd", "CTSDBLZ4"],
            // Test-only hooks (fault injection, fuzz checks) exist in debug builds only, as
            // swift-system's ENABLE_MOCKING: release builds carry no trace of them.
            swiftSettings: [.define("TSDB_TESTING", .when(configuration: .debug))]
        ),
        // Realistic synthetic day files for the demo, tests and benchmarks.
        .target(
            name: "TSDBSynthetic",
            dependencies: ["TSDB"]
        ),
        // Parquet files written from segments (its own Thrift and page encoders; zstd via the engine).
        .target(
            name: "TSDBParquet",
            dependencies: ["TSDB"]
        ),
        // Charts (SVG) for `tsdb plot` and the dashboard; PNG through librsvg, loaded at run time.
        .target(
            name: "TSDBCharts",
            dependencies: ["TSDB"]
        ),
        .executableTarget(
            name: "tsdb",
            dependencies: [
                "TSDB",
                "TSDBSynthetic",
                "TSDBParquet",
                "TSDBCharts",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "TSDBTests",
            dependencies: ["TSDB", "TSDBSynthetic", "TSDBParquet", "TSDBCharts", "tsdb"],
            // Vectors are read by path (and some are scripts run with python3), not bundled.
            exclude: ["Vectors"]
        ),
    ]
)
