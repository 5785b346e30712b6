import Foundation
import Testing

/// README's "Library" section is code people copy: it must compile against the library as built.
@Suite struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized.path

    @Test func librarySectionTypechecksAsWritten() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.range(of: "## Library"))
        let open = try #require(readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex))
        let close = try #require(readme.range(of: "```", range: open.upperBound..<readme.endIndex))
        let folder = TemporaryFolder("readme")
        defer { folder.cleanup() }
        folder.write(String(readme[open.upperBound..<close.lowerBound]), to: "main.swift")
        // The modules of this very build sit beside the tsdb executable.
        let modules = URL(fileURLWithPath: CommandLineTests.executable).deletingLastPathComponent()
            .appendingPathComponent("Modules").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "swiftc", "-typecheck", "-I", modules, "-I", Self.root + "/Sources/CTSDBZstd",
            "-I", Self.root + "/Sources/CTSDBLZ4", "-I", Self.root + "/Sources/CTSDBCRC32C/include",
            "-I", Self.root + "/Sources/CTSDBThreads/include",
            folder.path + "/main.swift",
        ]
        let err = Pipe()
        p.standardError = err
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(message)")
    }
}
