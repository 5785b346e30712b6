import Foundation
import TSDBSynthetic
import Testing

@testable import TSDB

/// `FileSystem.names(in:)` takes each name's kind from the listing itself: the same names and
/// kinds as the lstat of each (`FileSystem.list`), links not followed.
@Suite struct FileSystemTests {
    @Test func namesAndKindsAreThoseOfAnLstatPerName() throws {
        let folder = TemporaryFolder("names")
        defer { folder.cleanup() }
        for i in 0..<40 { folder.write("\(i)", to: "file\(i).seg") }
        folder.write("x", to: "sub/inner.seg")
        try FileManager.default.createDirectory(atPath: folder.path + "/empty", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link-to-sub", withDestinationPath: "sub")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/dangling", withDestinationPath: "nowhere")

        let names = try FileSystem.names(in: folder.path)
        let listed = try FileSystem.list(folder.path)
        #expect(names.count == 44)
        #expect(names.map(\.name).sorted() == listed.map(\.name))
        #expect(Set(names.filter(\.isDirectory).map(\.name)) == ["sub", "empty"])
        #expect(Set(listed.filter(\.isDirectory).map(\.name)) == ["sub", "empty"])
        #expect(throws: TSDBError.self) { try FileSystem.names(in: folder.path + "/missing") }
    }
}

/// `ReadBuffer` gives each file's exact bytes whatever came before in the same buffer (larger or
/// smaller files, empty ones), maps files above its limit, and names the path when it cannot read.
@Suite struct ReadBufferTests {
    @Test func filesOfEverySizeReadBackExactlyThroughOneBuffer() throws {
        let folder = TemporaryFolder("read-buffer")
        defer { folder.cleanup() }
        var random = SplitMix64(seed: 20_261_129)
        // Sizes around the 256 KB growth steps and the 4 KB pages, in an order that grows and shrinks.
        var sizes = [0, 1, 4095, 4096, 4097, 262_143, 262_144, 262_145, 10, 600_000, 0, 3]
        for _ in 0..<20 { sizes.append(Int.random(in: 0...700_000, using: &random)) }
        let buffer = ReadBuffer(largestRead: 650_000)
        for (k, size) in sizes.enumerated() {
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            folder.write(bytes: bytes, to: "f\(k)")
            let read = try buffer.withContents(of: folder.path + "/f\(k)") { Array($0) }
            // Compared outside #expect, which would print both arrays on failure.
            let same = read == bytes
            #expect(same, "file \(k): \(read.count) bytes read of \(size)")
        }
    }

    @Test func aMissingFileOrAFolderIsAnErrorNamingIt() throws {
        let folder = TemporaryFolder("read-buffer-errors")
        defer { folder.cleanup() }
        let buffer = ReadBuffer()
        for path in [folder.path + "/missing.json", folder.path] {
            do {
                _ = try buffer.withContents(of: path) { $0.count }
                Issue.record("read \(path)")
            } catch {
                #expect(error.path == path)
            }
        }
    }
}

/// Slices of one mapped file (``MappedFiles``, a pack's segments) hold the bytes a mapping of the
/// same range would, keep the file mapped after the cache and the whole are gone, and refuse a
/// range past the end as damage naming the file, as a mapping of that range does.
@Suite struct MappedSliceTests {
    @Test func slicesHoldTheBytesOfTheirRange() throws {
        let folder = TemporaryFolder("mapped-slices")
        defer { folder.cleanup() }
        var random = SplitMix64(seed: 20_261_129)
        let bytes = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        folder.write(bytes: bytes, to: "pack.seg")
        let path = folder.path + "/pack.seg"
        var ranges = [(0, 0), (0, 1), (0, 20_000), (4095, 2), (4096, 4096), (19_999, 1), (20_000, 0), (8, 12_000)]
        for _ in 0..<40 {
            let offset = Int.random(in: 0...20_000, using: &random)
            ranges.append((offset, Int.random(in: 0...(20_000 - offset), using: &random)))
        }
        var slices: [MappedFile] = []
        do {
            var files = MappedFiles()
            for (offset, count) in ranges { slices.append(try files.slice(of: path, offset: offset, count: count)) }
        }
        for ((offset, count), slice) in zip(ranges, slices) {
            let sliced = slice.withBytes { Array($0) }
            let mapped = try MappedFile(path: path, offset: offset, count: count).withBytes { Array($0) }
            // Compared outside #expect, which would print the arrays on failure.
            let same = sliced == Array(bytes[offset..<offset + count]) && sliced == mapped
            #expect(same, "\(count) bytes at \(offset)")
            #expect(slice.offset == offset && slice.count == count && slice.path == path)
        }
    }

    /// A file that grew after it was mapped (a compaction's own pack, read back while it writes
    /// more) is mapped again for a range past the old end; earlier slices keep their bytes.
    @Test func aFileThatGrewIsMappedAgain() throws {
        let folder = TemporaryFolder("mapped-slices-grown")
        defer { folder.cleanup() }
        let path = folder.path + "/pack.seg"
        let first = (0..<5_000).map { UInt8(truncatingIfNeeded: $0) }
        let more = (0..<7_000).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) }
        folder.write(bytes: first, to: "pack.seg")
        var files = MappedFiles()
        let early = try files.slice(of: path, offset: 100, count: 4_900)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(more))
        try handle.close()
        let late = try files.slice(of: path, offset: 4_990, count: 7_010)
        let lateBytes = late.withBytes { Array($0) }
        let earlyBytes = early.withBytes { Array($0) }
        // Compared outside #expect, which would print the arrays on failure.
        let same = lateBytes == Array((first + more)[4_990...]) && earlyBytes == Array(first[100...])
        #expect(same)
        #expect(throws: TSDBError.self) { try files.slice(of: path, offset: 11_000, count: 1_001) }
    }

    @Test func aRangePastTheEndIsDamageNamingTheFile() throws {
        let folder = TemporaryFolder("mapped-slices-short")
        defer { folder.cleanup() }
        folder.write(bytes: [UInt8](repeating: 7, count: 100), to: "pack.seg")
        let path = folder.path + "/pack.seg"
        var files = MappedFiles()
        for (offset, count) in [(0, 101), (100, 1), (101, 0), (50, 51), (-1, 1), (Int.max, 1)] {
            do {
                _ = try files.slice(of: path, offset: offset, count: count)
                Issue.record("sliced \(count) bytes at \(offset)")
            } catch {
                #expect(error.kind == .corruption && error.path == path, "\(error)")
                #expect(error.message.contains("file is 100 bytes, too short"), "\(error)")
            }
        }
        #expect(throws: TSDBError.self) { try files.slice(of: folder.path + "/missing.seg", offset: 0, count: 1) }
    }
}
