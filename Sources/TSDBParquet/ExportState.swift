import TSDB

/// The record of a Parquet export (Formats/parquet-v1.md §7): which partition file was written
/// from which segment and range. Its presence is also what makes a non-empty folder tsdb's to
/// write into: tsdb never writes into a folder that holds files it did not export.
struct ExportState {
    struct Entry: Equatable {
        var type: String
        /// `YYYY-MM`.
        var month: String
        var fingerprint: String
        var bytes: Int
    }

    let path: String
    var entries: [String: Entry] = [:] {
        didSet { changed = true }
    }
    /// Whether entries differ from the file (an unchanged export leaves the file untouched).
    private(set) var changed = false

    /// Reads the state of `folder`, which must be missing, empty, or an earlier export.
    init(ownedFolder folder: String, statePath: String) throws(TSDBError) {
        path = statePath
        guard FileSystem.exists(statePath) else {
            try FileSystem.requireEmptyOrMissing(
                folder, "tsdb writes Parquet only into an empty folder or one it exported to before")
            return
        }
        guard let bytes = FileSystem.contents(of: statePath) else {
            throw TSDBError.io("cannot read the export's state file", path: statePath)
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first.map(String.init) == ParquetExport.stateHeader else {
            throw TSDBError.invalidInput(
                "expected the first line \"\(ParquetExport.stateHeader)\", found \"\(lines.first ?? "")\"",
                path: statePath)
        }
        for (n, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 5, let bytes = Int(f[4]), !f[0].contains(".."), !f[0].hasPrefix("/") else {
                throw TSDBError.invalidInput(
                    "line \(n + 1): expected path, type, month, fingerprint and size separated by tabs",
                    path: statePath)
            }
            entries[f[0]] = Entry(type: f[1], month: f[2], fingerprint: f[3], bytes: bytes)
        }
        changed = false
    }

    /// Deletes partitions this export wrote before that are in the selection (`types`, months
    /// meeting `[from, to)`) but no longer expected: their month left the store. Returns how many.
    mutating func removeStale(
        keeping expected: Set<String>, in root: String, types: Set<String>, from: Int64, to: Int64
    )
        throws(TSDBError) -> Int
    {
        var removed = 0
        for (relative, entry) in entries.sorted(by: { $0.key < $1.key }) where !expected.contains(relative) {
            guard types.contains(entry.type), let month = Self.month(entry.month),
                month.start < to && month.next.start > from
            else { continue }
            let file = root + "/" + relative
            FileSystem.remove(file)
            // Empty month, year and table folders go with their last file.
            var folder = FileSystem.parentDirectory(file)
            while folder.count > root.count {
                FileSystem.removeDirectoryIfEmpty(folder)
                folder = FileSystem.parentDirectory(folder)
            }
            entries[relative] = nil
            removed += 1
        }
        return removed
    }

    static func month(_ key: String) -> MonthIndex? {
        let parts = key.split(separator: "-")
        guard parts.count == 2, let y = Int(parts[0]), let m = Int(parts[1]), (1...12).contains(m) else { return nil }
        return MonthIndex(year: y, month: m)
    }

    /// Written last, atomically: a crash before it leaves the previous state, whose stale
    /// fingerprints make the next run rewrite what this one wrote.
    func save() throws(TSDBError) {
        var text = ParquetExport.stateHeader + "\n"
        for (relative, e) in entries.sorted(by: { $0.key < $1.key }) {
            text += [relative, e.type, e.month, e.fingerprint, String(e.bytes)].joined(separator: "\t") + "\n"
        }
        try FileSystem.writeAtomically(Array(text.utf8), to: path)
    }
}
