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
        .executable(name: "tsdb-serve", targets: ["tsdb-serve"]),
        .executable(name: "tsdb-png", targets: ["tsdb-png"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The dashboard's HTTP server (only in tsdb-serve; its default traits pull in more than it needs).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
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
        .systemLibrary(
            name: "CTSDBZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // The CPU's CRC-32C instruction (Swift has no way to it), imported only by the engine's CRC32C.
        .target(name: "CTSDBCRC32C"),
        // A thread started on another core (the call that says where is a GNU extension), imported
        // only by the engine's StandbyThread.
        .target(name: "CTSDBThreads"),
        .target(
            name: "TSDB",
            dependencies: ["CTSDBZstd", "CTSDBLZ4", "CTSDBCRC32C", "CTSDBThreads"],
            // Test-only hooks (fault injection, fuzz checks) exist in debug builds only, as
            // swift-system's ENABLE_MOCKING: release builds carry no trace of them.
            swiftSettings: [.define("TSDB_TESTING", .when(configuration: .debug))]
        ),
        // Realistic synthetic day files for the demo, tests and benchmarks.
        .target(
            name: "TSDBSynthetic",
            dependencies: ["TSDB", "TSDBAppleHealth"]
        ),
        // Parquet files written from segments (its own Thrift and page encoders; zstd via the engine).
        .target(
            name: "TSDBParquet",
            dependencies: ["TSDB"]
        ),
        // Apple Health's export.zip / export.xml: zip (ZIP64, deflate through zlib) and a streaming
        // scanner for the export's not-quite-XML.
        .target(
            name: "TSDBAppleHealth",
            dependencies: ["TSDB", "CTSDBZlib"],
            swiftSettings: [.define("TSDB_TESTING", .when(configuration: .debug))]
        ),
        // Charts (SVG) for `tsdb plot` and the dashboard; PNG through librsvg, loaded at run time.
        .target(
            name: "TSDBCharts",
            dependencies: ["TSDB"]
        ),
        // The local dashboard and its JSON API.
        .target(
            name: "TSDBServer",
            dependencies: ["TSDB", "TSDBCharts", .product(name: "Hummingbird", package: "hummingbird")]
        ),
        // A program of its own, which `tsdb serve` runs: the other commands' start-up never pays
        // for loading the HTTP stack.
        .executableTarget(
            name: "tsdb-serve",
            dependencies: ["TSDBServer"]
        ),
        // PNG charts for `tsdb plot`, which runs it: librsvg is loaded with dlopen, which a fully
        // static tsdb (`.ci/setup fast`) cannot do.
        .executableTarget(
            name: "tsdb-png",
            dependencies: ["TSDBCharts"]
        ),
        .executableTarget(
            name: "tsdb",
            dependencies: [
                "TSDB",
                "TSDBSynthetic",
                "TSDBParquet",
                "TSDBCharts",
                "TSDBAppleHealth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "TSDBTests",
            dependencies: [
                "TSDB", "TSDBSynthetic", "TSDBParquet", "TSDBCharts", "TSDBServer", "TSDBAppleHealth", "tsdb",
                "tsdb-serve", "tsdb-png",
            ],
            // Vectors are read by path (and some are scripts run with python3), not bundled.
            exclude: ["Vectors"]
        ),
    ]
)
