#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read-only memory mapping of a whole file, or of a range of one (a segment in the file a
/// compaction wrote, manifest-v4.md §1).
///
/// The mapping lives exactly as long as this object; ``withBytes(_:)`` is the only way to reach
/// the bytes, so nothing can hold a pointer past `munmap`. Pages are mapped `PROT_READ`, so
/// mapped bytes can never be written.
package final class MappedFile: @unchecked Sendable {
    package let path: String
    /// Where the bytes start in the file (0 for a whole file), and how many there are.
    package let offset: Int
    package let count: Int
    private let base: UnsafeRawPointer?
    /// The mapping itself: from the page holding `offset`, so `base` may lie past its start. Nil
    /// for a copy, and for a slice, whose bytes lie in `whole`'s mapping.
    private let mapping: (start: UnsafeMutableRawPointer, length: Int)?
    /// The mapped file a slice is part of, kept mapped while the slice lives.
    private let whole: MappedFile?

    package convenience init(path: String) throws(TSDBError) {
        try self.init(path: path, range: nil)
    }

    /// The `count` bytes at `offset` of the file at `path`; a file too short for them is damage.
    package convenience init(path: String, offset: Int, count: Int) throws(TSDBError) {
        try self.init(path: path, range: (offset, count))
    }

    private convenience init(path: String, range: (offset: Int, count: Int)?) throws(TSDBError) {
        let (fd, size) = try Self.openRegularFile(path)
        defer { close(fd) }
        try self.init(mapping: fd, size: size, path: path, range: range)
    }

    /// Maps `range` (all when nil) of the open regular file `fd` of `size` bytes; `fd` stays open.
    package init(mapping fd: Int32, size: Int, path: String, range: (offset: Int, count: Int)? = nil)
        throws(TSDBError)
    {
        self.path = path
        let (offset, count) = range ?? (0, size)
        guard Self.holds(size, offset: offset, count: count) else {
            throw Self.tooShort(size, offset: offset, count: count, path: path)
        }
        (self.offset, self.count) = (offset, count)
        whole = nil
        if count == 0 {
            (base, mapping) = (nil, nil)
            return
        }
        let pageStart = offset / Self.pageSize * Self.pageSize
        let length = count + (offset - pageStart)
        let p = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, off_t(pageStart))
        guard let p, p != MAP_FAILED else { throw Self.ioError("cannot mmap \(count) bytes of", path) }
        mapping = (p, length)
        base = UnsafeRawPointer(p + (offset - pageStart))
    }

    /// The same interface over a private copy of `bytes` (for fuzzing and tests, no file needed).
    init(copying bytes: UnsafeRawBufferPointer, path: String) {
        self.path = path
        offset = 0
        count = bytes.count
        (mapping, whole) = (nil, nil)
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let source = bytes.baseAddress { copy.copyMemory(from: source, byteCount: bytes.count) }
        base = UnsafeRawPointer(copy)
    }

    /// The `count` bytes at `offset` of `whole`, a mapping of a whole file, sharing its mapping: a
    /// compaction or a query that reads several segments of one file maps the file once (one new
    /// day into a year opened 18 of them, each an open, a mapping and its page faults; the year's
    /// daily heart rate 13 in 3 files).
    private init(slicing whole: MappedFile, offset: Int, count: Int) {
        (path, self.offset, self.count) = (whole.path, offset, count)
        (mapping, self.whole) = (nil, whole)
        base = count == 0 ? nil : whole.base.map { $0 + offset }
    }

    /// The `count` bytes at `offset` of this whole file (as ``init(path:offset:count:)`` would map
    /// them), sharing this mapping; a file too short for them is damage.
    package func slice(offset: Int, count: Int) throws(TSDBError) -> MappedFile {
        precondition(self.offset == 0 && whole == nil, "a slice is taken of a whole file's mapping")
        guard Self.holds(self.count, offset: offset, count: count) else {
            throw Self.tooShort(self.count, offset: offset, count: count, path: path)
        }
        return MappedFile(slicing: self, offset: offset, count: count)
    }

    /// Whether a file of `size` bytes has `count` bytes at `offset`.
    static func holds(_ size: Int, offset: Int, count: Int) -> Bool {
        offset >= 0 && count >= 0 && offset <= size && count <= size - offset
    }

    /// A file too short for the range a manifest or an index gives: damage.
    static func tooShort(_ size: Int, offset: Int, count: Int, path: String) -> TSDBError {
        TSDBError.corrupt("file is \(size) bytes, too short for \(count) bytes at offset \(offset)", path: path)
    }

    deinit {
        if let mapping {
            munmap(mapping.start, mapping.length)
        } else if whole == nil, let base {
            UnsafeMutableRawPointer(mutating: base).deallocate()
        }
    }

    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Asks the kernel to read ahead: the caller is about to scan the whole file.
    package func adviseSequential() {
        if let mapping { madvise(mapping.start, mapping.length, Int32(MADV_SEQUENTIAL)) }
    }

    /// Lets the kernel drop the mapped pages before `position` (a pointer into this file's bytes)
    /// from memory, once a scan has read them: they are read from the file again if touched. Does
    /// nothing for a file read into memory rather than mapped, or for a slice.
    package func releasePages(before position: UnsafeRawPointer) {
        guard let mapping else { return }
        let start = UnsafeRawPointer(mapping.start)
        let done = min(max(0, position - start), mapping.length) / Self.pageSize * Self.pageSize
        if done > 0 { madvise(mapping.start, done, Int32(MADV_DONTNEED)) }
    }

    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// `path` opened for reading, and its size; anything but a regular file is refused. Opened
    /// non-blocking, so that a FIFO named like a file is refused instead of waited on for a writer
    /// (it changes nothing for reading a regular file). The caller closes the descriptor.
    package static func openRegularFile(_ path: String) throws(TSDBError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw ioError("cannot open", path) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = ioError("cannot stat", path)
            close(fd)
            throw error
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw TSDBError.invalidInput("not a regular file", path: path)
        }
        return (fd, Int(st.st_size))
    }

    static func ioError(_ what: String, _ path: String) -> TSDBError {
        let code = errno
        return TSDBError.io("\(what) file: \(String(cString: strerror(code)))", path: path, errno: code)
    }
}

/// Whole files mapped once each for the slices taken of them (the segments of a pack file,
/// manifest-v4.md §1). A list searched in order rather than a dictionary: a store has a few
/// files, and a dictionary keyed by `String` has its storage made at run time, by a search
/// through the program's conformances, on a query's start-up path.
package struct MappedFiles {
    private var files: [MappedFile] = []

    package init() {}

    /// The `count` bytes at `offset` of the file at `path`, mapping the file the first time, and
    /// again if the range lies past the end of its mapping: a file may have grown since (a
    /// compaction's own pack, whose segments an export streaming in reads back as it writes more).
    /// Slices already taken keep the mapping they were taken from.
    package mutating func slice(of path: String, offset: Int, count: Int) throws(TSDBError) -> MappedFile {
        let length = path.utf8.count
        if let i = files.firstIndex(where: { $0.path.utf8.count == length && $0.path == path }) {
            if MappedFile.holds(files[i].count, offset: offset, count: count) {
                return try files[i].slice(offset: offset, count: count)
            }
            files[i] = try MappedFile(path: path)
            return try files[i].slice(offset: offset, count: count)
        }
        let file = try MappedFile(path: path)
        files.append(file)
        return try file.slice(offset: offset, count: count)
    }
}
