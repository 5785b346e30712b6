/// Where things live for one Apple Health folder:
///
///     <apple-health>/raw/YYYY/MM/YYYY-MM-DD.json   the day files (source of truth, never written)
///     <apple-health>/exports/<date>.zip            Apple Health exports `tsdb import` kept (source of truth)
///     <apple-health>/tsdb/MANIFEST                 the store's current state (Formats/manifest-v4.md)
///     <apple-health>/tsdb/MANIFEST.old             the one it replaced, until the next compaction starts
///     <apple-health>/tsdb/segments/<type>.<YYYY-MM>.g<generation>.seg
public struct StoreLayout: Sendable, Equatable {
    /// The folder that holds `raw/`.
    public let appleHealthDirectory: String

    public var rawDirectory: String { appleHealthDirectory + "/raw" }
    /// Apple Health's own exports (`export.zip`), kept byte for byte by `tsdb import`; the newest
    /// one is read by compaction with the day files.
    public var exportsDirectory: String { appleHealthDirectory + "/exports" }
    public var storeDirectory: String { appleHealthDirectory + "/tsdb" }
    public var segmentsDirectory: String { storeDirectory + "/segments" }
    public var manifestPath: String { storeDirectory + "/MANIFEST" }
    /// The manifest a compaction replaced, under a second name until the next one starts
    /// (manifest-v4.md §1, "Publishing").
    public var replacedManifestPath: String { storeDirectory + "/MANIFEST.old" }
    public var typesFilePath: String { appleHealthDirectory + "/types.json" }
    /// Whether a compacted store (a manifest) exists here.
    public var hasStore: Bool { FileSystem.exists(manifestPath) }

    public init(appleHealthDirectory: String) {
        var dir = appleHealthDirectory
        while dir.count > 1 && dir.hasSuffix("/") { dir.removeLast() }
        self.appleHealthDirectory = dir
    }

    /// Resolves a user-given folder: the store itself (`…/tsdb`), the folder holding `raw/`, a
    /// `raw/` folder, or a life-db `imports/` root holding `fitness/apple-health/`.
    public static func locate(_ path: String) throws(TSDBError) -> StoreLayout {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        guard FileSystem.isDirectory(p) else {
            guard FileSystem.exists(p) else { throw TSDBError.notFound("no such folder", path: path) }
            throw TSDBError.invalidInput(notAFolder(p), path: path)
        }
        let candidates = [p, p + "/fitness/apple-health"]
        for c in candidates where FileSystem.isDirectory(c + "/raw") || FileSystem.exists(c + "/tsdb/MANIFEST") {
            return StoreLayout(appleHealthDirectory: c)
        }
        if p.hasSuffix("/raw") || p == "raw" { return StoreLayout(appleHealthDirectory: FileSystem.parentDirectory(p)) }
        if FileSystem.exists(p + "/MANIFEST") {
            return StoreLayout(appleHealthDirectory: FileSystem.parentDirectory(p))
        }
        throw TSDBError.notFound(
            "found neither raw/ nor fitness/apple-health/raw/ nor a tsdb store (MANIFEST) here", path: path)
    }

    /// What a file given where a store folder was expected is, and what to give instead.
    static func notAFolder(_ path: String) -> String {
        let lower = path.lowercased()
        let expected = "give the folder that holds raw/YYYY/MM/YYYY-MM-DD.json day files (or its tsdb/ store)"
        if lower.hasSuffix(".zip") {
            return "is a file, not a folder: Apple Health's export.zip is read by `tsdb import FILE`; " + expected
        }
        if lower.hasSuffix(".xml") {
            return "is a file, not a folder: Apple Health's export.xml is read by `tsdb import FILE`; " + expected
        }
        if lower.hasSuffix(".json") { return "is a file, not a folder (a day file?); " + expected }
        return "is a file, not a folder; " + expected
    }
}

package func monthKey(year: Int, month: Int) -> String {
    let y = String(year)
    let m = String(month)
    return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-" + (m.count == 1 ? "0" : "") + m
}
