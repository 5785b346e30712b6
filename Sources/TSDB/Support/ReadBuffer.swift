#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory a whole file is read into, kept for the next file: a compaction reads hundreds of day
/// files of a few hundred KB each, and mapping each one cost more than copying it (page faults on
/// every mapping, and unmapping while the other parser thread runs interrupts its core to flush
/// its TLB: ~12% of a year's compaction in `perf record`, against ~11% for `read`'s copy; fresh
/// rebuilds of the year took 236 -> 218 ms of CPU, with 8,100 -> 6,000 page faults).
///
/// One thread uses a buffer at a time (taken from a ``Pool``, then given back), hence
/// `@unchecked Sendable`; the bytes are reachable only inside ``withContents(of:_:)``.
package final class ReadBuffer: @unchecked Sendable {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0

    /// Files larger than this are mapped instead (``MappedFile``), so that memory stays bounded
    /// by what the caller keeps, not by the largest file read.
    package let largestRead: Int

    package init(largestRead: Int = 64 << 20) { self.largestRead = largestRead }

    deinit { storage?.deallocate() }

    /// Calls `body` with the bytes of the file at `path`: read into this buffer when the file is
    /// at most ``largestRead`` bytes, else mapped. A file that shrinks while being read gives the
    /// bytes it still had; one that grows, the bytes it had when it was opened.
    package func withContents<R>(
        of path: String, _ body: (UnsafeRawBufferPointer) throws(TSDBError) -> R
    ) throws(TSDBError) -> R {
        let (fd, size) = try MappedFile.openRegularFile(path)
        defer { close(fd) }
        guard size <= largestRead else {
            let mapped = try MappedFile(mapping: fd, size: size, path: path)
            mapped.adviseSequential()
            return try mapped.withBytes(body)
        }
        let buffer = room(for: size)
        var done = 0
        while done < size {
            let n = read(fd, buffer + done, size - done)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw MappedFile.ioError("cannot read", path) }
            if n == 0 { break }
            done += n
        }
        return try body(UnsafeRawBufferPointer(start: buffer, count: done))
    }

    /// At least `size` bytes (and never a null pointer, so an empty file has a base address too).
    private func room(for size: Int) -> UnsafeMutableRawPointer {
        if let storage, size <= capacity { return storage }
        storage?.deallocate()
        // Rounded up to 256 KB so that slightly larger files reuse it.
        let step = 256 << 10
        capacity = (size / step + 1) * step
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
        storage = fresh
        return fresh
    }
}
