import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tsdb import`: keeps the user's export in the store's `exports/` folder, byte for byte (the
/// file they pointed at is only read), named by its export date. Compaction then reads the newest
/// kept export with the day files (``exportReader``).
public enum ExportImport {
    /// What ``keep(_:in:)`` did.
    public struct Kept: Sendable {
        public var inventory: ExportInventory
        /// The kept copy, relative to the Apple Health folder (`exports/2025-03-02_100000.zip`).
        public var relativePath: String
        /// The same archive was imported before: nothing was copied.
        public var alreadyImported: Bool
    }

    /// The reader compaction and verification use for kept exports.
    package static var exportReader: ExportSampleReader { exportReader(chunkSamples: ExportSamples.chunkSamples) }

    /// A reader handing samples over in chunks of about `chunkSamples` (tests use small ones).
    package static func exportReader(chunkSamples: Int) -> ExportSampleReader {
        { (path, chunk) throws(TSDBError) in try ExportSamples.read(path, chunkSamples: chunkSamples, chunk: chunk) }
    }

    /// Copies the export into `exports/` unless an identical copy is there, after checking its
    /// directory and head (``ExportReader/outline(of:)``). The samples are read once, by the
    /// compaction that follows; if it finds the archive damaged, ``discard(_:in:)`` removes the
    /// copy again, so the store is left as it was.
    public static func keep(_ source: String, in layout: StoreLayout, progress: (Int, Int) -> Void = { _, _ in })
        throws(TSDBError) -> Kept
    {
        let inventory = try ExportReader.outline(of: source)
        let file = FileSystem.isDirectory(source) ? try ExportReader.xmlInFolder(source) : source
        let isXML = !(file.hasSuffix(".zip") || ExportReader.isZip(file))
        let stamp = name(forExportDate: inventory.exportDate)
        let relative = "exports/" + stamp + (isXML ? ".xml" : ".zip")
        let target = layout.appleHealthDirectory + "/" + relative
        try FileSystem.makeDirectories(layout.exportsDirectory)
        if FileSystem.exists(target) {
            guard try sameBytes(file, target) else {
                throw TSDBError.invalidInput(
                    "a different export with the same export date is already kept as \(relative); remove it first",
                    path: source)
            }
            return Kept(inventory: inventory, relativePath: relative, alreadyImported: true)
        }
        try copy(file, to: target, progress: progress)
        try FileSystem.syncDirectory(layout.exportsDirectory)
        return Kept(inventory: inventory, relativePath: relative, alreadyImported: false)
    }

    /// Removes a copy `keep` just made (its compaction found the archive damaged).
    public static func discard(_ kept: Kept, in layout: StoreLayout) {
        guard !kept.alreadyImported else { return }
        FileSystem.remove(layout.appleHealthDirectory + "/" + kept.relativePath)
        try? FileSystem.syncDirectory(layout.exportsDirectory)
        FileSystem.removeDirectoryIfEmpty(layout.exportsDirectory)
    }

    /// `2025-03-02 10:00:00 +0100` → `2025-03-02_100000+0100` (sorts by date for one offset).
    static func name(forExportDate date: String?) -> String {
        guard let date, date.count == 25 else { return "export-undated" }
        let u = Array(date.utf8)
        let time = u[11..<13] + u[14..<16] + u[17..<19]
        return String(decoding: u[0..<10], as: UTF8.self) + "_" + String(decoding: time, as: UTF8.self)
            + String(decoding: u[20..<25], as: UTF8.self)
    }

    static func sameBytes(_ a: String, _ b: String) throws(TSDBError) -> Bool {
        let x = try MappedFile(path: a)
        let y = try MappedFile(path: b)
        guard x.count == y.count else { return false }
        return x.withBytes { p in
            y.withBytes { q in p.count == 0 || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0 }
        }
    }

    /// Copies in 1 MB pieces into a staged file published atomically (no partial copy survives).
    static func copy(_ source: String, to target: String, progress: (Int, Int) -> Void) throws(TSDBError) {
        let staged = try StagedFile(path: target)
        let input = try MappedFile(path: source)
        input.adviseSequential()
        try input.withBytes { (b) throws(TSDBError) in
            var o = 0
            while o < b.count {
                let n = min(1 << 20, b.count - o)
                try staged.append(Array(UnsafeRawBufferPointer(rebasing: b[o..<o + n])))
                o += n
                progress(o, b.count)
            }
        }
        try staged.publish()
    }
}
