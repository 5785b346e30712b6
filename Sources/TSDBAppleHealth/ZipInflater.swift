import CTSDBZlib
import TSDB

/// Streams one zip member's contents through a fixed buffer (raw deflate through the system's
/// zlib, or stored bytes as they are), checking its CRC-32 and size at the end: memory stays at
/// one buffer whatever the member's size.
enum ZipInflater {
    static let chunkSize = 1 << 20

    /// Hands the member's contents to `chunk` a buffer at a time; `chunk` returns false to stop
    /// early (then nothing is checked).
    static func stream(
        _ member: ZipArchive.Member, of archive: ZipArchive, _ chunk: (UnsafeRawBufferPointer) throws(TSDBError) -> Bool
    ) throws(TSDBError) {
        let path = archive.file.path
        try archive.data(of: member) { (input) throws(TSDBError) in
            var crc: UInt = crc32(0, nil, 0)
            var produced = 0
            var stopped = false
            func emit(_ bytes: UnsafeRawBufferPointer) throws(TSDBError) -> Bool {
                guard !bytes.isEmpty else { return true }
                crc = crc32(crc, bytes.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
                produced += bytes.count
                stopped = try !chunk(bytes)
                return !stopped
            }
            switch member.method {
            case 0:
                var o = 0
                while o < input.count {
                    let n = min(chunkSize, input.count - o)
                    guard try emit(UnsafeRawBufferPointer(rebasing: input[o..<o + n])) else { break }
                    o += n
                }
            case 8:
                // Compressed pages already inflated leave memory as the stream moves on.
                try inflate(input, member: member, path: path, emit) { archive.file.releasePages(before: $0) }
            default:
                throw TSDBError.invalidInput(
                    "member \(member.name): compression method \(member.method) (expected 0 stored or 8 deflate)",
                    path: path)
            }
            if stopped { return }
            guard produced == member.size, UInt32(truncatingIfNeeded: crc) == member.crc32 else {
                throw TSDBError.invalidInput(
                    "member \(member.name): expected \(member.size) bytes with CRC-32 \(hex(member.crc32)), "
                        + "found \(produced) bytes with \(hex(UInt32(truncatingIfNeeded: crc))) (damaged export?)",
                    path: path)
            }
        }
    }

    private static func hex(_ v: UInt32) -> String { "0x" + String(v, radix: 16, uppercase: true) }

    private static func inflate(
        _ input: UnsafeRawBufferPointer, member: ZipArchive.Member, path: String,
        _ emit: (UnsafeRawBufferPointer) throws(TSDBError) -> Bool, release: (UnsafeRawPointer) -> Void
    ) throws(TSDBError) {
        var stream = z_stream()
        // Negative window bits: raw deflate, as zip stores it (no zlib header).
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw TSDBError.io("zlib could not start inflating member \(member.name)", path: path)
        }
        defer { inflateEnd(&stream) }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { output.deallocate() }
        var consumed = 0
        var released = 0
        var status = Z_OK
        while status != Z_STREAM_END {
            // avail_in is 32 bits: feed at most 1 GB at a time.
            let feed = min(input.count - consumed, 1 << 30)
            stream.next_in = UnsafeMutablePointer(
                mutating: (input.baseAddress! + consumed).assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(feed)
            stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(chunkSize)
            status = CTSDBZlib.inflate(&stream, Z_NO_FLUSH)
            consumed += feed - Int(stream.avail_in)
            guard status == Z_OK || status == Z_STREAM_END else {
                let reason = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                let detail =
                    status == Z_BUF_ERROR
                    ? "the compressed data ends early (truncated export?)" : "bad deflate data (\(reason))"
                throw TSDBError.invalidInput(
                    "member \(member.name): \(detail) at compressed byte \(consumed)", path: path)
            }
            guard try emit(UnsafeRawBufferPointer(rebasing: output[0..<chunkSize - Int(stream.avail_out)])) else {
                return
            }
            if consumed - released >= 8 << 20 {
                release(input.baseAddress! + consumed)
                released = consumed
            }
            if status == Z_OK && consumed == input.count && stream.avail_out != 0 {
                throw TSDBError.invalidInput(
                    "member \(member.name): the compressed data ends early (truncated export?) "
                        + "at compressed byte \(consumed)",
                    path: path)
            }
        }
    }
}
