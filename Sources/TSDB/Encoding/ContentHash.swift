/// A fast 64-bit hash of whole files (8 bytes a step, multiply–xorshift mixing), used only to
/// notice that a raw file's content changed. Not cryptographic; CRC-32C guards stored data.
public enum ContentHash {
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let k0: UInt64 = 0x9E37_79B9_7F4A_7C15
        let k1: UInt64 = 0xBF58_476D_1CE4_E5B9
        let k2: UInt64 = 0x94D0_49BB_1331_11EB
        var a = k0 ^ UInt64(bytes.count)
        var b = k1
        var c = k2
        var d = k0 &* k1
        var i = 0
        let n = bytes.count
        // Four independent lanes keep the multiplier busy.
        while i + 32 <= n {
            a = (a ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* k1
            a ^= a >> 29
            b = (b ^ bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* k2
            b ^= b >> 29
            c = (c ^ bytes.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)) &* k1
            c ^= c >> 29
            d = (d ^ bytes.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) &* k2
            d ^= d >> 29
            i += 32
        }
        var h = a ^ (b &* 31) ^ (c &* 127) ^ (d &* 8191)
        while i + 8 <= n {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* k1
            h ^= h >> 31
            i += 8
        }
        h = (h ^ littleEndianTail(bytes, from: i)) &* k2
        h ^= h >> 32
        return h
    }
}

/// The bytes from `start` to the end (fewer than 8) as one little-endian word.
@inline(__always) func littleEndianTail(_ bytes: UnsafeRawBufferPointer, from start: Int) -> UInt64 {
    var tail: UInt64 = 0
    var shift: UInt64 = 0
    for i in start..<bytes.count {
        tail |= UInt64(bytes[i]) << shift
        shift += 8
    }
    return tail
}
