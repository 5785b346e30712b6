import Foundation
import Testing

@testable import TSDB

/// The test vectors under Formats/vectors/manifest-v3 (Formats/manifest-v3.md §5), written by
/// `make-vectors.py` there, a second implementation of the layout, CRC-32C and the content hash.
@Suite struct ManifestVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Formats/vectors/manifest-v3").standardized.path

    func json(_ name: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.directory + "/" + name)))
    }

    func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    struct MissingField: Error { let key: String }

    /// `object[key]` as a `T`, or an error naming the key.
    func field<T>(_ object: [String: Any], _ key: String, as: T.Type = T.self) throws -> T {
        guard let value = object[key] as? T else { throw MissingField(key: key) }
        return value
    }

    func int(_ object: [String: Any], _ key: String) throws -> Int {
        try field(object, key, as: NSNumber.self).intValue
    }

    /// manifest.json as a ``Manifest``.
    func expectedManifest() throws -> Manifest {
        let fields = try #require(try json("manifest.json") as? [String: Any])
        var m = Manifest()
        m.generation = UInt64(try int(fields, "generation"))
        for s in try field(fields, "segments", as: [[String: Any]].self) {
            m.segments.append(
                Manifest.SegmentEntry(
                    type: try field(s, "type"), year: try int(s, "year"), month: try int(s, "month"),
                    path: try field(s, "path"), fileSize: try int(s, "fileSize"),
                    fileCRC: UInt32(try int(s, "fileCRC")),
                    sampleCount: try int(s, "sampleCount"), firstStart: Int64(try int(s, "firstStart")),
                    lastStart: Int64(try int(s, "lastStart")), maxEnd: Int64(try int(s, "maxEnd"))))
        }
        for r in try field(fields, "rawFiles", as: [[String: Any]].self) {
            let months = try field(r, "months", as: [NSNumber].self).map { MonthIndex(rawValue: $0.int32Value) }
            let mtime = try #require(Int64(try field(r, "mtimeNanoseconds", as: String.self)))
            let hash = try #require(UInt64(try field(r, "contentHash", as: String.self), radix: 16))
            m.rawFiles.append(
                Manifest.RawFileEntry(
                    path: try field(r, "path"), size: try int(r, "size"), mtimeNanoseconds: mtime, contentHash: hash,
                    sampleCount: try int(r, "sampleCount"), months: months))
        }
        return m
    }

    @Test func thisBuildWritesTheVectorsBytes() throws {
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/MANIFEST")))
        #expect(try expectedManifest().encode() == stored)
    }

    @Test func theVectorDecodesToItsFields() throws {
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/MANIFEST")))
        let expected = try expectedManifest()
        let decoded = try stored.withUnsafeBytes { try Manifest.decode($0, path: "MANIFEST") }
        #expect(decoded == expected)
        // Queries skip the raw-file entries.
        let forQueries = try stored.withUnsafeBytes { try Manifest.decode($0, path: "MANIFEST", rawFiles: false) }
        #expect(forQueries.segments == expected.segments && forQueries.rawFiles.isEmpty)
    }

    @Test func contentHashesOfTheVectorsInputs() throws {
        let cases = try #require(try json("content-hash.json") as? [[String: String]])
        #expect(cases.count >= 10)
        for c in cases {
            let input = bytes(hex: try field(c, "bytes", as: String.self))
            let hash = input.withUnsafeBytes { ContentHash.hash($0) }
            #expect(String(hash, radix: 16).leftPadded(to: 16) == c["hash"], "\(input.count) bytes")
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
