import Foundation
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
