import Dispatch

/// A day file found under `raw/`, or the newest Apple Health export under `exports/`.
struct RawFile: Sendable {
    /// Relative to `raw/`: `YYYY/MM/YYYY-MM-DD.json`, or `../exports/<name>` for an export.
    var path: RawPath
    /// The folder `path` starts from (`raw/`, or `exports/` for an export), with its slash: one
    /// string shared by a listing's files, where a path of each was made and freed with it.
    var base: String
    /// The date in the file name as days since 1970-01-01.
    var day: Int64
    var size: Int
    var mtimeNanoseconds: Int64

    init(path: RawPath, base: String, day: Int64, size: Int, mtimeNanoseconds: Int64) {
        (self.path, self.base, self.day, self.size, self.mtimeNanoseconds) = (path, base, day, size, mtimeNanoseconds)
    }

    /// A file at `relativePath` (tests name any path this way).
    init(relativePath: String, base: String, day: Int64, size: Int, mtimeNanoseconds: Int64) {
        self.init(path: RawPath(relativePath), base: base, day: day, size: size, mtimeNanoseconds: mtimeNanoseconds)
    }

    /// An Apple Health export rather than a day file.
    var isExport: Bool { path.isExport }

    /// The path relative to `raw/` as text.
    var relativePath: String { path.description }

    /// `YYYY-MM-DD`: the date the file name gives, which its `"date"` must match.
    var dateText: String {
        path.day == nil ? "" : String(relativePath.dropFirst(8).prefix(10))
    }

    /// Where the file is: made when it is read or named in a message, which a run that finds it
    /// unchanged never does.
    var absolutePath: String {
        isExport ? base + relativePath.dropFirst(RawPath.exportPrefix.count) : base + relativePath
    }
}

/// What is under `raw/`: day files to read, entries that cannot be read (reported like bad
/// files), and names that are not day files (not read, listed on request).
struct RawListing: Sendable {
    var files: [RawFile] = []
    var skipped: [TSDBError] = []
    var ignored: [String] = []
}

/// Finds the day files in `raw/YYYY/MM/YYYY-MM-DD.json`, in date order. Anything else is never
/// read: the layout is the contract (Formats/raw-json-v1.md §1).
enum RawFileDiscovery {
    static func find(rawDirectory: String, parallel: Bool = true) throws(TSDBError) -> RawListing {
        try PendingListing(rawDirectory: rawDirectory, exportsDirectory: nil, parallel: parallel).finish()
    }

    /// Day files plus the newest export in `exports/` (named so that names sort by export date),
    /// placed first: an export spans years, so it is merged before the day files stream past.
    static func find(_ layout: StoreLayout) throws(TSDBError) -> RawListing { try start(layout).finish() }

    /// Starts finding `layout`'s day files and export (on two threads if `parallel`): the caller
    /// does other work, then ``PendingListing/finish()``.
    static func start(_ layout: StoreLayout, parallel: Bool = true) throws(TSDBError) -> PendingListing {
        let exports = FileSystem.isDirectory(layout.exportsDirectory) ? layout.exportsDirectory : nil
        return try PendingListing(rawDirectory: layout.rawDirectory, exportsDirectory: exports, parallel: parallel)
    }
}

/// A listing under way. A stat per day file is most of a listing (a year's: 1.0-1.5 ms of a 9 ms
/// one-day compaction, the kernel's name lookups first), so the month folders are found when it
/// starts, and listed one at a time by a thread started on the other core at once and by the
/// caller when it finishes the listing, whichever is free: the caller reads its manifest in the
/// meanwhile, so the other thread lists more of them (a fixed half each left the caller listing
/// 0.4 ms after the other thread was done, timed at each step of one new day into the year).
struct PendingListing {
    /// A month folder to list: `raw/YYYY/MM`.
    private struct MonthFolder: Sendable {
        var path: String
        var year: Int
        var month: Int
    }

    /// Month folders below this many are listed on the calling thread alone: starting a thread
    /// costs about what listing two months of day files does.
    static let parallelFolderMinimum = 4

    private var out = RawListing()
    private let rawReal: String
    /// `raw/` and its slash, every day file's ``RawFile/base``.
    private let rawBase: String
    private let exportsDirectory: String?
    private var folders = MonthFolders([])
    private var helper: (result: Locked<RawListing>, done: DispatchSemaphore)?

    /// The month folders to list, each taken once by whichever thread asks next.
    private final class MonthFolders: Sendable {
        private let all: [MonthFolder]
        private let next = Locked(0)

        init(_ all: [MonthFolder]) { self.all = all }

        func take() -> MonthFolder? {
            next.withLock { i in
                guard i < all.count else { return nil }
                defer { i += 1 }
                return all[i]
            }
        }
    }

    fileprivate init(rawDirectory: String, exportsDirectory: String?, parallel: Bool) throws(TSDBError) {
        guard FileSystem.isDirectory(rawDirectory) else {
            throw TSDBError.notFound("raw folder not found", path: rawDirectory)
        }
        rawReal = FileSystem.realPath(rawDirectory) ?? rawDirectory
        rawBase = rawDirectory + "/"
        self.exportsDirectory = exportsDirectory
        var folders: [MonthFolder] = []
        // Listed in the file system's order; what is kept is sorted once at the end.
        for year in try FileSystem.list(rawDirectory, sorted: false) {
            let yearPath = rawDirectory + "/" + year.name
            guard year.isDirectory, year.name.count == 4, Self.digits(year.name) else {
                out.ignored.append(yearPath)
                continue
            }
            for month in Self.list(yearPath, into: &out) {
                let monthPath = yearPath + "/" + month.name
                guard month.isDirectory, month.name.count == 2, Self.digits(month.name) else {
                    out.ignored.append(monthPath)
                    continue
                }
                // Four and two digits, checked above.
                folders.append(
                    MonthFolder(
                        path: monthPath,
                        year: Int(year.name) ?? 0, month: Int(month.name) ?? 0))
            }
        }
        let shared = MonthFolders(folders)
        self.folders = shared
        // Room for every day of every month on either thread, made once: grown by appends, each
        // doubling copied the files to fresh pages (untouched room costs no page).
        let room = 31 * folders.count
        out.files.reserveCapacity(room)
        guard parallel && folders.count >= Self.parallelFolderMinimum else { return }
        let helper = (result: Locked(RawListing()), done: DispatchSemaphore(value: 0))
        self.helper = helper
        SecondThread.run { [rawReal, rawBase] in
            var listing = RawListing()
            listing.files.reserveCapacity(room)
            while let folder = shared.take() {
                Self.dayFiles(in: folder, rawReal: rawReal, base: rawBase, into: &listing)
            }
            helper.result.withLock { $0 = listing }
            helper.done.signal()
        }
    }

    /// Lists the rest on this thread, waits for the other, and gives everything in order.
    consuming func finish() throws(TSDBError) -> RawListing {
        var out = self.out
        while let folder = folders.take() { Self.dayFiles(in: folder, rawReal: rawReal, base: rawBase, into: &out) }
        if let helper {
            helper.done.wait()
            let later = helper.result.withLock { $0 }
            out.files += later.files
            out.skipped += later.skipped
            out.ignored += later.ignored
        }
        out.files = Self.inDateOrder(out.files)
        out.skipped.sort { ($0.path ?? "") < ($1.path ?? "") }
        out.ignored.sort()
        if let exportsDirectory { try Self.addNewestExport(in: exportsDirectory, to: &out) }
        return out
    }

    /// `files` by date (each day has one file): each placed at its day's slot when the days span
    /// not much more than there are files (a year of day files, 366 slots), else their days and
    /// places sorted. Sorting the files themselves moved three strings each per step (142K of a
    /// compaction with nothing to do's 5.40M instructions); sorting days and places, ~80K of 2.0M.
    static func inDateOrder(_ files: [RawFile]) -> [RawFile] {
        guard let first = files.first else { return files }
        let (lo, hi) = files.reduce((first.day, first.day)) { (min($0.0, $1.day), max($0.1, $1.day)) }
        if hi - lo < 4 * Int64(files.count) + 64 {
            var slots = [Int32](repeating: -1, count: Int(hi - lo) + 1)
            var distinct = true
            for (i, f) in files.enumerated() {
                distinct = distinct && slots[Int(f.day - lo)] < 0
                slots[Int(f.day - lo)] = Int32(i)
            }
            if distinct {
                var out: [RawFile] = []
                out.reserveCapacity(files.count)
                for i in slots where i >= 0 { out.append(files[Int(i)]) }
                return out
            }
        }
        var order = files.indices.map { (day: files[$0].day, place: $0) }
        order.sort { $0.day < $1.day }
        return order.map { files[$0.place] }
    }

    private static func digits(_ s: String) -> Bool { s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }

    /// A folder's entries; an unreadable folder is reported and passed over.
    private static func list(_ path: String, into out: inout RawListing) -> [FileSystem.Entry] {
        do throws(TSDBError) {
            return try FileSystem.list(path, sorted: false)
        } catch {
            out.skipped.append(unreadable(path, error))
            return []
        }
    }

    /// What is reported for a folder that cannot be listed.
    private static func unreadable(_ path: String, _ error: TSDBError) -> TSDBError {
        TSDBError(
            error.kind, "folder cannot be read (\(error.message)); its day files are not compacted", path: path,
            errno: error.errno)
    }

    /// The day files of one month folder, with what is skipped or ignored there. Names are read as
    /// the listing gives them, and strings made only for what is kept or reported: a string per
    /// name, a path per file and the name's checks were 3,500 instructions a day file (callgrind).
    private static func dayFiles(in folder: MonthFolder, rawReal: String, base: String, into out: inout RawListing) {
        // What every file of the month shares, made once; a file's own path only where a message
        // names it or a link is followed.
        let prefix = folder.path + "/"
        do throws(TSDBError) {
            try FileSystem.forEachEntry(folder.path) { name, entry in
                dayFile(name, entry, in: folder, prefix: prefix, rawReal: rawReal, base: base, into: &out)
            }
        } catch {
            out.skipped.append(unreadable(folder.path, error))
        }
    }

    /// The entry `name` of a month folder: a day file kept, or what is skipped or ignored.
    private static func dayFile(
        _ name: UnsafeBufferPointer<UInt8>, _ entry: FileSystem.EntryStatus, in folder: MonthFolder, prefix: String,
        rawReal: String, base: String, into out: inout RawListing
    ) {
        // The entry's path, made only for a message or a link.
        func path() -> String { prefix + String(decoding: name, as: UTF8.self) }
        func stem() -> String { String(decoding: name[..<stemLength], as: UTF8.self) }
        // YYYY-MM-DD.json
        let stemLength = 10
        let isJSON = name.count == stemLength + 5 && name[stemLength...].elementsEqual(".json".utf8)
        guard isJSON, let date = DayFileParser.calendarDate(bytes: UnsafeBufferPointer(rebasing: name[..<stemLength]))
        else {
            out.ignored.append(path())
            return
        }
        guard date.year == folder.year && date.month == folder.month else {
            out.skipped.append(
                TSDBError.invalidInput(
                    "day file is in the wrong folder: \(stem()) belongs in "
                        + "\(stem().prefix(4))/\(stem().dropFirst(5).prefix(2))/; not compacted",
                    path: path()))
            return
        }
        guard !entry.isDirectory else {
            out.skipped.append(
                TSDBError.invalidInput(
                    "is a folder named like a day file; expected a JSON file",
                    path: path()))
            return
        }
        // A link's size and mtime are its target's; a plain file's come from the listing.
        var status = (size: entry.size, mtimeNanoseconds: entry.mtimeNanoseconds)
        if entry.isSymlink {
            let link = path()
            guard let target = FileSystem.realPath(link), target.hasPrefix(rawReal + "/") else {
                out.skipped.append(
                    TSDBError.invalidInput("symbolic link pointing outside the raw folder; not followed", path: link))
                return
            }
            do { status = try FileSystem.status(link) } catch {
                out.skipped.append(error)
                return
            }
        }
        let day = ISO8601.days(year: date.year, month: date.month, day: date.day)
        out.files.append(
            RawFile(
                path: RawPath(day: day), base: base, day: day, size: status.size,
                mtimeNanoseconds: status.mtimeNanoseconds))
    }

    /// The newest export in `exports/` (names sort by export date), placed first: an export spans
    /// years, so it is merged before the day files stream past.
    private static func addNewestExport(in directory: String, to out: inout RawListing) throws(TSDBError) {
        let archives = try FileSystem.list(directory).filter {
            !$0.isDirectory && !$0.name.hasPrefix(".") && ($0.name.hasSuffix(".zip") || $0.name.hasSuffix(".xml"))
        }
        guard let newest = archives.max(by: { $0.name < $1.name }) else { return }
        let before = (out.files.first?.day ?? 1) - 1
        out.files.insert(
            RawFile(
                relativePath: RawPath.exportPrefix + newest.name, base: directory + "/",
                day: before, size: newest.size, mtimeNanoseconds: newest.mtimeNanoseconds), at: 0)
    }
}

/// Reads an Apple Health export into packed samples, handing them over in chunks of a bounded
/// size as it streams (a multi-gigabyte export never sits in memory whole): provided by the
/// import subsystem (the engine does not depend on it), given to ``CompactionOptions`` and the
/// verifier by their caller.
package typealias ExportSampleReader =
    @Sendable (String, _ chunk: (inout ParsedDayFile) throws(TSDBError) -> Void) throws(TSDBError) -> Void

extension RawFile {
    /// Parses the file: a day file with the engine's parser, an export whole with `exportReader`.
    func parse(_ bytes: UnsafeRawBufferPointer, exportReader: ExportSampleReader?) throws(TSDBError) -> ParsedDayFile {
        guard isExport else { return try DayFileParser.parse(bytes, path: absolutePath) }
        var whole = ParsedDayFile()
        try streamExport(exportReader) { (chunk) throws(TSDBError) in whole.append(contentsOf: chunk) }
        return whole
    }

    /// Streams an export's samples in chunks, each marked as the export's.
    func streamExport(_ exportReader: ExportSampleReader?, _ chunk: (inout ParsedDayFile) throws(TSDBError) -> Void)
        throws(TSDBError)
    {
        guard let exportReader else {
            throw TSDBError.invalidInput(
                "an Apple Health export, which this program cannot read (the tsdb command line can)", path: absolutePath
            )
        }
        try exportReader(absolutePath) { (parsed) throws(TSDBError) in
            for i in parsed.samples.indices { parsed.samples[i].fromExport = true }
            try chunk(&parsed)
        }
    }
}
