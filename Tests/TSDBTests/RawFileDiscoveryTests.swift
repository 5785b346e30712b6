import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// The listing of `raw/` (half its month folders on another thread) against a brute-force
/// oracle over random trees: day files, names that are not, files in the wrong month, folders
/// named like day files and links inside and outside `raw/`, over enough months for both threads.
@Suite struct RawFileDiscoveryTests {
    /// What the listing should hold, from FileManager and the rules of raw-json-v1 §1 alone.
    struct Expected: Equatable {
        var files: [String] = []  // relative path, size, in date order
        var skipped: [String] = []
        var ignored: [String] = []
    }

    static func oracle(_ raw: String) throws -> Expected {
        let fm = FileManager.default
        var out = Expected()
        var files: [(day: String, line: String)] = []
        func isDigits(_ s: String, _ n: Int) -> Bool {
            s.count == n && s.allSatisfy(\.isASCII) && s.allSatisfy(\.isNumber)
        }
        for year in try fm.contentsOfDirectory(atPath: raw) {
            let yearPath = raw + "/" + year
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: yearPath, isDirectory: &isFolder), isFolder.boolValue, isDigits(year, 4) else {
                out.ignored.append(yearPath)
                continue
            }
            for month in try fm.contentsOfDirectory(atPath: yearPath) {
                let monthPath = yearPath + "/" + month
                guard fm.fileExists(atPath: monthPath, isDirectory: &isFolder), isFolder.boolValue, isDigits(month, 2)
                else {
                    out.ignored.append(monthPath)
                    continue
                }
                for name in try fm.contentsOfDirectory(atPath: monthPath) {
                    let path = monthPath + "/" + name
                    let stem = name.hasSuffix(".json") ? String(name.dropLast(5)) : ""
                    let f = DateFormatter()
                    f.dateFormat = "yyyy-MM-dd"
                    f.timeZone = TimeZone(identifier: "UTC")
                    f.isLenient = false
                    guard stem.count == 10, let date = f.date(from: stem), f.string(from: date) == stem else {
                        out.ignored.append(path)
                        continue
                    }
                    var link = stat()
                    lstat(path, &link)
                    let kind = link.st_mode & S_IFMT
                    if stem.prefix(4) != year || stem.dropFirst(5).prefix(2) != month {
                        out.skipped.append(path)
                    } else if kind == S_IFDIR {
                        out.skipped.append(path)
                    } else if kind == S_IFLNK,
                        !(try fm.destinationOfSymbolicLink(atPath: path)).hasPrefix(raw + "/")
                    {
                        out.skipped.append(path)
                    } else {
                        var target = stat()
                        stat(path, &target)
                        files.append((stem, "\(year)/\(month)/\(name) \(target.st_size)"))
                    }
                }
            }
        }
        out.files = files.sorted { $0.day < $1.day }.map(\.line)
        out.skipped.sort()
        out.ignored.sort()
        return out
    }

    static func listed(_ raw: String, parallel: Bool) throws -> Expected {
        let listing = try RawFileDiscovery.find(rawDirectory: raw, parallel: parallel)
        for f in listing.files {
            #expect(f.absolutePath == raw + "/" + f.relativePath && f.relativePath.hasSuffix(f.dateText + ".json"))
        }
        return Expected(
            files: listing.files.map { "\($0.relativePath) \($0.size)" },
            skipped: listing.skipped.map { $0.path ?? "" },
            ignored: listing.ignored)
    }

    /// A random tree: 1-3 years of 1-12 month folders, each with some day files (one per date,
    /// random sizes) and maybe a stray name, a file of another month, a folder named like a day
    /// file, links in and out of `raw/`, or a name a byte away from a day file's; maybe a year or
    /// month folder that is not one.
    static func tree(in folder: TemporaryFolder, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let fm = FileManager.default
        for year in (2019...2026).shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng)) {
            for month in (1...12).shuffled(using: &rng).prefix(Int.random(in: 1...12, using: &rng)) {
                let folderPath = String(format: "raw/%04d/%02d/", year, month)
                try fm.createDirectory(atPath: folder.path + "/" + folderPath, withIntermediateDirectories: true)
                for day in (1...28).shuffled(using: &rng).prefix(Int.random(in: 0...5, using: &rng)) {
                    let name = String(format: "%04d-%02d-%02d.json", year, month, day)
                    folder.write(
                        String(repeating: "x", count: Int.random(in: 0...300, using: &rng)), to: folderPath + name)
                }
                switch Int.random(in: 0..<8, using: &rng) {
                case 0: folder.write("x", to: folderPath + "notes.md")
                case 1: folder.write("x", to: folderPath + String(format: "%04d-%02d-15.json", year, month % 12 + 1))
                case 2:
                    try fm.createDirectory(
                        atPath: folder.path + "/" + folderPath
                            + String(format: "%04d-%02d-29.json", year, month == 2 ? 3 : month),
                        withIntermediateDirectories: true)
                case 3, 4:
                    // A link in place of the 28th's file, to a file outside raw/ or inside it.
                    let target = Bool.random(using: &rng) ? "elsewhere.json" : "raw/kept.txt"
                    folder.write("target of a link", to: target)
                    let link = folder.path + "/" + folderPath + String(format: "%04d-%02d-28.json", year, month)
                    try? fm.removeItem(atPath: link)
                    try fm.createSymbolicLink(atPath: link, withDestinationPath: folder.path + "/" + target)
                case 5: folder.write("x", to: String(format: "raw/%04d/%d/x.json", year, month))
                case 6:
                    // Names a byte away from a day file's: read as bytes, they must all be ignored.
                    let date = String(format: "%04d-%02d-", year, month)
                    let nearMisses = [
                        date + "32.json", date + "00.json", date + "1x.json", date + "01.jsox", date + "01.JSON",
                        date + "01.json~", date + "1.json", ".json", String(format: "%04d%02d01.json.", year, month),
                    ]
                    folder.write("x", to: folderPath + nearMisses[Int.random(in: 0..<nearMisses.count, using: &rng)])
                default: break
                }
            }
        }
        if Int.random(in: 0..<3, using: &rng) == 0 { folder.write("x", to: "raw/misc/2025-01-01.json") }
    }

    @Test(arguments: 0..<12) func listingMatchesTheOracle(seed: Int) throws {
        let folder = TemporaryFolder("discovery")
        defer { folder.cleanup() }
        try Self.tree(in: folder, seed: UInt64(seed))
        let raw = folder.path + "/raw"
        let expected = try Self.oracle(raw)
        let parallel = try Self.listed(raw, parallel: true)
        #expect(parallel == expected)
        #expect(try Self.listed(raw, parallel: false) == expected)
    }

    /// Each file's path is its folder's (shared) and its relative path; an export's is in
    /// `exports/`, not `raw/../exports/`.
    @Test func pathsAreTheFilesOwn() throws {
        let folder = TemporaryFolder("discovery-paths")
        defer { folder.cleanup() }
        folder.write("{}", to: "raw/2025/03/2025-03-02.json")
        folder.write("{}", to: "raw/2025/02/2025-02-28.json")
        folder.write("zip", to: "exports/export-2025-03-05.zip")
        let listing = try RawFileDiscovery.find(StoreLayout(appleHealthDirectory: folder.path))
        #expect(
            listing.files.map(\.relativePath) == [
                RawPath.exportPrefix + "export-2025-03-05.zip", "2025/02/2025-02-28.json", "2025/03/2025-03-02.json",
            ])
        #expect(
            listing.files.map(\.absolutePath) == [
                folder.path + "/exports/export-2025-03-05.zip", folder.path + "/raw/2025/02/2025-02-28.json",
                folder.path + "/raw/2025/03/2025-03-02.json",
            ])
        #expect(listing.files.allSatisfy { FileManager.default.fileExists(atPath: $0.absolutePath) })
    }

    /// Months enough for the other thread: the files, skips and ignored names of whichever months
    /// either thread lists all arrive.
    @Test func monthsListedByEitherThreadAllArrive() throws {
        let folder = TemporaryFolder("discovery-halves")
        defer { folder.cleanup() }
        for month in 1...12 {
            folder.write("{}", to: String(format: "raw/2025/%02d/2025-%02d-01.json", month, month))
            folder.write("x", to: String(format: "raw/2025/%02d/notes-%02d.txt", month, month))
            folder.write("x", to: String(format: "raw/2025/%02d/2024-%02d-02.json", month, month))
        }
        let listing = try RawFileDiscovery.find(rawDirectory: folder.path + "/raw")
        #expect(listing.files.map(\.dateText) == (1...12).map { String(format: "2025-%02d-01", $0) })
        #expect(listing.ignored.count == 12 && listing.ignored == listing.ignored.sorted())
        #expect(listing.skipped.count == 12 && listing.skipped.allSatisfy { $0.message.contains("belongs in 2024/") })
    }

    /// Date order by slots (days that span little more than the files) or by sorting (sparse days,
    /// or the same day twice), against sorting by day: dense, sparse and repeated days.
    @Test func filesComeInDateOrderHoweverSpread() {
        var rng = SplitMix64(seed: 31)
        for round in 0..<300 {
            let count = Int.random(in: 0...400, using: &rng)
            let spread = [Int64(count), Int64(count) * 3, 100_000][round % 3]
            var days = Set<Int64>()
            while days.count < count { days.insert(20_000 + Int64.random(in: 0...max(spread, 1), using: &rng)) }
            var list = Array(days).shuffled(using: &rng)
            if round % 5 == 4, let d = list.first { list.append(d) }
            let files = list.enumerated().map { i, day in
                RawFile(path: RawPath(day: day), base: "/raw/", day: day, size: i, mtimeNanoseconds: 0)
            }
            let ordered = PendingListing.inDateOrder(files)
            #expect(ordered.map(\.day) == list.sorted(), "round \(round)")
            #expect(ordered.map(\.size).sorted() == Array(files.indices), "round \(round)")
        }
    }
}
