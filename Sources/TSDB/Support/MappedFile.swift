#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read-only memory mapping of a whole file.
///
/// The mapping lives exactly as long as this object; ``withBytes(_:)`` is the only way to reach
/// the bytes, so nothing can hold a pointer past `munmap`. Pages are mapped `PROT_READ`, so
/// mapped bytes can never be written.
package final class MappedFile: @unchecked Sendable {
    package let path: String
    package let count: Int
    private let base: UnsafeRawPointer?
    /// True when `base` is an owned heap copy (``init(copying:path:)``) rather than a mapping.
    private let owned: Bool

    package init(path: String) throws(TSDBError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.ioError("cannot open", path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.ioError("cannot stat", path) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw TSDBError.invalidInput("not a regular file", path: path)
        }
        count = Int(st.st_size)
        owned = false
        if count == 0 {
            base = nil
            return
        }
        let p = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else { throw Self.ioError("cannot mmap \(count) bytes of", path) }
        base = UnsafeRawPointer(p)
    }

    /// The same interface over a private copy of `bytes` (for fuzzing and tests, no file needed).
    init(copying bytes: UnsafeRawBufferPointer, path: String) {
        self.path = path
        count = bytes.count
        owned = true
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let source = bytes.baseAddress { copy.copyMemory(from: source, byteCount: bytes.count) }
        base = UnsafeRawPointer(copy)
    }

    deinit {
        guard let base else { return }
        if owned {
            UnsafeMutableRawPointer(mutating: base).deallocate()
        } else {
            munmap(UnsafeMutableRawPointer(mutating: base), count)
        }
    }

    /// Asks the kernel to read ahead: the caller is about to scan the whole file.
    package func adviseSequential() {
        if let base { madvise(UnsafeMutableRawPointer(mutating: base), count, Int32(MADV_SEQUENTIAL)) }
    }

    /// Lets the kernel drop the mapped pages before `position` (a pointer into this file's bytes)
    /// from memory, once a scan has read them: they are read from the file again if touched. Does
    /// nothing for a file read into memory rather than mapped.
    package func releasePages(before position: UnsafeRawPointer) {
        guard let base, !owned else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let offset = min(max(0, position - base), count) / page * page
        if offset > 0 { madvise(UnsafeMutableRawPointer(mutating: base), offset, Int32(MADV_DONTNEED)) }
    }

    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    static func ioError(_ what: String, _ path: String) -> TSDBError {
        let code = errno
        return TSDBError.io("\(what) file: \(String(cString: strerror(code)))", path: path, errno: code)
    }
}
