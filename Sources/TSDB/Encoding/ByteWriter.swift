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
    mutating func appendZeros(_ n: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
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
        s.withUTF8 { utf8 in
            uvarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Overwrites four bytes at `offset` (used to patch lengths after the fact).
    mutating func patchU32(_ v: UInt32, at offset: Int) {
        let le = v.littleEndian
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: le >> (8 * UInt32(i))) }
    }
}

enum ZigZag {
    @inline(__always) static func encode(_ v: Int64) -> UInt64 {
        UInt64(bitPattern: (v << 1) ^ (v >> 63))
    }

    @inline(__always) static func decode(_ v: UInt64) -> Int64 {
        Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }
}
