/// A day file found under `raw/`.
struct RawFile {
    /// Relative to `raw/`: `YYYY/MM/YYYY-MM-DD.json`.
    var relativePath: String
    var absolutePath: String
    /// The date in the file name as days since 1970-01-01.
    var day: Int64
    var dateText: String
    var size: Int
    var mtimeNanoseconds: Int64
}

/// Finds the day files in `raw/YYYY/MM/YYYY-MM-DD.json`, in date order. Anything else is reported,
/// never read: the layout is the contract (Formats/raw-json-v1.md §1).
enum RawFileDiscovery {
    static func find(rawDirectory: String) throws(TSDBError) -> (files: [RawFile], skipped: [TSDBError]) {
        guard FileSystem.isDirectory(rawDirectory) else { throw TSDBError(.notFound, "raw folder not found", path: rawDirectory) }
        let rawReal = FileSystem.realPath(rawDirectory) ?? rawDirectory
        var files: [RawFile] = []
        var skipped: [TSDBError] = []
        func skip(_ path: String, _ why: String) { skipped.append(TSDBError(.invalidInput, why, path: path)) }
        func digits(_ s: Substring) -> Bool { s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }

        for year in try FileSystem.list(rawDirectory) where !year.name.hasPrefix(".") {
            let yearPath = rawDirectory + "/" + year.name
            guard year.isDirectory, year.name.count == 4, digits(Substring(year.name)) else {
                skip(yearPath, "not part of the raw layout YYYY/MM/YYYY-MM-DD.json; ignored"); continue
            }
            for month in try FileSystem.list(yearPath) where !month.name.hasPrefix(".") {
                let monthPath = yearPath + "/" + month.name
                guard month.isDirectory, month.name.count == 2, digits(Substring(month.name)) else {
                    skip(monthPath, "not part of the raw layout YYYY/MM/YYYY-MM-DD.json; ignored"); continue
                }
                for file in try FileSystem.list(monthPath) where !file.name.hasPrefix(".") {
                    let path = monthPath + "/" + file.name
                    let stem = file.name.hasSuffix(".json") ? String(file.name.dropLast(5)) : ""
                    guard !file.isDirectory, DayFileParser.isCalendarDate(stem),
                          stem.hasPrefix(year.name + "-" + month.name + "-") else {
                        skip(path, "file name is not YYYY-MM-DD.json matching its YYYY/MM folder; ignored"); continue
                    }
                    if file.isSymlink {
                        guard let target = FileSystem.realPath(path), target.hasPrefix(rawReal + "/") else {
                            skip(path, "symbolic link pointing outside the raw folder; not followed"); continue
                        }
                    }
                    let u = Array(stem.utf8)
                    func num(_ r: Range<Int>) -> Int { r.reduce(0) { $0 * 10 + Int(u[$1] - 48) } }
                    let day = ISO8601.days(year: num(0..<4), month: num(5..<7), day: num(8..<10))
                    // A link's size and mtime are its target's; a plain file's come from the listing.
                    var status = (size: file.size, mtimeNanoseconds: file.mtimeNanoseconds)
                    if file.isSymlink {
                        do { status = try FileSystem.status(path) } catch { skipped.append(error); continue }
                    }
                    files.append(RawFile(relativePath: "\(year.name)/\(month.name)/\(file.name)", absolutePath: path, day: day, dateText: stem,
                                         size: status.size, mtimeNanoseconds: status.mtimeNanoseconds))
                }
            }
        }
        return (files.sorted { $0.day < $1.day }, skipped)
    }
}
