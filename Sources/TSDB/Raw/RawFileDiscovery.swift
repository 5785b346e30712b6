/// A day file found under `raw/`, or the newest Apple Health export under `exports/`.
struct RawFile {
    /// Relative to `raw/`: `YYYY/MM/YYYY-MM-DD.json`.
    var relativePath: String
    var absolutePath: String
    /// The date in the file name as days since 1970-01-01.
    var day: Int64
    var dateText: String
    var size: Int
    var mtimeNanoseconds: Int64

    /// Relative paths of exports start here (manifest entries are relative to `raw/`).
    static let exportPrefix = "../exports/"
    /// An Apple Health export rather than a day file.
    var isExport: Bool { relativePath.hasPrefix(Self.exportPrefix) }
}

/// What is under `raw/`: day files to read, entries that cannot be read (reported like bad
/// files), and names that are not day files (not read, listed on request).
struct RawListing {
    var files: [RawFile] = []
    var skipped: [TSDBError] = []
    var ignored: [String] = []
}

/// Finds the day files in `raw/YYYY/MM/YYYY-MM-DD.json`, in date order. Anything else is never
/// read: the layout is the contract (Formats/raw-json-v1.md §1).
enum RawFileDiscovery {
    static func find(rawDirectory: String) throws(TSDBError) -> RawListing {
        guard FileSystem.isDirectory(rawDirectory) else {
            throw TSDBError.notFound("raw folder not found", path: rawDirectory)
        }
        let rawReal = FileSystem.realPath(rawDirectory) ?? rawDirectory
        var out = RawListing()
        func digits(_ s: String) -> Bool { s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
        /// A folder's entries; an unreadable folder is reported and passed over.
        func list(_ path: String) -> [FileSystem.Entry] {
            do throws(TSDBError) {
                return try FileSystem.list(path, sorted: false)
            } catch {
                out.skipped.append(
                    TSDBError(
                        error.kind, "folder cannot be read (\(error.message)); its day files are not compacted",
                        path: path, errno: error.errno))
                return []
            }
        }

        // Listed in the file system's order; what is kept is sorted once at the end.
        for year in try FileSystem.list(rawDirectory, sorted: false) {
            let yearPath = rawDirectory + "/" + year.name
            guard year.isDirectory, year.name.count == 4, digits(year.name) else {
                out.ignored.append(yearPath)
                continue
            }
            for month in list(yearPath) {
                let monthPath = yearPath + "/" + month.name
                guard month.isDirectory, month.name.count == 2, digits(month.name) else {
                    out.ignored.append(monthPath)
                    continue
                }
                // What every file of the month shares, made once: a listing makes a year's paths.
                let folder = monthPath + "/"
                let relativeFolder = year.name + "/" + month.name + "/"
                // Four and two digits, checked above.
                let (folderYear, folderMonth) = (Int(year.name) ?? 0, Int(month.name) ?? 0)
                for file in list(monthPath) {
                    let path = folder + file.name
                    let stem = file.name.hasSuffix(".json") ? file.name.dropLast(5) : ""
                    guard let date = DayFileParser.calendarDate(stem) else {
                        out.ignored.append(path)
                        continue
                    }
                    guard date.year == folderYear && date.month == folderMonth else {
                        out.skipped.append(
                            TSDBError.invalidInput(
                                "day file is in the wrong folder: \(stem) belongs in "
                                    + "\(stem.prefix(4))/\(stem.dropFirst(5).prefix(2))/; not compacted", path: path))
                        continue
                    }
                    guard !file.isDirectory else {
                        out.skipped.append(
                            TSDBError.invalidInput(
                                "is a folder named like a day file; expected a JSON file", path: path))
                        continue
                    }
                    if file.isSymlink {
                        guard let target = FileSystem.realPath(path), target.hasPrefix(rawReal + "/") else {
                            out.skipped.append(
                                TSDBError.invalidInput(
                                    "symbolic link pointing outside the raw folder; not followed", path: path))
                            continue
                        }
                    }
                    let day = ISO8601.days(year: date.year, month: date.month, day: date.day)
                    // A link's size and mtime are its target's; a plain file's come from the listing.
                    var status = (size: file.size, mtimeNanoseconds: file.mtimeNanoseconds)
                    if file.isSymlink {
                        do { status = try FileSystem.status(path) } catch {
                            out.skipped.append(error)
                            continue
                        }
                    }
                    out.files.append(
                        RawFile(
                            relativePath: relativeFolder + file.name, absolutePath: path, day: day,
                            dateText: String(stem), size: status.size, mtimeNanoseconds: status.mtimeNanoseconds))
                }
            }
        }
        out.files.sort { $0.day < $1.day }
        out.skipped.sort { ($0.path ?? "") < ($1.path ?? "") }
        out.ignored.sort()
        return out
    }

    /// Day files plus the newest export in `exports/` (named so that names sort by export date),
    /// placed first: an export spans years, so it is merged before the day files stream past.
    static func find(_ layout: StoreLayout) throws(TSDBError) -> RawListing {
        var out = try find(rawDirectory: layout.rawDirectory)
        guard FileSystem.isDirectory(layout.exportsDirectory) else { return out }
        let archives = try FileSystem.list(layout.exportsDirectory).filter {
            !$0.isDirectory && !$0.name.hasPrefix(".") && ($0.name.hasSuffix(".zip") || $0.name.hasSuffix(".xml"))
        }
        guard let newest = archives.max(by: { $0.name < $1.name }) else { return out }
        let before = (out.files.first?.day ?? 1) - 1
        out.files.insert(
            RawFile(
                relativePath: RawFile.exportPrefix + newest.name,
                absolutePath: layout.exportsDirectory + "/" + newest.name, day: before, dateText: "",
                size: newest.size, mtimeNanoseconds: newest.mtimeNanoseconds), at: 0)
        return out
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
