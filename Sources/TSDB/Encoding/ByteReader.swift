#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bounds-checked little-endian cursor over borrowed bytes (often mapped file memory).
///
/// Every read checks that it stays inside the buffer and throws ``TSDBError/Kind/corruption``
/// naming the absolute file offset otherwise, so a damaged file can never make the engine read
/// out of bounds. `baseOffset` is the file offset of the buffer's first byte, for messages.
package struct ByteReader {
    /// What the bytes are, for messages: made into text only for an error (a query reads hundreds
    /// of blocks, and building "block N …" for each was 1,400 instructions a block).
    enum Context {
        case named(String)
        /// Block `index`'s decompressed bytes (Formats/segment-v3.md §5).
        case block(Int)

        var description: String {
            switch self {
            case .named(let name): name
            case .block(let index): "block \(index) (offsets within its decompressed bytes)"
            }
        }
    }

    let buffer: UnsafeRawBufferPointer
    let baseOffset: Int
    let context: Context
    private(set) var position: Int = 0

    init(_ buffer: UnsafeRawBufferPointer, baseOffset: Int = 0, context: String) {
        self.init(buffer, baseOffset: baseOffset, about: .named(context))
    }

    init(_ buffer: UnsafeRawBufferPointer, baseOffset: Int = 0, about context: Context) {
        self.buffer = buffer
        self.baseOffset = baseOffset
        self.context = context
    }

    var remaining: Int { buffer.count - position }
    /// The buffer's first byte, where a read of no bytes points; only for a buffer read from (not empty).
    var start: UnsafeRawPointer { UnsafeRawPointer(buffer.baseAddress!) }
    var isAtEnd: Bool { position == buffer.count }
    var fileOffset: Int { baseOffset + position }

    func fail(_ what: String) -> TSDBError {
        TSDBError.corrupt("\(context.description): \(what)", offset: baseOffset + position)
    }

    /// Inlined, with the message made out of line (as `fixed` and `varint`): every field read checks,
    /// and the calls were 4% of the year's UTC days (17.18M → 16.44M instructions, callgrind).
    @inline(__always)
    mutating func need(_ n: Int, _ what: String) throws(TSDBError) {
        guard n >= 0, n <= remaining else { throw shortfall(n, what) }
    }

    @inline(never)
    private func shortfall(_ n: Int, _ what: String) -> TSDBError {
        fail("\(what) needs \(n) bytes but only \(remaining) remain")
    }

    @inline(__always)
    mutating func u8(_ what: String = "byte") throws(TSDBError) -> UInt8 {
        try need(1, what)
        defer { position += 1 }
        return buffer[position]
    }

    mutating func u16(_ what: String = "u16") throws(TSDBError) -> UInt16 { try fixed(what) }
    mutating func u32(_ what: String = "u32") throws(TSDBError) -> UInt32 { try fixed(what) }
    mutating func u64(_ what: String = "u64") throws(TSDBError) -> UInt64 { try fixed(what) }
    mutating func i16(_ what: String = "i16") throws(TSDBError) -> Int16 { Int16(bitPattern: try fixed(what)) }
    mutating func i64(_ what: String = "i64") throws(TSDBError) -> Int64 { Int64(bitPattern: try fixed(what)) }
    mutating func f64(_ what: String = "f64") throws(TSDBError) -> Double { Double(bitPattern: try fixed(what)) }

    @inline(__always)
    private mutating func fixed<T: FixedWidthInteger>(_ what: String) throws(TSDBError) -> T {
        let size = MemoryLayout<T>.size
        try need(size, what)
        defer { position += size }
        return T(littleEndian: buffer.loadUnaligned(fromByteOffset: position, as: T.self))
    }

    @inline(__always)
    mutating func uvarint(_ what: @autoclosure () -> String = "varint") throws(TSDBError) -> UInt64 {
        // One byte (values below 128) is the common case in every varint stream here.
        if position < buffer.count, buffer[position] < 0x80 {
            position += 1
            return UInt64(buffer[position - 1])
        }
        // Away from the end, nine bytes can be read without a bounds check each (slot sums of
        // squares take three to five).
        if buffer.count - position >= 10 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            for k in 0..<9 {
                let byte = buffer[position + k]
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 {
                    position += k + 1
                    return result
                }
                shift += 7
            }
        }
        return try longUvarint(what)
    }

    private mutating func longUvarint(_ what: () -> String) throws(TSDBError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < buffer.count else { throw fail("\(what()) runs past the end") }
            let byte = buffer[position]
            position += 1
            if shift == 63 && byte > 1 { throw fail("\(what()) overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
            if shift > 63 { throw fail("\(what()) is longer than 10 bytes") }
        }
    }

    @inline(__always)
    mutating func varint(_ what: @autoclosure () -> String = "varint") throws(TSDBError) -> Int64 {
        ZigZag.decode(try uvarint(what()))
    }

    /// A u64 that must fit in a non-negative `Int` (sizes, counts).
    mutating func int(_ what: String) throws(TSDBError) -> Int {
        let v = try u64(what)
        guard v <= UInt64(Int.max) else { throw fail("\(what) \(v) is out of range") }
        return Int(v)
    }

    /// A varint that must fit in `0...limit` (counts, lengths, indices).
    /// (`what` is built only for an error: a manifest reads hundreds of lengths.)
    mutating func count(_ what: @autoclosure () -> String, limit: Int) throws(TSDBError) -> Int {
        let v = try uvarint(what())
        guard v <= UInt64(limit) else { throw fail("\(what()) is \(v), more than the limit \(limit)") }
        return Int(v)
    }

    @inline(__always)
    mutating func bytes(_ n: Int, _ what: String) throws(TSDBError) -> UnsafeRawBufferPointer {
        try need(n, what)
        defer { position += n }
        return UnsafeRawBufferPointer(rebasing: buffer[position..<position + n])
    }

    mutating func string(_ what: String) throws(TSDBError) -> String {
        let n = try count("\(what) length", limit: remaining)
        return try Self.text(try bytes(n, what), what, at: self)
    }

    /// A raw file's path: a day file's read as its date, with no string made.
    mutating func rawPath(_ what: String) throws(TSDBError) -> RawPath {
        let n = try count("\(what) length", limit: remaining)
        let raw = try bytes(n, what)
        return try RawPath(bytes: raw) { (raw) throws(TSDBError) in try Self.text(raw, what, at: self) }
    }

    /// A string, which is one of `known` itself when its bytes are the same (no copy, no UTF-8
    /// check); else it is made and added to `known`. For the few strings a list repeats: a
    /// manifest's types, which come one month after another.
    mutating func string(_ what: String, among known: inout KnownStrings) throws(TSDBError) -> String {
        let n = try count("\(what) length", limit: remaining)
        let raw = try bytes(n, what)
        if let s = known.string(of: raw) { return s }
        let s = try Self.text(raw, what, at: self)
        known.add(s, bytes: raw)
        return s
    }

    /// `raw` as a string, checked to be UTF-8.
    private static func text(_ raw: UnsafeRawBufferPointer, _ what: String, at reader: ByteReader)
        throws(TSDBError) -> String
    {
        // ASCII (every path and type name tsdb writes) is valid as it is: decoding a year's
        // manifest took 1.82M instructions with the generic validation, 1.19M without (callgrind).
        if isASCII(raw) { return String(decoding: raw, as: UTF8.self) }
        guard let s = String(validating: raw, as: UTF8.self) else {
            throw reader.fail("\(what) is not valid UTF-8")
        }
        return s
    }

    /// Whether every byte is below 0x80, eight at a time (a byte at a time was a third of reading
    /// a manifest's strings).
    package static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var high: UInt64 = 0
        var i = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        if i < bytes.count && bytes.count >= 8 {  // the last word again, overlapping: no byte loop
            high |= bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
            i = bytes.count
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    @inline(__always)
    mutating func skip(_ n: Int, _ what: String) throws(TSDBError) {
        try need(n, what)
        position += n
    }

    /// Reserved bytes: must be zero, so a later version can use them.
    mutating func zeros(_ n: Int, _ what: String) throws(TSDBError) {
        let at = fileOffset
        guard try bytes(n, what).allSatisfy({ $0 == 0 }) else {
            throw TSDBError.corrupt("\(context.description): \(what) bytes are not zero", offset: at)
        }
    }
}

extension ByteReader {
    /// The next `size` bytes as a record whose fields are read at fixed offsets, its bounds
    /// checked once here instead of once per field.
    mutating func record(_ size: Int, _ what: String) throws(TSDBError) -> FixedRecord {
        FixedRecord(bytes: try bytes(size, what))
    }
}

/// A fixed-size record of little-endian fields (a segment's index entry, segment-v3.md §6), read
/// at their offsets once the record's bytes are checked to be there (each offset is still checked
/// against the record's size): a year's 377 index entries took 316k instructions read through the
/// reader field by field, 6% of a year's daily query in the wearer's zone; 53k so.
struct FixedRecord {
    let bytes: UnsafeRawBufferPointer

    @inline(__always) func u8(at offset: Int) -> UInt8 { bytes[offset] }
    @inline(__always) func u16(at offset: Int) -> UInt16 { field(offset) }
    @inline(__always) func u32(at offset: Int) -> UInt32 { field(offset) }
    @inline(__always) func u64(at offset: Int) -> UInt64 { field(offset) }
    @inline(__always) func i64(at offset: Int) -> Int64 { Int64(bitPattern: field(offset)) }
    @inline(__always) func f64(at offset: Int) -> Double { Double(bitPattern: field(offset)) }

    @inline(__always)
    private func field<T: FixedWidthInteger>(_ offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count, "field outside the record")
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// Strings read from one buffer, found again by their bytes there (comparing with the strings
/// themselves took four times as long). The bytes must stay valid while this is used: it lives as
/// long as one reading of the buffer.
struct KnownStrings {
    /// Each string's bytes in the buffer, and the string; apart, so a comparison reads no string.
    private var starts: [UnsafeRawPointer] = []
    private var lengths: [Int] = []
    private(set) var strings: [String] = []
    /// The string found or added last, and for each string the one found right after it last
    /// time. A list repeats its strings in one order (a manifest's types, month after month, some
    /// months without some), so that one is tried first.
    private var latest = -1
    private var followers: [Int] = []

    /// The index in ``strings`` of the string found or added last.
    var latestIndex: Int { latest }

    /// The known string whose bytes are `raw`'s.
    mutating func string(of raw: UnsafeRawBufferPointer) -> String? {
        let expected = latest >= 0 ? followers[latest] : -1
        if expected >= 0 && lengths[expected] == raw.count && Self.same(starts[expected], raw) {
            latest = expected
            return strings[expected]
        }
        for i in strings.indices where lengths[i] == raw.count && Self.same(starts[i], raw) {
            follow(with: i)
            return strings[i]
        }
        return nil
    }

    /// Notes `i` as found after the latest.
    private mutating func follow(with i: Int) {
        if latest >= 0 { followers[latest] = i }
        latest = i
    }

    /// Whether the bytes at `known` are `raw`'s (of the same length): the last eight first, where
    /// names with a common prefix (`HKQuantityTypeIdentifier…`) differ.
    private static func same(_ known: UnsafeRawPointer, _ raw: UnsafeRawBufferPointer) -> Bool {
        guard let base = raw.baseAddress else { return true }
        let n = raw.count
        if n >= 8 {
            let tail = n - 8
            guard
                known.loadUnaligned(fromByteOffset: tail, as: UInt64.self)
                    == base.loadUnaligned(fromByteOffset: tail, as: UInt64.self)
            else { return false }
        }
        return memcmp(known, base, n) == 0
    }

    mutating func add(_ s: String, bytes: UnsafeRawBufferPointer) {
        starts.append(bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!)
        lengths.append(bytes.count)
        strings.append(s)
        followers.append(-1)
        follow(with: strings.count - 1)
    }
}
