#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Segments found damaged by a read, remembered in `tsdb/DAMAGED` (one store-relative segment
/// path per line) so that the next compaction rebuilds their months from the raw files.
///
/// Readers append best-effort (a read-only store just does not remember); the compactor reads
/// the file, and removes it once a generation without those segments is published.
enum DamageLog {
    static func path(_ layout: StoreLayout) -> String { layout.storeDirectory + "/DAMAGED" }

    static func record(_ layout: StoreLayout, segment relativePath: String) {
        let fd = open(path(layout), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // One write(2) of a short line to an O_APPEND file: lines from concurrent readers do not interleave.
        _ = try? FileSystem.writeAll(fd, Array((relativePath + "\n").utf8), path: path(layout))
    }

    /// The segment paths recorded as damaged.
    static func read(_ layout: StoreLayout) -> Set<String> {
        guard let file = try? MappedFile(path: path(layout)) else { return [] }
        let text = (try? file.withBytes { (b) throws(TSDBError) in String(decoding: b, as: UTF8.self) }) ?? ""
        return Set(text.split(separator: "\n").map(String.init))
    }

    static func clear(_ layout: StoreLayout) { FileSystem.remove(path(layout)) }
}
