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

    /// Starts a deflated member; its bytes follow through ``write(_:)``.
    package func begin(_ name: String) throws(TSDBError) {
        try end()
        var header = ByteWriter()
        header.u32(ZipArchive.localHeader)
        header.u16(45)  // version needed: ZIP64
        header.u16(1 << 3 | 1 << 11)  // sizes in a data descriptor; UTF-8 name
        header.u16(8)  // deflate
        header.u32(0)  // time and date
        header.u32(0)  // CRC, sizes: in the descriptor
        header.u32(0)
        header.u32(0)
        let nameBytes = Array(name.utf8)
        header.u16(UInt16(nameBytes.count))
        header.u16(0)
        header.append(nameBytes)
        current = (name, file.size, crc32(0, nil, 0), 0, 0)
        try file.append(header.bytes)
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
        var descriptor = ByteWriter()
        descriptor.u32(UInt32(0x0807_4B50))
        descriptor.u32(UInt32(truncatingIfNeeded: c.crc))
        descriptor.u64(UInt64(c.compressed))  // ZIP64 descriptor: 8-byte sizes
        descriptor.u64(UInt64(c.size))
        try file.append(descriptor.bytes)
        entries.append((c.name, UInt32(truncatingIfNeeded: c.crc), c.compressed, c.size, c.offset))
    }

    /// Writes the central directory (every entry with a ZIP64 extra field, since the local
    /// descriptors use 8-byte sizes) and the end records, then publishes the file.
    package func finish() throws(TSDBError) {
        try end()
        let directoryStart = file.size
        var directory = ByteWriter()
        for e in entries {
            let name = Array(e.name.utf8)
            directory.u32(ZipArchive.centralHeader)
            directory.u16(45)  // made by
            directory.u16(45)  // needed
            directory.u16(1 << 3 | 1 << 11)
            directory.u16(8)
            directory.u32(0)
            directory.u32(e.crc)
            directory.u32(.max)  // sizes and offset in the ZIP64 extra field
            directory.u32(.max)
            directory.u16(UInt16(name.count))
            directory.u16(28)  // extra: id, length, three u64
            directory.u16(0)  // comment
            directory.u16(0)  // disk
            directory.u16(0)  // internal attributes
            directory.u32(0)  // external attributes
            directory.u32(.max)
            directory.append(name)
            directory.u16(1)
            directory.u16(24)
            directory.u64(UInt64(e.size))
            directory.u64(UInt64(e.compressed))
            directory.u64(UInt64(e.offset))
        }
        let zip64End = directoryStart + directory.count
        // ZIP64 end of central directory record and locator, then the classic end record.
        directory.u32(ZipArchive.zip64End)
        directory.u64(44)
        directory.u16(45)
        directory.u16(45)
        directory.u32(0)
        directory.u32(0)
        directory.u64(UInt64(entries.count))
        directory.u64(UInt64(entries.count))
        directory.u64(UInt64(zip64End - directoryStart))
        directory.u64(UInt64(directoryStart))
        directory.u32(ZipArchive.zip64Locator)
        directory.u32(0)
        directory.u64(UInt64(zip64End))
        directory.u32(1)
        directory.u32(ZipArchive.endOfCentralDirectory)
        directory.u16(0)
        directory.u16(0)
        directory.u16(.max)
        directory.u16(.max)
        directory.u32(.max)
        directory.u32(.max)
        directory.u16(0)
        try file.append(directory.bytes)
        try file.publish()
    }
}
