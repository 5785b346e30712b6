import Foundation
import XCTest

@testable import TSDB
@testable import TSDBParquet

/// The test vectors under Formats/vectors/parquet-v1 (Formats/parquet-v1.md §9): the export of
/// each segment-v3 vector's day file must be written byte for byte as stored, and read back by
/// pyarrow and DuckDB as the day file's samples. TSDB_WRITE_VECTORS=1 rewrites them.
final class ParquetVectorTests: XCTestCase {
    static let formats = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Formats/vectors").standardized.path

    func files(under root: String) -> [String] {
        let e = FileManager.default.enumerator(atPath: root)!
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(".parquet") }.sorted()
    }

    func testVectorsAreWhatThisBuildWrites() throws {
        for name in ["two-heart-rates", "edge-cases", "heart-rate-workout"] {
            let store = TemporaryFolder("parquet-vector")
            defer { store.cleanup() }
            let json = try Data(contentsOf: URL(fileURLWithPath: Self.formats + "/segment-v3/\(name).json"))
            let date = try XCTUnwrap(String(decoding: json.prefix(40), as: UTF8.self).split(separator: "\"")[3])
            store.write(bytes: Array(json), to: "raw/\(date.prefix(4))/\(date.dropFirst(5).prefix(2))/\(date).json")
            XCTAssertEqual(try tsdbShell(["compact", store.path]).status, 0)
            let out = store.path + "/parquet"
            _ = try ParquetExport.run(try Store(at: store.path), to: out, options: ParquetExportOptions())

            let vector = Self.formats + "/parquet-v1/" + name
            if ProcessInfo.processInfo.environment["TSDB_WRITE_VECTORS"] == "1" {
                try? FileManager.default.removeItem(atPath: vector)
                for f in files(under: out) {
                    let target = vector + "/" + f
                    try FileManager.default.createDirectory(
                        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                    try FileManager.default.copyItem(atPath: out + "/" + f, toPath: target)
                }
            }
            XCTAssertEqual(files(under: vector), files(under: out), name)
            XCTAssertFalse(files(under: vector).isEmpty, name)
            for f in files(under: out) {
                XCTAssertEqual(sha(vector + "/" + f), sha(out + "/" + f), "\(name)/\(f) is not what this build writes")
            }
            _ = try tsdbShell(["export", "--store", store.path, "--format", "ndjson"], "> \(store.path)/all.ndjson")
            let r = try runProcess(
                "/usr/bin/env", ["python3", ParquetTests.checker, "samples", vector, store.path + "/all.ndjson"])
            XCTAssertEqual(r.status, 0, "\(name): " + r.stdout + r.stderr)
        }
    }
}
