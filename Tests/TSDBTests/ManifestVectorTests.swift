import Foundation
import Testing

@testable import TSDB

/// The test vectors under Formats/vectors/manifest-v4 (Formats/manifest-v4.md §5), written by
/// `make-vectors.py` there, a second implementation of the layout, CRC-32C and the content hash.
@Suite struct ManifestVectorTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Formats/vectors/manifest-v4").standardized.path

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
                    path: try field(s, "path"), fileSize: try int(s, "fileSize"), offset: try int(s, "offset"),
                    size: try int(s, "size"), crc: UInt32(try int(s, "crc")),
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

    /// The vector's manifest with one segment changed, encoded (a valid CRC), then decoded.
    func decodeChanged(_ change: (inout Manifest.SegmentEntry) -> Void) throws -> Manifest {
        var m = try expectedManifest()
        change(&m.segments[1])
        let bytes = m.encode()
        return try bytes.withUnsafeBytes { try Manifest.decode($0, path: "MANIFEST") }
    }

    @Test func segmentsShareTheirFilesTableEntry() throws {
        let m = try expectedManifest()
        #expect(m.files.map(\.path) == ["segments/pack.g5.seg", "segments/pack.g7.seg"])
        #expect(m.files.map(\.size) == [90112, 60328])
    }

    /// A segment reaching past its file's recorded end is refused with the place of its entry.
    @Test func aSegmentOutsideItsFileIsCorrupt() throws {
        for change: (inout Manifest.SegmentEntry) -> Void in [
            { $0.offset = 60000 }, { $0.size = 60329 }, { $0.offset = Int(Int64.max) },
        ] {
            let e = #expect(throws: TSDBError.self) { try decodeChanged(change) }
            #expect(e?.kind == .corruption && e?.message.contains("outside its 60328-byte file") == true)
            #expect(e?.path == "MANIFEST" && e?.offset != nil)
        }
    }

    /// A file index past the table is refused, not read out of bounds.
    @Test func aFileIndexPastTheTableIsCorrupt() throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/MANIFEST")))
        // The first segment's file index follows its type (1 + 33 bytes), year and month.
        let type = Array("HKQuantityTypeIdentifierStepCount".utf8)
        let at = try #require(
            (0..<bytes.count - type.count).first { bytes[$0..<$0 + type.count].elementsEqual(type) })
        #expect(bytes[at + type.count + 3] == 0)
        bytes[at + type.count + 3] = 2
        let crc = CRC32C.checksum(Array(bytes[0..<bytes.count - 4]))
        for k in 0..<4 { bytes[bytes.count - 4 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        let e = #expect(throws: TSDBError.self) {
            try bytes.withUnsafeBytes { try Manifest.decode($0, path: "MANIFEST") }
        }
        #expect(e?.message.contains("file index 2 but the table has 2 files") == true)
        #expect(e?.offset == at + type.count + 3)
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
