#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Maps byte strings to dense ids without allocating on a hit.
///
/// Strings live back to back in one arena; an open-addressing table of ids finds them by hash.
/// Used for the few distinct units, sources, devices and metadata texts among millions of samples.
struct ByteInterner {
    private(set) var arena: [UInt8] = []
    private(set) var spans: [Range<Int>] = []
    private var hashes: [UInt64] = []
    private var table: [Int32] = Array(repeating: -1, count: 64)

    var count: Int { spans.count }

    /// Eight bytes a step, multiply-xorshift mixing; only needs to spread ids over the table.
    @inline(__always) static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var i = 0
        let n = bytes.count
        while i + 8 <= n {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
            i += 8
        }
        h = (h ^ littleEndianTail(bytes, from: i)) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 29)
    }

    /// The id of `bytes` if already interned, without inserting.
    func lookup(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        let h = Self.hash(bytes)
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let id = table[slot]
            if id < 0 { return nil }
            if hashes[Int(id)] == h && equals(Int(id), bytes) { return id }
            slot = (slot + 1) & mask
        }
    }

    mutating func intern(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        let h = Self.hash(bytes)
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let id = table[slot]
            if id < 0 { break }
            if hashes[Int(id)] == h && equals(Int(id), bytes) { return id }
            slot = (slot + 1) & mask
        }
        let id = Int32(spans.count)
        let start = arena.count
        arena.append(contentsOf: bytes)
        spans.append(start..<arena.count)
        hashes.append(h)
        table[slot] = id
        if spans.count * 2 > table.count { grow() }
        return id
    }

    /// Room for `bytes` more string bytes, so the arena does not reallocate (and briefly exist
    /// twice) while it fills up to that.
    mutating func reserveCapacity(bytes: Int) { arena.reserveCapacity(arena.count + bytes) }

    /// Room for `count` more strings of `bytes` bytes in all: no array grows, and the table is not
    /// rebuilt, until there are more.
    mutating func reserveCapacity(count: Int, bytes: Int) {
        reserveCapacity(bytes: bytes)
        spans.reserveCapacity(spans.count + count)
        hashes.reserveCapacity(hashes.count + count)
        while (spans.count + count) * 2 > table.count { grow() }
    }

    mutating func intern(_ string: String) -> Int32 {
        var s = string
        return s.withUTF8 { intern(UnsafeRawBufferPointer($0)) }
    }

    private func equals(_ id: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let span = spans[id]
        guard span.count == bytes.count else { return false }
        return arena.withUnsafeBytes { a in
            span.count == 0 || memcmp(a.baseAddress! + span.lowerBound, bytes.baseAddress!, span.count) == 0
        }
    }

    private mutating func grow() {
        var bigger = [Int32](repeating: -1, count: table.count * 2)
        let mask = bigger.count - 1
        for (id, h) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: h) & mask
            while bigger[slot] >= 0 { slot = (slot + 1) & mask }
            bigger[slot] = Int32(id)
        }
        table = bigger
    }

    func string(_ id: Int32) -> String {
        arena.withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[spans[Int(id)]]), as: UTF8.self) }
    }

    func withBytes<R>(_ id: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        arena.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[spans[Int(id)]])) }
    }
}
