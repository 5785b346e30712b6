import CTSDBZlib
import TSDB

/// Writes a zip archive as a stream (APPNOTE 6.3): each member deflated through zlib as its bytes
/// arrive, sizes and CRC in a data descriptor after it, ZIP64 records where a size or offset needs
/// them. For synthetic Health exports of any size (tests and benchmarks); the file appears at
/// its path only once complete.
package final class ZipWriter {
    private let file: StagedFile
    private var entries: [(name: String, crc: UInt32, compressed: Int, size: Int, offset: Int)] = []
    private var stream = z_stream()
    private var current: (name: String, offset: Int, crc: UInt, size: Int, compressed: Int)?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)

    package init(path: String) throws(TSDBError) {
        file = try StagedFile(path: path)
    }

    deinit {
        if current != nil { deflateEnd(&stream) }
        buffer.deallocate()
    }

    private static func le<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out += $0 }
    }

    /// Starts a deflated member; its bytes follow through ``write(_:)``.
    package func begin(_ name: String) throws(TSDBError) {
        try end()
        var header: [UInt8] = []
        Self.le(ZipArchive.localHeader, &header)
        Self.le(UInt16(45), &header)  // version needed: ZIP64
        Self.le(UInt16(1 << 3 | 1 << 11), &header)  // sizes in a data descriptor; UTF-8 name
        Self.le(UInt16(8), &header)  // deflate
        Self.le(UInt32(0), &header)  // time and date
        Self.le(UInt32(0), &header)  // CRC, sizes: in the descriptor
        Self.le(UInt32(0), &header)
        Self.le(UInt32(0), &header)
        let nameBytes = Array(name.utf8)
        Self.le(UInt16(nameBytes.count), &header)
        Self.le(UInt16(0), &header)
        header += nameBytes
        current = (name, file.size, crc32(0, nil, 0), 0, 0)
        try file.append(header)
        guard
            deflateInit2_(
                &stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
                == Z_OK
        else { throw TSDBError.io("zlib could not start deflating \(name)") }
    }

    package func write(_ bytes: [UInt8]) throws(TSDBError) {
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { b in Result { () throws(TSDBError) in try pump(b, flush: Z_NO_FLUSH) } }.get()
    }

    private func pump(_ input: UnsafeRawBufferPointer, flush: Int32) throws(TSDBError) {
        guard var c = current else { return }
        if !input.isEmpty {
            c.crc = crc32(c.crc, input.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(input.count))
            c.size += input.count
        }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        var status = Z_OK
        repeat {
            stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(buffer.count)
            status = deflate(&stream, flush)
            let produced = buffer.count - Int(stream.avail_out)
            if produced > 0 {
                try file.append(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<produced])))
                c.compressed += produced
            }
        } while stream.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END)
        current = c
    }

    /// Ends the current member: the rest of its deflate stream and its data descriptor.
    package func end() throws(TSDBError) {
        guard current != nil else { return }
        try pump(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH)
        deflateEnd(&stream)
        let c = current!
        current = nil
        var descriptor: [UInt8] = []
        Self.le(UInt32(0x0807_4B50), &descriptor)
        Self.le(UInt32(truncatingIfNeeded: c.crc), &descriptor)
        Self.le(UInt64(c.compressed), &descriptor)  // ZIP64 descriptor: 8-byte sizes
        Self.le(UInt64(c.size), &descriptor)
        try file.append(descriptor)
        entries.append((c.name, UInt32(truncatingIfNeeded: c.crc), c.compressed, c.size, c.offset))
    }

    /// Writes the central directory (every entry with a ZIP64 extra field, since the local
    /// descriptors use 8-byte sizes) and the end records, then publishes the file.
    package func finish() throws(TSDBError) {
        try end()
        let directoryStart = file.size
        var directory: [UInt8] = []
        for e in entries {
            let name = Array(e.name.utf8)
            Self.le(ZipArchive.centralHeader, &directory)
            Self.le(UInt16(45), &directory)  // made by
            Self.le(UInt16(45), &directory)  // needed
            Self.le(UInt16(1 << 3 | 1 << 11), &directory)
            Self.le(UInt16(8), &directory)
            Self.le(UInt32(0), &directory)
            Self.le(e.crc, &directory)
            Self.le(UInt32.max, &directory)  // sizes and offset in the ZIP64 extra field
            Self.le(UInt32.max, &directory)
            Self.le(UInt16(name.count), &directory)
            Self.le(UInt16(28), &directory)  // extra: id, length, three u64
            Self.le(UInt16(0), &directory)  // comment
            Self.le(UInt16(0), &directory)  // disk
            Self.le(UInt16(0), &directory)  // internal attributes
            Self.le(UInt32(0), &directory)  // external attributes
            Self.le(UInt32.max, &directory)
            directory += name
            Self.le(UInt16(1), &directory)
            Self.le(UInt16(24), &directory)
            Self.le(UInt64(e.size), &directory)
            Self.le(UInt64(e.compressed), &directory)
            Self.le(UInt64(e.offset), &directory)
        }
        let zip64End = directoryStart + directory.count
        // ZIP64 end of central directory record and locator, then the classic end record.
        Self.le(ZipArchive.zip64End, &directory)
        Self.le(UInt64(44), &directory)
        Self.le(UInt16(45), &directory)
        Self.le(UInt16(45), &directory)
        Self.le(UInt32(0), &directory)
        Self.le(UInt32(0), &directory)
        Self.le(UInt64(entries.count), &directory)
        Self.le(UInt64(entries.count), &directory)
        Self.le(UInt64(zip64End - directoryStart), &directory)
        Self.le(UInt64(directoryStart), &directory)
        Self.le(ZipArchive.zip64Locator, &directory)
        Self.le(UInt32(0), &directory)
        Self.le(UInt64(zip64End), &directory)
        Self.le(UInt32(1), &directory)
        Self.le(ZipArchive.endOfCentralDirectory, &directory)
        Self.le(UInt16(0), &directory)
        Self.le(UInt16(0), &directory)
        Self.le(UInt16.max, &directory)
        Self.le(UInt16.max, &directory)
        Self.le(UInt32.max, &directory)
        Self.le(UInt32.max, &directory)
        Self.le(UInt16(0), &directory)
        try file.append(directory)
        try file.publish()
    }
}
