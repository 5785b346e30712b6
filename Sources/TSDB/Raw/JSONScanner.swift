/// A validating, allocation-light JSON scanner over borrowed bytes (RFC 8259).
///
/// It checks the whole grammar: string escapes (including surrogate pairs), UTF-8 well-formedness,
/// control characters, number syntax and a nesting limit, and reports errors with the byte offset.
/// Callers drive it token by token; ``canonicalValue(into:)`` re-serialises any value canonically
/// (keys sorted, duplicates rejected, no insignificant white space, numbers kept as written).
struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    /// Deepest nesting accepted; deeper input is rejected instead of exhausting the stack.
    static let maxDepth = 64
    /// Longest string accepted (Formats/raw-json-v1.md §2): a sample's text never needs more,
    /// and one huge string must not become a huge dictionary entry.
    static let maxStringBytes = 1 << 20

    /// Unescaped bytes of the last string read when it contained escapes.
    var unescaped: [UInt8] = []
    /// Whether the last ``number()`` had an exponent (only those can overflow a Double).
    var lastNumberHadExponent = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    struct Failure: Error {
        var message: String
        var offset: Int
    }

    func fail(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(message: message, offset: offset ?? position)
    }

    @inline(__always) var atEnd: Bool { position >= bytes.count }

    @inline(__always) func peek() -> UInt8 { position < bytes.count ? bytes[position] : 0 }

    @inline(__always) mutating func skipWhitespace() {
        while position < bytes.count {
            let b = bytes[position]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { position += 1 } else { return }
        }
    }

    func describeFound() -> String {
        guard position < bytes.count else { return "end of input" }
        let b = bytes[position]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16, uppercase: true))"
    }

    mutating func expect(_ byte: UInt8, _ what: @autoclosure () -> String) throws(Failure) {
        if position < bytes.count && bytes[position] == byte {
            position += 1
            return
        }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else {
            throw fail("expected \(what()), found \(describeFound())")
        }
        position += 1
    }

    /// Consumes `byte` after white space if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        if position < bytes.count && bytes[position] == byte {
            position += 1
            return true
        }
        skipWhitespace()
        if position < bytes.count && bytes[position] == byte {
            position += 1
            return true
        }
        return false
    }

    // MARK: Strings

    /// A string's content: a slice of the input when it had no escapes, else ``unescaped``.
    struct StringToken {
        var start: Int
        var end: Int
        var hasEscapes: Bool
    }

    /// Reads a string (the opening quote must be next after white space).
    mutating func string(_ what: @autoclosure () -> String) throws(Failure) -> StringToken {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            throw fail("expected \(what()) as a string, found \(describeFound())")
        }
        position += 1
        let start = position
        skipPlainStringBytes()
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                guard position - 1 - start <= Self.maxStringBytes else {
                    throw fail(
                        "string of \(position - 1 - start) bytes is longer than the \(Self.maxStringBytes >> 20) "
                            + "MiB limit",
                        at: start - 1)
                }
                return StringToken(start: start, end: position - 1, hasEscapes: false)
            }
            if b == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if b < 0x20 { throw fail("control character 0x\(String(b, radix: 16)) inside a string (must be escaped)") }
            if b < 0x80 { position += 1 } else { try utf8Scalar() }
        }
        throw fail("unterminated string", at: start - 1)
    }

    /// Skips 8 bytes at a time while none is a quote, backslash, control or non-ASCII byte
    /// (SWAR: each test sets the high bit of the bytes that match).
    @inline(__always) mutating func skipPlainStringBytes() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while position + 8 <= bytes.count {
            let x = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            let quote = x ^ (ones &* 0x22)
            let backslash = x ^ (ones &* 0x5C)
            let special =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((x &- ones &* 0x20) & ~x) | x
            if special & highs != 0 { return }
            position += 8
        }
    }

    /// Validates one multi-byte UTF-8 sequence at `position` (Unicode Table 3-7).
    @inline(__always) mutating func utf8Scalar() throws(Failure) {
        let b0 = bytes[position]
        let n: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: n = 2
        case 0xE0:
            n = 3
            lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: n = 3
        case 0xED:
            n = 3
            hi = 0x9F
        case 0xF0:
            n = 4
            lo = 0x90
        case 0xF1...0xF3: n = 4
        case 0xF4:
            n = 4
            hi = 0x8F
        default: throw fail("invalid UTF-8 lead byte 0x\(String(b0, radix: 16, uppercase: true))")
        }
        guard position + n <= bytes.count else { throw fail("truncated UTF-8 sequence") }
        let b1 = bytes[position + 1]
        guard b1 >= lo && b1 <= hi else { throw fail("invalid UTF-8 continuation byte", at: position + 1) }
        for k in 2..<n where bytes[position + k] & 0xC0 != 0x80 {
            throw fail("invalid UTF-8 continuation byte", at: position + k)
        }
        position += n
    }

    private mutating func escapedString(from start: Int) throws(Failure) -> StringToken {
        unescaped.removeAll(keepingCapacity: true)
        unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                guard unescaped.count <= Self.maxStringBytes else {
                    throw fail(
                        "string of \(unescaped.count) bytes is longer than the \(Self.maxStringBytes >> 20) MiB limit",
                        at: start - 1)
                }
                return StringToken(start: start, end: position - 1, hasEscapes: true)
            }
            if b == UInt8(ascii: "\\") {
                let escapeAt = position
                position += 1
                guard position < bytes.count else { break }
                let e = bytes[position]
                position += 1
                switch e {
                case UInt8(ascii: "\""): unescaped.append(0x22)
                case UInt8(ascii: "\\"): unescaped.append(0x5C)
                case UInt8(ascii: "/"): unescaped.append(0x2F)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(at: escapeAt)
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else {
                            throw fail(
                                "high surrogate \\u\(String(scalar, radix: 16, uppercase: true)) not followed by a "
                                    + "low surrogate",
                                at: escapeAt)
                        }
                        position += 2
                        let low = try hex4(at: escapeAt)
                        guard low >= 0xDC00 && low <= 0xDFFF else {
                            throw fail(
                                "high surrogate followed by \\u\(String(low, radix: 16, uppercase: true)), not a "
                                    + "low surrogate",
                                at: escapeAt)
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        throw fail("lone low surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: escapeAt)
                    }
                    appendUTF8(scalar)
                default:
                    throw fail("invalid escape '\\\(Character(Unicode.Scalar(e)))'", at: escapeAt)
                }
                continue
            }
            if b < 0x20 { throw fail("control character 0x\(String(b, radix: 16)) inside a string (must be escaped)") }
            let from = position
            if b < 0x80 { position += 1 } else { try utf8Scalar() }
            unescaped.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from..<position]))
        }
        throw fail("unterminated string", at: start - 1)
    }

    private mutating func hex4(at escapeAt: Int) throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("truncated \\u escape", at: escapeAt) }
        var v: UInt32 = 0
        for k in 0..<4 {
            let c = bytes[position + k]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw fail("invalid hex digit in \\u escape", at: position + k)
            }
            v = v << 4 | UInt32(d)
        }
        position += 4
        return v
    }

    private mutating func appendUTF8(_ v: UInt32) {
        switch v {
        case ..<0x80: unescaped.append(UInt8(v))
        case ..<0x800:
            unescaped.append(UInt8(0xC0 | (v >> 6)))
            unescaped.append(UInt8(0x80 | (v & 0x3F)))
        case ..<0x10000:
            unescaped.append(UInt8(0xE0 | (v >> 12)))
            unescaped.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            unescaped.append(UInt8(0x80 | (v & 0x3F)))
        default:
            unescaped.append(UInt8(0xF0 | (v >> 18)))
            unescaped.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            unescaped.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            unescaped.append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    /// Calls `body` with the content bytes of `token`.
    @inline(__always)
    func withContent<R>(_ token: StringToken, _ body: (UnsafeRawBufferPointer) throws(Failure) -> R) throws(Failure)
        -> R
    {
        if token.hasEscapes {
            let result = unescaped.withUnsafeBytes { buffer in Result { () throws(Failure) -> R in try body(buffer) } }
            return try result.get()
        }
        return try body(UnsafeRawBufferPointer(rebasing: bytes[token.start..<token.end]))
    }

    func text(_ token: StringToken) -> String {
        if token.hasEscapes { return String(decoding: unescaped, as: UTF8.self) }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[token.start..<token.end]), as: UTF8.self)
    }

    // MARK: Numbers and literals

    /// Validates a number at `position` and returns its byte range.
    mutating func number() throws(Failure) -> Range<Int> {
        skipWhitespace()
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        let c = peek()
        if c == UInt8(ascii: "0") {
            position += 1
        } else if c >= UInt8(ascii: "1") && c <= UInt8(ascii: "9") {
            while isDigit(peek()) { position += 1 }
        } else {
            throw fail("expected a digit in number, found \(describeFound())")
        }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard isDigit(peek()) else {
                throw fail("expected a digit after the decimal point, found \(describeFound())")
            }
            while isDigit(peek()) { position += 1 }
        }
        lastNumberHadExponent = peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E")
        if lastNumberHadExponent {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard isDigit(peek()) else { throw fail("expected a digit in the exponent, found \(describeFound())") }
            while isDigit(peek()) { position += 1 }
        }
        return start..<position
    }

    @inline(__always) func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// Consumes `null` if it is next after white space.
    mutating func consumeNull() throws(Failure) -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        let p = word.utf8Start
        guard position + n <= bytes.count else { throw fail("truncated literal, expected '\(word)'") }
        for k in 0..<n where bytes[position + k] != p[k] {
            throw fail("invalid literal, expected '\(word)'")
        }
        position += n
    }

    // MARK: Whole values

    /// Skips any value, validating it.
    mutating func skipValue(depth: Int = 0) throws(Failure) {
        var sink: ByteWriter? = nil
        try value(into: &sink, depth: depth)
    }

    /// Re-serialises the next value canonically into `out`.
    mutating func canonicalValue(into out: inout ByteWriter, depth: Int = 0) throws(Failure) {
        var sink: ByteWriter? = out
        out = ByteWriter()
        try value(into: &sink, depth: depth)
        out = sink!
    }

    private mutating func value(into out: inout ByteWriter?, depth: Int) throws(Failure) {
        skipWhitespace()
        guard depth < Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth) levels") }
        switch peek() {
        case UInt8(ascii: "{"):
            position += 1
            var members: [(key: [UInt8], value: [UInt8], offset: Int)] = []
            if !consume(UInt8(ascii: "}")) {
                repeat {
                    skipWhitespace()
                    let keyOffset = position
                    let key = try string("object key")
                    try expect(UInt8(ascii: ":"), "':' after object key")
                    if out != nil {
                        let keyBytes = try withContent(key) { Array($0) }
                        var member: ByteWriter? = ByteWriter()
                        try value(into: &member, depth: depth + 1)
                        members.append((keyBytes, member!.bytes, keyOffset))
                    } else {
                        var none: ByteWriter? = nil
                        try value(into: &none, depth: depth + 1)
                    }
                } while consume(UInt8(ascii: ","))
                try expect(UInt8(ascii: "}"), "',' or '}' in object")
            }
            guard out != nil else { return }
            // Canonical order: keys by their UTF-8 bytes (= Unicode scalar order).
            members.sort { $0.key.lexicographicallyPrecedes($1.key) }
            out!.u8(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 {
                    if members[i - 1].key == m.key {
                        throw fail(
                            "duplicate object key \"\(String(decoding: m.key, as: UTF8.self))\"",
                            at: max(members[i - 1].offset, m.offset))
                    }
                    out!.u8(UInt8(ascii: ","))
                }
                Self.writeString(m.key, into: &out!)
                out!.u8(UInt8(ascii: ":"))
                out!.append(m.value)
            }
            out!.u8(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            position += 1
            out?.u8(UInt8(ascii: "["))
            if !consume(UInt8(ascii: "]")) {
                var first = true
                repeat {
                    if !first { out?.u8(UInt8(ascii: ",")) }
                    first = false
                    try value(into: &out, depth: depth + 1)
                } while consume(UInt8(ascii: ","))
                try expect(UInt8(ascii: "]"), "',' or ']' in array")
            }
            out?.u8(UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            let token = try string("string")
            if out != nil { try withContent(token) { Self.writeString($0, into: &out!) } }
        case UInt8(ascii: "t"):
            try literal("true")
            out?.append(Array("true".utf8))
        case UInt8(ascii: "f"):
            try literal("false")
            out?.append(Array("false".utf8))
        case UInt8(ascii: "n"):
            try literal("null")
            out?.append(Array("null".utf8))
        default:
            let range = try number()
            if lastNumberHadExponent || range.count >= 300 { try checkFinite(range) }
            out?.append(UnsafeRawBufferPointer(rebasing: bytes[range]))
        }
    }

    /// Rejects numbers that overflow a Double (e.g. `1e400`): they cannot be aggregated or kept exact.
    func checkFinite(_ range: Range<Int>) throws(Failure) {
        var hasExponent = false
        for i in range where bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { hasExponent = true }
        if !hasExponent && range.count < 300 { return }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else {
            throw fail("number \(text.prefix(40)) is out of range for a 64-bit float", at: range.lowerBound)
        }
    }

    /// The letter after `\` in JSON's two-character escapes (`"`, `\`, b, f, n, r, t).
    static func shortEscape(_ b: UInt8) -> UInt8 {
        switch b {
        case 0x08: UInt8(ascii: "b")
        case 0x0C: UInt8(ascii: "f")
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        default: b  // `"` and `\` escape as themselves
        }
    }

    /// Canonical string escaping: only `"`, `\` and control characters are escaped.
    static func writeString<S: Sequence>(_ content: S, into out: inout ByteWriter) where S.Element == UInt8 {
        out.u8(UInt8(ascii: "\""))
        for b in content {
            switch b {
            case 0x22, 0x5C, 0x08, 0x0C, 0x0A, 0x0D, 0x09:
                out.u8(0x5C)
                out.u8(shortEscape(b))
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(Array("\\u00".utf8))
                out.u8(hex[Int(b >> 4)])
                out.u8(hex[Int(b & 0xF)])
            default: out.u8(b)
            }
        }
        out.u8(UInt8(ascii: "\""))
    }

    /// 1-based line of a byte offset, computed only when an error is reported.
    func line(of offset: Int) -> Int {
        var line = 1
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A { line += 1 }
        return line
    }
}
