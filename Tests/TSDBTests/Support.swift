import Foundation

@testable import TSDB
@testable import TSDBSynthetic

/// A fresh folder under the system temporary directory, removed by `cleanup()`.
struct TemporaryFolder {
    let path: String

    init(_ label: String = "tsdb-test") {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: path) }

    func write(_ text: String, to relative: String) {
        let url = URL(fileURLWithPath: path + "/" + relative)
        try! FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try! Data(text.utf8).write(to: url)
    }

    func write(bytes: [UInt8], to relative: String) {
        let url = URL(fileURLWithPath: path + "/" + relative)
        try! FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try! Data(bytes).write(to: url)
    }
}

func parseDay(_ text: String) throws -> ParsedDayFile {
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBytes { try DayFileParser.parse(UnsafeRawBufferPointer($0), path: "test.json") }
}

/// Parses a day file into full ``Sample`` values (resolving interned strings).
func samples(ofDayFile bytes: [UInt8], path: String = "test.json") throws -> [Sample] {
    let parsed = try bytes.withUnsafeBytes { try DayFileParser.parse($0, path: path) }
    var strings = parsed.strings
    return parsed.samples.map { unpack($0, &strings) }
}

func unpack(_ p: PackedSample, _ strings: inout ByteInterner) -> Sample {
    Sample(p, strings: &strings)
}

/// Every sample of every day file under `raw`, with samples present in two files counted once.
func rawSampleSet(_ raw: String) throws -> [Sample: Int] {
    var all: [Sample: Int] = [:]
    let e = FileManager.default.enumerator(atPath: raw)!
    var seenPerFile: [Set<Sample>] = []
    while let rel = e.nextObject() as? String {
        guard rel.hasSuffix(".json") else { continue }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: raw + "/" + rel)))
        seenPerFile.append(Set(try samples(ofDayFile: bytes, path: rel)))
    }
    for set in seenPerFile { for s in set { all[s] = 1 } }
    return all
}

/// Reads a whole store back through the public query API.
func storedSamples(_ store: Store) throws -> [Sample] {
    var out: [Sample] = []
    for t in store.types {
        var c = try store.samples(of: t.type)
        while let s = try c.next() { out.append(s) }
    }
    return out
}

func sha(_ path: String) -> Data {
    (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
}

/// Contents and modification times of every file under `dir`, to prove nothing was written.
func snapshot(_ dir: String) -> [String: (Data, Date)] {
    var out: [String: (Data, Date)] = [:]
    let e = FileManager.default.enumerator(atPath: dir)!
    while let rel = e.nextObject() as? String {
        let p = dir + "/" + rel
        var isDir: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: p, isDirectory: &isDir)
        if isDir.boolValue { continue }
        let attrs = try! FileManager.default.attributesOfItem(atPath: p)
        out[rel] = (sha(p), attrs[.modificationDate] as! Date)
    }
    return out
}

func generate(_ dir: String, days: Int, seed: UInt64, edgeCases: Bool = true, start: String = "2025-03-20") throws {
    var o = HealthDataGenerator.Options()
    o.days = days
    o.seed = seed
    o.startDate = start
    o.edgeCases = edgeCases
    o.heartRateDensity = 0.3
    try HealthDataGenerator(options: o).write(rawDirectory: dir + "/raw")
}

/// Writes a generated Apple Health export of `days` days (default options otherwise) to `path`.
func writeGeneratedExport(days: Int, seed: UInt64? = nil, to path: String) throws {
    var o = HealthDataGenerator.Options()
    o.days = days
    if let seed { o.seed = seed }
    _ = try AppleExportGenerator(options: o).write(to: path)
}

/// The ``TSDBError`` that `body` throws, or nil if it succeeds.
func caught(_ body: () throws -> Void) -> TSDBError? {
    do {
        try body()
        return nil
    } catch {
        return error as? TSDBError
    }
}

/// Runs the built `tsdb` through bash, so a test can redirect or pipe its output as a user would:
/// `shellTail` is appended after the command (e.g. `> /dev/full`, `>&-`, `| head -c 10`).
/// `pipefail` makes the status tsdb's own when piped.
func tsdbShell(_ arguments: [String], _ shellTail: String = "", environment: [String: String] = [:]) throws
    -> CommandLineTests.Run
{
    let script = "set -o pipefail; \"$0\" \"$@\" \(shellTail)"
    return try runProcess(
        "/bin/bash", ["-c", script, CommandLineTests.executable] + arguments, environment: environment)
}

/// Runs a program to completion with its output captured.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
    -> CommandLineTests.Run
{
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return CommandLineTests.Run(
        status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
        stderr: String(decoding: e, as: UTF8.self))
}

/// A store of generated days (March 2025, Paris) for command-line tests, written by the binary
/// under test (so the tests also run against another build's own format).
func generatedStore(_ label: String, days: Int = 10, start: String = "2025-03-01") throws -> TemporaryFolder {
    let folder = TemporaryFolder(label)
    try generate(folder.path, days: days, seed: 11, edgeCases: false, start: start)
    _ = try tsdbShell(["compact", folder.path])
    return folder
}

/// The bytes of `entry`'s segment: its range of its file (manifest-v4.md §1).
func segmentBytes(_ entry: Manifest.SegmentEntry, in storeDirectory: String) throws -> [UInt8] {
    let file = try Data(contentsOf: URL(fileURLWithPath: storeDirectory + "/" + entry.path))
    return Array(file[entry.offset..<entry.offset + entry.size])
}

/// Flips `mask`'s bits of the byte `index` bytes into `entry`'s segment, in its file.
func flipByte(_ index: Int, of entry: Manifest.SegmentEntry, in storeDirectory: String, mask: UInt8 = 0x08) throws {
    let path = storeDirectory + "/" + entry.path
    var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[entry.offset + index] ^= mask
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}
