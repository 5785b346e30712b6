import TSDB

/// A ZIP archive read in place (PKWARE APPNOTE 6.3: end of central directory, ZIP64, central
/// directory, local headers), through a read-only memory mapping: a multi-gigabyte `export.zip`
/// is never copied or extracted. Members are read as streams (``ZipInflater``).
struct ZipArchive {
    struct Member {
        var name: String
        /// 0 stored, 8 deflate (the only two methods Health writes).
        var method: UInt16
        var crc32: UInt32
        var compressedSize: Int
        var size: Int
        /// Offset of the member's local header.
        var headerOffset: Int
    }

    let file: MappedFile
    let members: [Member]

    /// APPNOTE §4.3.16, §4.3.14/15, §4.3.12, §4.3.7: record signatures.
    static let endOfCentralDirectory: UInt32 = 0x0605_4B50
    static let zip64Locator: UInt32 = 0x0706_4B50
    static let zip64End: UInt32 = 0x0606_4B50
    static let centralHeader: UInt32 = 0x0201_4B50
    static let localHeader: UInt32 = 0x0403_4B50

    init(path: String) throws(TSDBError) {
        file = try MappedFile(path: path)
        members = try file.withBytes { (b) throws(TSDBError) in try Self.readDirectory(b, path: path) }
    }

    static func readDirectory(_ b: UnsafeRawBufferPointer, path: String) throws(TSDBError) -> [Member] {
        func bad(_ what: String, _ offset: Int) -> TSDBError {
            .invalidInput(
                "not a readable zip archive: \(what) (truncated or damaged export?)", path: path, offset: offset)
        }
        func u16(_ o: Int) -> Int { Int(b.loadUnaligned(fromByteOffset: o, as: UInt16.self).littleEndian) }
        func u32(_ o: Int) -> Int { Int(b.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian) }
        func u64(_ o: Int) -> Int {
            Int(truncatingIfNeeded: b.loadUnaligned(fromByteOffset: o, as: UInt64.self).littleEndian)
        }
        guard b.count >= 22 else { throw bad("\(b.count) bytes, shorter than an end record", 0) }
        // The end record is the last 22 bytes plus a comment of up to 65,535 bytes.
        var end = b.count - 22
        while end >= max(0, b.count - 22 - 65_535) && u32(end) != Int(endOfCentralDirectory) { end -= 1 }
        guard end >= 0, u32(end) == Int(endOfCentralDirectory) else {
            throw bad("no end of central directory", b.count)
        }
        var count = u16(end + 10)
        var directorySize = u32(end + 12)
        var directory = u32(end + 16)
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directory == 0xFFFF_FFFF {
            let locator = end - 20
            guard locator >= 0, u32(locator) == Int(zip64Locator) else { throw bad("ZIP64 locator missing", end) }
            let record = u64(locator + 8)
            guard record >= 0, record + 56 <= b.count, u32(record) == Int(zip64End) else {
                throw bad("ZIP64 end record missing", locator)
            }
            count = u64(record + 32)
            directorySize = u64(record + 40)
            directory = u64(record + 48)
        }
        guard directory >= 0, directorySize >= 0, directory + directorySize <= b.count else {
            throw bad("central directory outside the file", end)
        }
        var members: [Member] = []
        var o = directory
        for _ in 0..<count {
            guard o + 46 <= b.count, u32(o) == Int(centralHeader) else { throw bad("bad central directory entry", o) }
            let nameLength = u16(o + 28)
            let extraLength = u16(o + 30)
            let commentLength = u16(o + 32)
            guard o + 46 + nameLength + extraLength + commentLength <= b.count else {
                throw bad("entry past the end", o)
            }
            var m = Member(
                name: String(
                    decoding: UnsafeRawBufferPointer(rebasing: b[o + 46..<o + 46 + nameLength]), as: UTF8.self),
                method: UInt16(u16(o + 10)), crc32: UInt32(u32(o + 16)), compressedSize: u32(o + 20), size: u32(o + 24),
                headerOffset: u32(o + 42))
            // ZIP64 extended information (§4.5.3): present fields are those saturated above, in order.
            var e = o + 46 + nameLength
            let extraEnd = e + extraLength
            while e + 4 <= extraEnd {
                let id = u16(e)
                let length = u16(e + 2)
                if id == 1 {
                    var f = e + 4
                    if m.size == 0xFFFF_FFFF, f + 8 <= e + 4 + length { (m.size, f) = (u64(f), f + 8) }
                    if m.compressedSize == 0xFFFF_FFFF, f + 8 <= e + 4 + length {
                        (m.compressedSize, f) = (u64(f), f + 8)
                    }
                    if m.headerOffset == 0xFFFF_FFFF, f + 8 <= e + 4 + length { m.headerOffset = u64(f) }
                }
                e += 4 + length
            }
            guard m.headerOffset >= 0, m.compressedSize >= 0, m.size >= 0 else { throw bad("entry sizes overflow", o) }
            members.append(m)
            o += 46 + nameLength + extraLength + commentLength
        }
        return members
    }

    /// The member's compressed bytes (after its local header), checked to lie in the file.
    func data<R>(of m: Member, _ body: (UnsafeRawBufferPointer) throws(TSDBError) -> R) throws(TSDBError) -> R {
        try file.withBytes { (b) throws(TSDBError) -> R in
            let h = m.headerOffset
            guard h + 30 <= b.count,
                b.loadUnaligned(fromByteOffset: h, as: UInt32.self).littleEndian == Self.localHeader
            else {
                throw TSDBError.invalidInput("member \(m.name): no local header", path: file.path, offset: h)
            }
            let nameLength = Int(b.loadUnaligned(fromByteOffset: h + 26, as: UInt16.self).littleEndian)
            let extraLength = Int(b.loadUnaligned(fromByteOffset: h + 28, as: UInt16.self).littleEndian)
            let start = h + 30 + nameLength + extraLength
            guard start + m.compressedSize <= b.count else {
                throw TSDBError.invalidInput(
                    "member \(m.name): \(m.compressedSize) compressed bytes run past the end of the file (truncated?)",
                    path: file.path, offset: start)
            }
            return try body(UnsafeRawBufferPointer(rebasing: b[start..<start + m.compressedSize]))
        }
    }
}
