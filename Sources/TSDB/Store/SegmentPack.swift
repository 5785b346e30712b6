#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one file that holds every segment a compaction writes (manifest-v4.md §1): created when
/// the first segment arrives, each segment placed at the next multiple of eight and written there
/// by whichever thread encoded it, fsynced once when the run ends, before the manifest naming it.
///
/// One file rather than one per (type, month): a new day into a year wrote 18 files (creating,
/// fsyncing and later deleting each), the year 220. The same bytes as 18 files took 3.6–4.8 ms
/// of file-system work here against 1.7–1.9 ms as 2, and 220 files 43–57 ms against 5.9–7.3 ms as 25
/// (`Benchmarks/compare/pack_files.c`, three runs).
final class SegmentPack: Sendable {
    /// Relative to the store directory: `segments/pack.g<generation>.seg`.
    let relativePath: String
    let path: String
    /// Segment starts are multiples of this (manifest-v4.md §1).
    static let alignment = 8

    private struct State {
        var fd: Int32 = -1
        /// Where the next segment may start: the end of the last one placed.
        var end = 0
        var failed: TSDBError?
    }
    private let state = Locked(State())

    init(storeDirectory: String, generation: UInt64) {
        relativePath = "segments/pack.g\(generation).\(SegmentFormat.fileExtension)"
        path = storeDirectory + "/" + relativePath
    }

    /// Writes `bytes` at the next aligned offset, and returns that offset.
    func append(_ bytes: [UInt8]) throws(TSDBError) -> Int {
        try bytes.withUnsafeBytes { b in Result { () throws(TSDBError) in try append(b) } }.get()
    }

    /// Writes `bytes` at the next aligned offset, and returns that offset.
    func append(_ bytes: UnsafeRawBufferPointer) throws(TSDBError) -> Int {
        let placed = try state.withLock { (s) throws(TSDBError) -> (fd: Int32, offset: Int) in
            if let failed = s.failed { throw failed }
            if s.fd < 0 {
                try FaultInjection.fail(.create, path)
                s.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard s.fd >= 0 else { throw MappedFile.ioError("cannot create", path) }
            }
            let offset = (s.end + Self.alignment - 1) / Self.alignment * Self.alignment
            s.end = offset + bytes.count
            return (s.fd, offset)
        }
        do throws(TSDBError) {
            try FileSystem.writeAll(placed.fd, bytes, at: placed.offset, path: path)
        } catch {
            // Nothing may name a pack with a hole where a segment should be: the run fails.
            state.withLock { $0.failed = $0.failed ?? error }
            throw error
        }
        return placed.offset
    }

    /// The pack's size once every segment is written, nil if none was; closes the file.
    func close() throws(TSDBError) -> Int? {
        try state.withLock { (s) throws(TSDBError) -> Int? in
            guard s.fd >= 0 else { return nil }
            let fd = s.fd
            s.fd = -1
            guard closeDescriptor(fd) == 0 else { throw MappedFile.ioError("cannot close", path) }
            if let failed = s.failed { throw failed }
            return s.end
        }
    }

    /// Deletes what was written (the run failed before publishing it).
    func discard() {
        _ = try? close()
        FileSystem.remove(path)
    }
}

/// `close(2)`, out of reach by that name inside a type with a `close()` method.
private func closeDescriptor(_ fd: Int32) -> Int32 { close(fd) }
