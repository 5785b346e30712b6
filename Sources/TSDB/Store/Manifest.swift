/// The store's current state: which segments make it up, in which files, and which raw files they
/// came from.
///
/// Binary, little-endian, CRC-32C protected (Formats/manifest-v4.md). It is replaced atomically
/// (temporary file, fsync, rename, directory fsync), so a reader sees one whole generation.
public struct Manifest: Sendable, Equatable {
    static let magic: [UInt8] = Array("TSDBMAN".utf8) + [0]
    /// manifest-v4.md §1.
    static let version: UInt16 = 4

    public struct SegmentEntry: Sendable, Equatable {
        public var type: String
        public var year: Int
        public var month: Int
        /// The file holding the segment, relative to the store directory (a file may hold several
        /// segments: manifest-v4.md §1).
        public var path: String
        /// The size of that whole file (the manifest's file table).
        public var fileSize: Int
        /// Where the segment's bytes start in the file, and how many there are.
        public var offset: Int
        public var size: Int
        /// CRC-32C of the segment's bytes.
        public var crc: UInt32
        public var sampleCount: Int
        public var firstStart: Int64
        public var lastStart: Int64
        public var maxEnd: Int64
    }

    /// The day files among the raw entries (the others are the Apple Health export kept in
    /// `exports/`, recorded as `../exports/<name>`).
    public var dayFiles: [RawFileEntry] { rawFiles.filter { !$0.isExport } }

    public struct RawFileEntry: Sendable, Equatable {
        /// An Apple Health export kept by `tsdb import` rather than a day file.
        public var isExport: Bool { place.isExport }

        /// Relative to `raw/`, e.g. `2025/03/2025-03-01.json`.
        public var place: RawPath
        public var size: Int
        public var mtimeNanoseconds: Int64
        /// 64-bit hash of the file's bytes (``ContentHash``), to tell a rewrite with the same
        /// content from a real change.
        public var contentHash: UInt64
        public var sampleCount: Int
        /// UTC months its samples start in: the months to rebuild when it changes.
        public var months: MonthList

        /// ``place`` as text.
        public var path: String { place.description }

        public init(
            place: RawPath, size: Int, mtimeNanoseconds: Int64, contentHash: UInt64, sampleCount: Int,
            months: MonthList
        ) {
            (self.place, self.size, self.mtimeNanoseconds) = (place, size, mtimeNanoseconds)
            (self.contentHash, self.sampleCount, self.months) = (contentHash, sampleCount, months)
        }

        public init(
            path: String, size: Int, mtimeNanoseconds: Int64, contentHash: UInt64, sampleCount: Int,
            months: [MonthIndex]
        ) {
            self.init(
                place: RawPath(path), size: size, mtimeNanoseconds: mtimeNanoseconds, contentHash: contentHash,
                sampleCount: sampleCount, months: MonthList(months))
        }
    }

    public var generation: UInt64 = 0
    public var segments: [SegmentEntry] = []
    public var rawFiles: [RawFileEntry] = []

    public init() {}

    /// The files the segments are in, each once, in the order the segments first name them
    /// (manifest-v4.md §1: the file table).
    var files: [(path: String, size: Int)] { fileTable().files }

    /// The file table and each segment's index in it. Neighbouring segments mostly share a file:
    /// the one before is tried first (a hash of the path per segment was a fifth of encoding).
    private func fileTable() -> (files: [(path: String, size: Int)], indices: [Int]) {
        var index: [String: Int] = [:]
        var files: [(path: String, size: Int)] = []
        var indices: [Int] = []
        indices.reserveCapacity(segments.count)
        for s in segments {
            if let last = indices.last, files[last].path == s.path {
                indices.append(last)
            } else if let known = index[s.path] {
                indices.append(known)
            } else {
                index[s.path] = files.count
                indices.append(files.count)
                files.append((s.path, s.fileSize))
            }
            precondition(s.fileSize == files[indices.last!].size, "segments of one file agree on its size")
        }
        return (files, indices)
    }

    /// How many types the segments hold. Segments come month by month, each month's types in one
    /// order, and share their type's string: each is compared first with the type that followed
    /// the one before it last time (a set of the types hashed every entry's: ~130K instructions of
    /// a compaction with nothing to do, for a year).
    var typeCount: Int {
        var types: [String] = []
        var followers: [Int] = []
        var latest = -1
        for s in segments {
            let expected = latest >= 0 ? followers[latest] : -1
            if expected >= 0 && types[expected] == s.type {
                latest = expected
                continue
            }
            let found = types.firstIndex(of: s.type) ?? types.count
            if found == types.count {
                types.append(s.type)
                followers.append(-1)
            }
            if latest >= 0 { followers[latest] = found }
            latest = found
        }
        return types.count
    }

    func encode() -> [UInt8] {
        // About what each entry takes, so the buffer grows once or twice rather than a dozen times.
        var w = ByteWriter(capacity: 64 + segments.count * 96 + rawFiles.count * 80)
        w.append(Self.magic)
        w.u16(Self.version)
        w.u16(0)
        w.u64(generation)
        let (files, indices) = fileTable()
        w.uvarint(UInt64(files.count))
        for f in files {
            w.string(f.path)
            w.u64(UInt64(f.size))
        }
        w.uvarint(UInt64(segments.count))
        for (s, file) in zip(segments, indices) {
            w.string(s.type)
            // 2 + 1 + a uvarint (up to 10) + 8 * 6 + 4 bytes.
            w.record(capacity: 65) { r in
                r.u16(UInt16(s.year))
                r.u8(UInt8(s.month))
                r.uvarint(UInt64(file))
                r.u64(UInt64(s.offset))
                r.u64(UInt64(s.size))
                r.u32(s.crc)
                r.u64(UInt64(s.sampleCount))
                r.i64(s.firstStart)
                r.i64(s.lastStart)
                r.i64(s.maxEnd)
            }
        }
        w.uvarint(UInt64(rawFiles.count))
        for r in rawFiles {
            r.place.write(to: &w)
            // 8 * 4 bytes, then uvarints: the month count and each month (up to 10 bytes each).
            w.record(capacity: 32 + 10 * (r.months.count + 1)) { c in
                c.u64(UInt64(r.size))
                c.i64(r.mtimeNanoseconds)
                c.u64(r.contentHash)
                c.u64(UInt64(r.sampleCount))
                c.uvarint(UInt64(r.months.count))
                for m in r.months { c.varint(Int64(m.rawValue)) }
            }
        }
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// Decodes a manifest after checking its magic, version and CRC. Without `rawFiles` the
    /// raw-file entries (needed by compaction, not by queries) are left undecoded.
    static func decode(_ bytes: UnsafeRawBufferPointer, path: String, rawFiles: Bool = true) throws(TSDBError)
        -> Manifest
    {
        try decodeWithTypes(bytes, path: path, rawFiles: rawFiles).manifest
    }

    /// ``decode(_:path:rawFiles:)``, with the segments' types told apart as they are read.
    static func decodeWithTypes(_ bytes: UnsafeRawBufferPointer, path: String, rawFiles: Bool = true)
        throws(TSDBError) -> (manifest: Manifest, types: SegmentTypes)
    {
        do throws(TSDBError) {
            guard bytes.count >= 24 else {
                throw TSDBError.corrupt("manifest is \(bytes.count) bytes, too short", offset: 0)
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 4])
            var r = ByteReader(bytes, context: "manifest")
            guard try r.bytes(8, "magic").elementsEqual(magic) else {
                throw TSDBError.corrupt("bad manifest magic", offset: 0)
            }
            let version = try r.u16("version")
            guard version == Self.version else {
                throw TSDBError.unsupportedVersion(
                    "manifest version \(version); this build reads version \(Self.version)", offset: 8)
            }
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
            let computed = CRC32C.checksum(body)
            guard stored == computed else {
                throw TSDBError.corrupt(
                    "manifest CRC is \(hex32(stored)), computed \(hex32(computed))", offset: bytes.count - 4)
            }
            _ = try r.u16("flags")
            var m = Manifest()
            m.generation = try r.u64("generation")
            let nf = try r.count("file count", limit: r.remaining / 9)
            var files: [(path: String, size: Int)] = []
            files.reserveCapacity(nf)
            for _ in 0..<nf { files.append((try r.string("file path"), try r.int("file size"))) }
            let ns = try r.count("segment count", limit: r.remaining / 47)
            m.segments.reserveCapacity(ns)
            // Segments come month by month, a type in each: every entry's type is one of the types
            // read before it when it can be (one string per type, not one per segment).
            var types = KnownStrings()
            var typeOfSegment: [Int32] = []
            typeOfSegment.reserveCapacity(ns)
            for _ in 0..<ns {
                let type = try r.string("type", among: &types)
                typeOfSegment.append(Int32(types.latestIndex))
                let (year, month) = (Int(try r.u16("year")), Int(try r.u8("month")))
                let fileAt = r.fileOffset
                let file = try r.uvarint("file index")
                guard file < UInt64(files.count) else {
                    throw TSDBError.corrupt("file index \(file) but the table has \(files.count) files", offset: fileAt)
                }
                let (path, fileSize) = files[Int(file)]
                let offset = try r.int("segment offset")
                let size = try r.int("segment size")
                guard offset <= fileSize && size <= fileSize - offset else {
                    throw r.fail("segment of \(size) bytes at \(offset) lies outside its \(fileSize)-byte file")
                }
                m.segments.append(
                    SegmentEntry(
                        type: type, year: year, month: month, path: path, fileSize: fileSize, offset: offset,
                        size: size, crc: try r.u32("segment CRC"), sampleCount: try r.int("sample count"),
                        firstStart: try r.i64(), lastStart: try r.i64(), maxEnd: try r.i64()))
            }
            let segmentTypes = SegmentTypes(names: types.strings, ofSegment: typeOfSegment)
            guard rawFiles else { return (m, segmentTypes) }
            let nr = try r.count("raw file count", limit: r.remaining / 34)
            m.rawFiles.reserveCapacity(nr)
            for _ in 0..<nr {
                let place = try r.rawPath("raw path")
                let (size, mtime) = (try r.int("size"), try r.i64("mtime"))
                let (hash, samples) = (try r.u64("content hash"), try r.int("sample count"))
                let nm = try r.count("month count", limit: r.remaining)
                func month() throws(TSDBError) -> MonthIndex {
                    let month = try r.varint("month")
                    guard let m32 = Int32(exactly: month) else { throw r.fail("month index \(month) out of range") }
                    return MonthIndex(rawValue: m32)
                }
                let months: MonthList
                switch nm {
                case 0: months = []
                case 1: months = MonthList(one: try month())
                case 2:
                    let first = try month()
                    months = MonthList(first, try month())
                default:
                    var many: [MonthIndex] = []
                    many.reserveCapacity(nm)
                    for _ in 0..<nm { many.append(try month()) }
                    months = MonthList(many)
                }
                let entry = RawFileEntry(
                    place: place, size: size, mtimeNanoseconds: mtime, contentHash: hash, sampleCount: samples,
                    months: months)
                m.rawFiles.append(entry)
            }
            guard r.remaining == 4 else { throw r.fail("\(r.remaining - 4) unexpected bytes before the CRC") }
            return (m, segmentTypes)
        } catch {
            throw error.at(path: path)
        }
    }

    static func read(at path: String) throws(TSDBError) -> Manifest {
        let file = try MappedFile(path: path)
        return try file.withBytes { (b) throws(TSDBError) in try decode(b, path: path) }
    }
}

/// A decoded manifest's segments by type: its distinct types in the order they first appear, and
/// each segment's index among them. Queries pick a type's segments by these indices rather than
/// by comparing each entry's type name (and copying the entry, two strings retained and released):
/// that was ~130K instructions of a year's daily query in Europe/Paris days, a nineteenth of the
/// process, and ~120K in UTC days (callgrind, 09da66e against the same code without the index).
struct SegmentTypes: Sendable {
    let names: [String]
    let ofSegment: [Int32]

    /// The index of `type` among ``names``, if the manifest has it.
    func index(of type: String) -> Int32? {
        // Segment entries share their type's string, so a name taken from here matches at once.
        let length = type.utf8.count
        return names.firstIndex { $0.utf8.count == length && $0 == type }.map { Int32($0) }
    }

    /// The indices of `type`'s segments, in manifest order.
    func segments(of type: String) -> [Int] {
        guard let t = index(of: type) else { return [] }
        return ofSegment.indices.filter { ofSegment[$0] == t }
    }
}

extension Manifest.SegmentEntry {
    /// The segment's file and offset, one text (segments share files).
    var place: String { path + "@" + String(offset) }

    /// This segment's bytes in `files` (its file mapped there once for all its segments).
    func bytes(in storeDirectory: String, files: inout MappedFiles) throws(TSDBError) -> MappedFile {
        try files.slice(of: storeDirectory + "/" + path, offset: offset, count: size)
    }
}
