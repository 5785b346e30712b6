/// The one error type of the engine.
///
/// Every error has a ``Kind`` callers can switch on, a message that says what was expected and
/// what was found, and where known the file and byte offset (plus line for text input).
public struct TSDBError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// Stored bytes fail validation: bad checksum, out-of-bounds offset, impossible field.
        case corruption
        /// Input the engine does not accept (malformed raw JSON, bad arguments).
        case invalidInput
        /// A file, type or store that does not exist.
        case notFound
        /// A format version this build does not read.
        case unsupportedVersion
        /// The operating system refused an operation (open, read, write, fsync, rename, mmap).
        case io
    }

    public var kind: Kind
    public var message: String
    public var path: String?
    public var offset: Int?
    public var line: Int?
    /// `errno` for ``Kind/io`` errors.
    public var errno: Int32?

    public init(
        _ kind: Kind, _ message: String, path: String? = nil, offset: Int? = nil, line: Int? = nil, errno: Int32? = nil
    ) {
        self.kind = kind
        self.message = message
        self.path = path
        self.offset = offset
        self.line = line
        self.errno = errno
    }

    public var description: String {
        var place = ""
        if let path { place = path }
        if let line { place += place.isEmpty ? "line \(line)" : ":\(line)" }
        if let offset { place += place.isEmpty ? "offset \(offset)" : " (offset \(offset))" }
        return place.isEmpty ? "\(kind.rawValue): \(message)" : "\(place): \(kind.rawValue): \(message)"
    }

    /// The same error attributed to `path` (used when a lower layer did not know the file).
    public func at(path: String) -> TSDBError {
        var copy = self
        if copy.path == nil { copy.path = path }
        return copy
    }

    /// The same error attributed to `path`, its offset (if any) moved by `base`: a lower layer
    /// counted from the start of a part of the file (a segment in a compaction's file).
    func at(path: String, offsetBy base: Int) -> TSDBError {
        guard self.path == nil else { return self }
        var copy = self
        copy.path = path
        copy.offset = offset.map { $0 + base }
        return copy
    }

    // Factories, one per kind: `throw .invalidInput("…", path: p)`.

    static func corrupt(_ message: String, path: String? = nil, offset: Int? = nil) -> TSDBError {
        TSDBError(Kind.corruption, message, path: path, offset: offset)
    }

    package static func invalidInput(_ message: String, path: String? = nil, offset: Int? = nil, line: Int? = nil)
        -> TSDBError
    {
        TSDBError(Kind.invalidInput, message, path: path, offset: offset, line: line)
    }

    package static func notFound(_ message: String, path: String? = nil) -> TSDBError {
        TSDBError(Kind.notFound, message, path: path)
    }

    static func unsupportedVersion(_ message: String, path: String? = nil, offset: Int? = nil) -> TSDBError {
        TSDBError(Kind.unsupportedVersion, message, path: path, offset: offset)
    }

    package static func io(_ message: String, path: String? = nil, errno: Int32? = nil) -> TSDBError {
        TSDBError(Kind.io, message, path: path, errno: errno)
    }
}
