import CTSDBCRC32C

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by leveldb, ext4 and iSCSI.
///
/// With the CPU's CRC-32C instruction where it has one (x86-64 SSE4.2, Arm CRC); else
/// slicing-by-8 in software: eight bytes a step through eight 256-entry tables.
/// Check value: `CRC32C.checksum("123456789")` is `0xE3069283` (Formats/segment-v3.md §2).
public enum CRC32C {
    /// Whether checksums use the instruction (read once).
    static let hardware = ctsdb_crc32c_hardware() != 0

    static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            tables[0][i] = c
        }
        for i in 0..<256 {
            for t in 1..<8 {
                let prev = tables[t - 1][i]
                tables[t][i] = (prev >> 8) ^ tables[0][Int(prev & 0xFF)]
            }
        }
        return tables
    }()

    /// A flat copy of the tables so the hot loop indexes one contiguous array.
    static let flat: [UInt32] = tables.flatMap { $0 }

    public static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard hardware, let base = bytes.baseAddress else { return softwareChecksum(bytes, seed: seed) }
        return ~ctsdb_crc32c_extend(~seed, base, bytes.count)
    }

    /// The table-driven checksum (the fallback, and the tests' reference for the instruction).
    static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        flat.withUnsafeBufferPointer { t in
            var i = 0
            let n = bytes.count
            while i + 8 <= n {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let lo = UInt32(truncatingIfNeeded: word) ^ crc
                let hi = UInt32(truncatingIfNeeded: word >> 32)
                crc =
                    t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                crc = t[Int((crc ^ UInt32(bytes[i])) & 0xFF)] ^ (crc >> 8)
                i += 1
            }
        }
        return ~crc
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    public static func checksum(_ string: String) -> UInt32 {
        checksum(Array(string.utf8))
    }
}
