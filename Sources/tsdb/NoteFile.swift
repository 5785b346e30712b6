import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files tsdb writes into a person's notes: never over a file it did not write (the file must
/// contain `owned`), only when the content changed, atomically (temporary file, fsync, rename).
enum NoteFile {
    enum Outcome: Equatable {
        case written, unchanged
        case notOurs(String)
    }

    static func write(_ text: String, to path: String, owned marker: String, force: Bool) throws -> Outcome {
        let bytes = Array(text.utf8)
        if let existing = read(path) {
            if existing == bytes { return .unchanged }
            if !force && !String(decoding: existing, as: UTF8.self).contains(marker) { return .notOurs(path) }
        }
        try makeDirectories(parent(path))
        let temporary = path + ".tsdb-tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("cannot create", temporary) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                unlink(temporary)
                throw failure("cannot write", temporary)
            }
            done += n
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            unlink(temporary)
            throw failure("cannot fsync", temporary)
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot rename into place", path)
        }
        return .written
    }

    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            out += chunk[0..<n]
        }
        return out
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func makeDirectories(_ path: String) throws {
        if path.isEmpty || path == "/" || path == "." { return }
        var st = stat()
        if stat(path, &st) == 0 { return }
        try makeDirectories(parent(path))
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw failure("cannot create folder", path) }
    }

    static func failure(_ what: String, _ path: String) -> TSDBError {
        TSDBError(.io, "\(what): \(String(cString: strerror(errno)))", path: path, errno: errno)
    }
}
