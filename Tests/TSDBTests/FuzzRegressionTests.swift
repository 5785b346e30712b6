import Foundation
import Testing

@testable import TSDB

/// Every input a fuzzer ever crashed on (Tests/Fuzz/crashes/<target>/), replayed through the same
/// property checks the fuzz targets run. A regression crashes this test process.
@Suite struct FuzzRegressionTests {
    static let crashes = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../Fuzz/crashes"
    ).standardized.path

    static func inputs(_ target: String) -> [String] {
        let dir = crashes + "/" + target
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter {
            !$0.hasPrefix(".") && $0 != "README.md"
        }.sorted().map { dir + "/" + $0 }
    }

    @Test func rawJSONCrashInputs() throws {
        for path in Self.inputs("raw-json") {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes.withUnsafeBytes { checkRawJSON($0) }
        }
    }

    @Test func segmentCrashInputs() throws {
        let inputs = Self.inputs("segment")
        #expect(!inputs.isEmpty, "the first fuzzing run found at least one; they must stay here")
        for path in inputs {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            // Each kept input is damaged: it must be rejected with an error, not crash.
            let error = caught {
                _ = try SegmentReader(file: bytes.withUnsafeBytes { MappedFile(copying: $0, path: path) })
            }
            bytes.withUnsafeBytes { checkSegmentBytes($0) }
            #expect(error?.kind == .corruption || error?.kind == .unsupportedVersion || error == nil)
        }
    }
}
