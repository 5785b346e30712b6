/// One output row written straight into its byte array's spare room and kept at once. Long
/// outputs make millions of rows (five years of minutes), and appending each cell and separator
/// on its own costs a uniqueness and capacity check, and often a call, per piece.
///
/// A row only exists inside ``append(to:capacity:_:)``, which owns its memory; writing past
/// `capacity` stops the program (a formatter that underestimated its rows is a bug).
///
/// Public only so that the small writers are inlinable: the command line formats rows with them,
/// one call per byte or number from another module otherwise (five years of minute buckets
/// 123.7 -> 120.6 ms once inlined). This compiler inlines no `package` function across modules.
public struct RowBytes: TextOutputStream {
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline let capacity: Int
    @usableFromInline var written = 0
    /// Bytes written so far.
    package var count: Int { written }
    /// Bytes that can still be written.
    package var room: Int { capacity - written }

    @usableFromInline init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// Calls `body` with an empty row of at most `capacity` bytes in `bytes`' spare room, and
    /// keeps what it wrote there: no copy from a buffer on the stack (a memmove call per row).
    @inlinable
    public static func append(to bytes: inout [UInt8], capacity: Int, _ body: (inout RowBytes) -> Void) {
        bytes.append(addingCapacity: capacity) { span in
            span.withUnsafeMutableBufferPointer { room, initialized in
                var row = RowBytes(base: room.baseAddress! + initialized, capacity: room.count - initialized)
                body(&row)
                initialized += row.written
            }
        }
    }

    /// Calls `body` with an empty row in `room`; returns how many bytes it wrote there.
    package static func writing(into room: UnsafeMutableBufferPointer<UInt8>, _ body: (inout RowBytes) -> Void) -> Int {
        var row = RowBytes(base: room.baseAddress!, capacity: room.count)
        body(&row)
        return row.written
    }

    /// Room for `n` more bytes, counted as written.
    @inlinable @inline(__always)
    mutating func claim(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        // 0 ≤ written ≤ capacity always, so neither sum can overflow: no trap tested per byte.
        precondition(n >= 0 && n <= capacity &- written, "a row longer than the room made for it")
        defer { written &+= n }
        return base + written
    }

    /// Takes back the last `n` bytes claimed or written.
    @inlinable @inline(__always)
    mutating func unclaim(_ n: Int) {
        precondition(n >= 0 && n <= written, "more bytes taken back than were written")
        written &-= n
    }

    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let from = bytes.baseAddress else { return }
        claim(bytes.count).update(from: from.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }

    /// The first `count` (at most 32) bytes of `words` as they lie in memory: four word stores
    /// where the row has room for them, else byte by byte (a copy of 25 bytes was a call to
    /// memmove per timestamp).
    @inlinable
    public mutating func write(words: (UInt64, UInt64, UInt64, UInt64), count: Int) {
        precondition(count >= 0 && count <= 32)
        guard capacity - written >= 32 else {
            return withUnsafeBytes(of: words) { write(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        let p = UnsafeMutableRawPointer(base + written)
        p.storeBytes(of: words.0, as: UInt64.self)
        p.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
        p.storeBytes(of: words.2, toByteOffset: 16, as: UInt64.self)
        p.storeBytes(of: words.3, toByteOffset: 24, as: UInt64.self)
        written += count
    }

    /// The first `count` (at most 16) bytes of `words` as they lie in memory: two word stores
    /// where the row has room for them, else byte by byte.
    @inlinable
    public mutating func write(words: (UInt64, UInt64), count: Int) {
        precondition(count >= 0 && count <= 16)
        guard capacity - written >= 16 else {
            return withUnsafeBytes(of: words) { write(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        let p = UnsafeMutableRawPointer(base + written)
        p.storeBytes(of: words.0, as: UInt64.self)
        p.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
        written += count
    }

    /// `f` as exactly `count` digits (1 to 24; `f` < 10^count), zeros first: what follows a
    /// decimal point. Eight digits at a time in a word, stored as words (see `write(words:count:)`).
    package mutating func write(fraction f: UInt64, digits count: Int) {
        precondition(count >= 1 && count <= 24)
        let (rest, last) = f.quotientAndRemainder(dividingBy: 100_000_000)
        let w2 = Self.eightDigits(last)
        guard count > 8 else { return write(words: (w2 >> (64 - 8 * count), 0), count: count) }
        let (first, middle) = rest.quotientAndRemainder(dividingBy: 100_000_000)
        let w1 = Self.eightDigits(middle)
        // The digits lie in w0 w1 w2 in memory order; the first 24 - count are leading zeros.
        let drop = 8 * (24 - count)
        guard count > 16 else {
            let shift = drop - 64
            return write(words: (w1 >> shift | w2 << (64 - shift), w2 >> shift), count: count)
        }
        let w0 = Self.eightDigits(first)
        let words = (w0 >> drop | w1 << (64 - drop), w1 >> drop | w2 << (64 - drop), w2 >> drop, UInt64(0))
        write(words: words, count: count)
    }

    /// The eight decimal digits of `x` < 10^8 (zeros first) as ASCII in one word, first digit in
    /// its lowest byte: the halves, quarters and digits found in all lanes at once by multiplying
    /// with a reciprocal (x/100 = x·10486 >> 20 below 10^4, x/10 = x·103 >> 10 below 100).
    @inline(__always)
    static func eightDigits(_ x: UInt64) -> UInt64 {
        let halves = x / 10_000 | (x % 10_000) << 32
        let hundreds = (halves &* 10486) >> 20 & 0x0000_007F_0000_007F
        let quarters = hundreds | (halves &- hundreds &* 100) << 16
        let tens = (quarters &* 103) >> 10 & 0x000F_000F_000F_000F
        let digits = tens | (quarters &- tens &* 10) << 8
        return digits | 0x3030_3030_3030_3030
    }

    /// An exact decimal as ``ExactDecimal/description`` writes it: the mantissa's digits with a
    /// point before the last `scale` of them (and zeros before, when it has no more).
    package mutating func write(mantissa: Int64, scale: UInt8) {
        guard scale > 0 else { return write(mantissa) }
        let magnitude = mantissa.magnitude
        let s = Int(scale)
        let shown = max(Self.digits(magnitude), s + 1)
        let length = shown + 1 + (mantissa < 0 ? 1 : 0)
        let p = claim(length)
        var m = magnitude
        var i = length
        for k in 0..<shown {
            if k == s {
                i -= 1
                p[i] = UInt8(ascii: ".")
            }
            i -= 1
            p[i] = UInt8(truncatingIfNeeded: 48 + m % 10)
            m /= 10
        }
        if mantissa < 0 { p[0] = UInt8(ascii: "-") }
    }

    package mutating func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    @inlinable
    public mutating func write(_ text: StaticString) {
        write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// `Double.write(to:)` hands its digits here from a stack buffer.
    public mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) { write(UnsafeRawBufferPointer(buffer)) }

    @inlinable
    public mutating func byte(_ b: UInt8) { claim(1).pointee = b }

    /// Copies the bytes at `source` up to the first control byte (below 0x20: a tab or new line)
    /// among the first `limit`, and returns how many it copied (`limit` when there is none). Eight
    /// bytes a step: each word is stored whole and kept up to its first control byte (found as the
    /// lowest byte whose subtraction of 0x20 borrows). Byte by byte for the last `limit` mod 8 or
    /// where the row has no room for a whole word, so nothing past `source + limit` is read.
    @inlinable
    public mutating func write(untilControlByte source: UnsafePointer<UInt8>, limit: Int) -> Int {
        precondition(limit >= 0)
        let lows: UInt64 = 0x2020_2020_2020_2020
        let highs: UInt64 = 0x8080_8080_8080_8080
        let destination = UnsafeMutableRawPointer(base + written)
        // Words while both the source and the row have eight bytes left: the bounds checked once.
        let wordsEnd = min(limit, capacity &- written) &- 8
        var copied = 0
        while copied <= wordsEnd {
            let word = UInt64(littleEndian: UnsafeRawPointer(source + copied).loadUnaligned(as: UInt64.self))
            destination.storeBytes(of: word.littleEndian, toByteOffset: copied, as: UInt64.self)
            let controls = (word &- lows) & ~word & highs
            if controls != 0 {
                copied &+= controls.trailingZeroBitCount &>> 3
                written &+= copied
                return copied
            }
            copied &+= 8
        }
        written &+= copied
        while copied < limit, source[copied] >= 0x20 {
            byte(source[copied])
            copied += 1
        }
        return copied
    }

    /// `n` spaces (n ≥ 0): words of them where the row has room for a whole word past them.
    @inlinable @inline(__always)
    public mutating func spaces(_ n: Int) {
        precondition(n >= 0 && n <= capacity - written, "a row longer than the room made for it")
        if capacity - written >= n + 8 {
            var stored = 0
            while stored < n {
                UnsafeMutableRawPointer(base + written + stored).storeBytes(of: 0x2020_2020_2020_2020, as: UInt64.self)
                stored += 8
            }
        } else {
            (base + written).update(repeating: UInt8(ascii: " "), count: n)
        }
        written += n
    }

    /// Calls `body` with the bytes written since `mark` (a `count` read before).
    package func withBytes<R>(since mark: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        precondition(mark >= 0 && mark <= count)
        return body(UnsafeBufferPointer(start: base + mark, count: count - mark))
    }

    /// Takes back the last `n` bytes written.
    package mutating func removeLast(_ n: Int) {
        precondition(n >= 0 && n <= written)
        written -= n
    }

    /// `n` in decimal.
    @inlinable @inline(__always)
    public mutating func write(_ n: Int64) {
        // Most numbers in long outputs are counts and heart rates: one to three digits, written
        // without counting digits in a loop (five heavy years of minute buckets 134.0 -> 126.4 ms).
        guard n >= 0 && n < 1000 else { return writeLong(n) }
        writeBelowThousand(Int(n))
    }

    /// `v`, 0 ≤ `v` < 1000, in decimal.
    @inlinable @inline(__always)
    public mutating func writeBelowThousand(_ v: Int) {
        precondition(v >= 0 && v < 1000)
        if v < 10 { return byte(UInt8(truncatingIfNeeded: 48 &+ v)) }
        let (tens, ones) = v.quotientAndRemainder(dividingBy: 10)
        if v < 100 {
            let p = claim(2)
            (p[0], p[1]) = (UInt8(truncatingIfNeeded: 48 &+ tens), UInt8(truncatingIfNeeded: 48 &+ ones))
            return
        }
        let (hundreds, tensDigit) = tens.quotientAndRemainder(dividingBy: 10)
        let p = claim(3)
        p[0] = UInt8(truncatingIfNeeded: 48 &+ hundreds)
        (p[1], p[2]) = (UInt8(truncatingIfNeeded: 48 &+ tensDigit), UInt8(truncatingIfNeeded: 48 &+ ones))
    }

    @usableFromInline
    mutating func writeLong(_ n: Int64) {
        var magnitude = n.magnitude
        let digits = Self.digits(magnitude)
        let p = claim(digits + (n < 0 ? 1 : 0))
        var i = digits + (n < 0 ? 1 : 0)
        repeat {
            i -= 1
            p[i] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if n < 0 { p[0] = UInt8(ascii: "-") }
    }

    /// How many decimal digits `magnitude` has.
    private static func digits(_ magnitude: UInt64) -> Int {
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20 && magnitude >= bound {
            digits += 1
            bound = bound &* 10
        }
        return digits
    }
}
