/// An append-only little-endian byte buffer used by every writer in the engine (and by the
/// Parquet and zip writers beside it).
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package var count: Int { bytes.count }

    package mutating func u8(_ v: UInt8) { bytes.append(v) }

    package mutating func u16(_ v: UInt16) { littleEndian(v) }
    package mutating func u32(_ v: UInt32) { littleEndian(v) }
    package mutating func u64(_ v: UInt64) { littleEndian(v) }
    mutating func i16(_ v: Int16) { littleEndian(UInt16(bitPattern: v)) }
    package mutating func i32(_ v: Int32) { littleEndian(UInt32(bitPattern: v)) }
    package mutating func i64(_ v: Int64) { littleEndian(UInt64(bitPattern: v)) }
    package mutating func f64(_ v: Double) { littleEndian(v.bitPattern) }

    private mutating func littleEndian<T: FixedWidthInteger>(_ v: T) {
        var le = v.littleEndian
        withUnsafeBytes(of: &le) { bytes.append(contentsOf: $0) }
    }

    /// Unsigned LEB128 (7 bits a byte, low groups first).
    package mutating func uvarint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zigzag-mapped signed LEB128.
    package mutating func varint(_ v: Int64) { uvarint(ZigZag.encode(v)) }

    package mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Appends `n` zero bytes and lets `fill` write them.
    package mutating func appendZeros(_ n: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: n))
        bytes.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
    }
    package mutating func append(_ other: UnsafeRawBufferPointer) { bytes.append(contentsOf: other) }

    /// Hands the bytes over and starts again empty (keeping the capacity).
    package mutating func take() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// A length-prefixed UTF-8 string.
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A length-prefixed string of these UTF-8 bytes.
    mutating func string(utf8: UnsafeRawBufferPointer) {
        uvarint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Overwrites four bytes at `offset` (used to patch lengths after the fact).
    package mutating func patchU32(_ v: UInt32, at offset: Int) {
        let le = v.littleEndian
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: le >> (8 * UInt32(i))) }
    }
}

extension ByteWriter {
    /// Appends the fields `fill` writes (at most `capacity` bytes) with one append: a manifest's
    /// entries are a dozen small fields each, and an append costs ~100 instructions whatever its
    /// size (a year's manifest took 0.87 M instructions to encode field by field).
    mutating func record(capacity: Int, _ fill: (inout RecordCursor) -> Void) {
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 8) { buffer in
            var cursor = RecordCursor(buffer)
            fill(&cursor)
            append(UnsafeRawBufferPointer(rebasing: buffer[..<cursor.count]))
        }
    }
}

/// Fields written into a record's buffer for ``ByteWriter/record(capacity:_:)``, in the same
/// encodings as ``ByteWriter``'s own.
struct RecordCursor {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    fileprivate init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    private mutating func littleEndian<T: FixedWidthInteger>(_ v: T) {
        precondition(count + MemoryLayout<T>.size <= buffer.count, "record longer than its capacity")
        buffer.storeBytes(of: v.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    mutating func u8(_ v: UInt8) { littleEndian(v) }
    mutating func u16(_ v: UInt16) { littleEndian(v) }
    mutating func u32(_ v: UInt32) { littleEndian(v) }
    mutating func u64(_ v: UInt64) { littleEndian(v) }
    mutating func i64(_ v: Int64) { littleEndian(UInt64(bitPattern: v)) }

    /// Unsigned LEB128, as ``ByteWriter/uvarint(_:)``.
    mutating func uvarint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            u8(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        u8(UInt8(v))
    }

    mutating func varint(_ v: Int64) { uvarint(ZigZag.encode(v)) }
}

enum ZigZag {
    @inline(__always) static func encode(_ v: Int64) -> UInt64 {
        UInt64(bitPattern: (v << 1) ^ (v >> 63))
    }

    @inline(__always) static func decode(_ v: UInt64) -> Int64 {
        Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }
}
