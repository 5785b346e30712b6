import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A streaming scanner for Apple Health's `export.xml`, fed in chunks of any size.
///
/// Purpose-built rather than a general XML parser, because real exports are not valid XML:
/// iOS 16 writes an internal DTD whose `ATTLIST` is never closed (skipped here as a whole, up to
/// `]>`), attribute values carry control characters such as `\x0b` (kept as they are), and
/// values may hold a raw `>` (tags are scanned quote-aware). Text between elements is ignored:
/// the export keeps everything in attributes. Entities in values are decoded.
struct HealthXMLScanner {
    enum Kind { case start, end, empty }

    /// One tag, read lazily: names and values are decoded only when asked for. A view of the
    /// scanner's buffer, valid only during the handler call it is passed to.
    struct Element {
        var kind: Kind
        /// The tag's bytes, from `<` to `>`.
        let bytes: UnsafeRawBufferPointer
        let nameRange: Range<Int>
        /// Name and value ranges of each attribute, in `bytes`.
        let ranges: UnsafeBufferPointer<(name: Range<Int>, value: Range<Int>)>
        /// 1-based line and byte offset of the element's `<` in the XML.
        var line: Int
        var offset: Int

        /// Short names are Swift small strings: no allocation.
        var name: String { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[nameRange]), as: UTF8.self) }

        func isNamed(_ n: StaticString) -> Bool { equal(nameRange, n) }

        /// The decoded value of attribute `key`, if present.
        func attribute(_ key: StaticString) -> String? {
            guard let r = ranges.first(where: { equal($0.name, key) }) else { return nil }
            return HealthXMLScanner.decode(UnsafeRawBufferPointer(rebasing: bytes[r.value]))
        }

        /// The raw bytes of attribute `key`'s value (entities not decoded), if present.
        func rawAttribute(_ key: StaticString) -> UnsafeRawBufferPointer? {
            ranges.first { equal($0.name, key) }.map { UnsafeRawBufferPointer(rebasing: bytes[$0.value]) }
        }

        var attributes: [(name: String, value: String)] {
            ranges.map {
                (
                    String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0.name]), as: UTF8.self),
                    HealthXMLScanner.decode(UnsafeRawBufferPointer(rebasing: bytes[$0.value]))
                )
            }
        }

        private func equal(_ r: Range<Int>, _ s: StaticString) -> Bool {
            r.count == s.utf8CodeUnitCount && memcmp(bytes.baseAddress! + r.lowerBound, s.utf8Start, r.count) == 0
        }
    }

    let source: String
    /// Markup cut by a chunk boundary, kept for the next chunk.
    private var pending: [UInt8] = []
    /// Byte offset (in the XML) and line of `pending`'s first byte.
    private var offset = 0
    private var line = 1
    private(set) var bytesScanned = 0
    /// Attribute ranges of the current tag, reused from tag to tag.
    private var ranges: [(name: Range<Int>, value: Range<Int>)] = []
    #if TSDB_TESTING
        /// Off, every tag is read in two passes (``tagEnd(_:from:)``, ``element(_:_:)``): the
        /// oracle the one-pass reading is tested against.
        var readsInOnePass = true
    #else
        var readsInOnePass: Bool { true }
    #endif

    init(source: String) { self.source = source }

    func fail(_ what: String, line: Int, offset: Int) -> TSDBError {
        .invalidInput("\(what) (line \(line))", path: source, offset: offset, line: line)
    }

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ handle: (Element) throws(TSDBError) -> Void)
        throws(TSDBError)
    {
        bytesScanned += chunk.count
        if pending.isEmpty {
            let used = try scan(chunk, final: false, handle)
            pending = Array(chunk[used...])
        } else {
            var joined = pending
            joined.append(contentsOf: chunk)
            let used = try joined.withUnsafeBytes { b in
                Result { () throws(TSDBError) in try scan(b, final: false, handle) }
            }.get()
            pending = Array(joined[used...])
        }
    }

    /// At the end of the input: anything left is markup that was never closed.
    mutating func finish(_ handle: (Element) throws(TSDBError) -> Void) throws(TSDBError) {
        let rest = pending
        let used = try rest.withUnsafeBytes { b in Result { () throws(TSDBError) in try scan(b, final: true, handle) } }
            .get()
        if used < rest.count, rest[used...].contains(where: { $0 > 0x20 }) {
            throw fail("the XML ends inside markup (truncated export?)", line: line, offset: offset)
        }
        pending = []
    }

    /// Handles every complete piece of markup in `b`; returns how many bytes were used.
    private mutating func scan(
        _ b: UnsafeRawBufferPointer, final: Bool, _ handle: (Element) throws(TSDBError) -> Void
    ) throws(TSDBError) -> Int {
        var i = 0
        var used = 0
        let n = b.count
        func advance(to j: Int) {
            var k = used
            while let newline = Self.index(of: 0x0A, in: b, from: k, to: j) {
                line += 1
                k = newline + 1
            }
            offset += j - used
            used = j
        }
        func find(_ pattern: [UInt8], from start: Int) -> Int? {
            var k = start
            while k + pattern.count <= n {
                if b[k] == pattern[0] && (1..<pattern.count).allSatisfy({ b[k + $0] == pattern[$0] }) { return k }
                k += 1
            }
            return nil
        }
        while i < n {
            guard let lt = Self.index(of: 0x3C, in: b, from: i, to: n) else {
                advance(to: n)
                return n
            }
            advance(to: lt)
            guard lt + 1 < n else { return used }
            let next = b[lt + 1]
            var close: Int?
            if next == 0x21 {  // <!
                if lt + 3 < n && b[lt + 2] == 0x2D && b[lt + 3] == 0x2D {
                    close = find(Array("-->".utf8), from: lt + 4).map { $0 + 3 }
                } else if lt + 9 <= n && Array(b[lt + 2..<lt + 9]) == Array("DOCTYPE".utf8) {
                    // The internal subset runs to `]>` (iOS 16's unclosed ATTLIST included).
                    let bracket = (lt..<n).first { b[$0] == 0x5B || b[$0] == 0x3E }
                    if let bracket, b[bracket] == 0x5B {
                        close = find(Array("]>".utf8), from: bracket).map { $0 + 2 }
                    } else if let bracket {
                        close = bracket + 1
                    }
                } else if lt + 9 <= n && Array(b[lt + 2..<lt + 9]) == Array("[CDATA[".utf8) {
                    close = find(Array("]]>".utf8), from: lt + 9).map { $0 + 3 }
                } else if lt + 9 > n && !final {
                    return used
                } else {
                    close = (lt..<n).first { b[$0] == 0x3E }.map { $0 + 1 }
                }
            } else if next == 0x3F {  // <? … ?>
                close = find(Array("?>".utf8), from: lt + 2).map { $0 + 2 }
            } else if readsInOnePass, let tag = wellFormedTag(b, at: lt) {
                try ranges.withUnsafeBufferPointer { (r) throws(TSDBError) in
                    let bytes = UnsafeRawBufferPointer(rebasing: b[lt...tag.end])
                    try handle(
                        Element(
                            kind: tag.kind, bytes: bytes, nameRange: tag.name, ranges: r, line: line, offset: offset))
                }
                close = tag.end + 1
            } else {
                guard let end = tagEnd(b, from: lt + 1) else { return used }
                try element(UnsafeRawBufferPointer(rebasing: b[lt...end]), handle)
                close = end + 1
            }
            guard let close else { return used }
            advance(to: close)
            i = close
        }
        return used
    }

    /// A tag as Health writes it, read in one pass: `<name`, then `key="value"` pairs (either quote),
    /// then `>` or `/>`; or `</name>`. Its attributes go to ``ranges``; ranges count from `lt`.
    /// Nil for anything else, malformed or cut off by the end of `b`: ``tagEnd(_:from:)`` and
    /// ``element(_:_:)`` read those, as they read every tag before (two passes over each tag's
    /// bytes, the second a byte at a time, were half of this thread's instructions).
    private mutating func wellFormedTag(_ b: UnsafeRawBufferPointer, at lt: Int) -> (
        end: Int, kind: Kind, name: Range<Int>
    )? {
        let n = b.count
        var k = lt + 1
        var kind = Kind.start
        if k < n && b[k] == 0x2F {
            kind = .end
            k += 1
        }
        let nameStart = k
        k = Self.nameEnd(b, from: k)
        guard k > nameStart else { return nil }
        let name = nameStart - lt..<k - lt
        ranges.removeAll(keepingCapacity: true)
        while true {
            while k < n && Self.isSpace(b[k]) { k += 1 }
            guard k < n else { return nil }
            if b[k] == 0x3E { return (k, kind, name) }
            if b[k] == 0x2F {
                guard kind == .start, k + 1 < n, b[k + 1] == 0x3E else { return nil }
                return (k + 1, .empty, name)
            }
            let keyStart = k
            k = Self.nameEnd(b, from: k)
            guard k > keyStart, k + 1 < n, b[k] == 0x3D, b[k + 1] == 0x22 || b[k + 1] == 0x27,
                let close = Self.index(of: b[k + 1], in: b, from: k + 2, to: n)
            else { return nil }
            ranges.append((keyStart - lt..<k - lt, k + 2 - lt..<close - lt))
            k = close + 1
        }
    }

    @inline(__always) static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    /// The index of the first byte from `k` that ends a name (``endsName(_:)``), or `b.count`.
    /// Eight bytes a step: every such byte has bit 6 clear and no letter has, so only digits,
    /// punctuation and bytes beyond ASCII are looked at one by one (a name a byte at a time was
    /// ~5 instructions a byte, and a record's name and attribute names are ~75 bytes).
    @inline(__always) static func nameEnd(_ b: UnsafeRawBufferPointer, from start: Int) -> Int {
        var k = start
        while k + 8 <= b.count {
            var candidates = ~b.loadUnaligned(fromByteOffset: k, as: UInt64.self) & 0x4040_4040_4040_4040
            while candidates != 0 {
                let j = k + candidates.trailingZeroBitCount / 8
                if endsName(b[j]) { return j }
                candidates &= candidates &- 1
            }
            k += 8
        }
        while k < b.count && !endsName(b[k]) { k += 1 }
        return k
    }

    /// Whether `c` ends a name in ``wellFormedTag(_:at:)``: a space, `=`, `>`, `/` or a quote.
    @inline(__always) static func endsName(_ c: UInt8) -> Bool {
        c <= 0x3E && (isSpace(c) || c == 0x3D || c == 0x3E || c == 0x2F || c == 0x22 || c == 0x27)
    }

    /// The index of the `>` closing a tag that starts before `from`, skipping quoted values.
    private func tagEnd(_ b: UnsafeRawBufferPointer, from: Int) -> Int? {
        var k = from
        while k < b.count {
            let c = b[k]
            if c == 0x22 || c == 0x27 {
                // Most of a record's bytes are its quoted values: memchr steps over them.
                guard let close = Self.index(of: c, in: b, from: k + 1, to: b.count) else { return nil }
                k = close
            } else if c == 0x3E {
                return k
            }
            k += 1
        }
        return nil
    }

    /// The first index in `from..<to` holding `byte`.
    @inline(__always)
    static func index(of byte: UInt8, in b: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        guard from < to, let found = memchr(b.baseAddress! + from, Int32(byte), to - from) else { return nil }
        return b.baseAddress!.distance(to: UnsafeRawPointer(found))
    }

    /// Parses `<name a="v" …>`, `<name … />` or `</name>` and hands it to `handle`.
    private mutating func element(_ t: UnsafeRawBufferPointer, _ handle: (Element) throws(TSDBError) -> Void)
        throws(TSDBError)
    {
        let (line, offset) = (self.line, self.offset)
        func bad(_ what: String) -> TSDBError { fail(what, line: line, offset: offset) }
        func text(_ r: Range<Int>) -> String { String(decoding: UnsafeRawBufferPointer(rebasing: t[r]), as: UTF8.self) }
        var k = 1
        var kind = Kind.start
        if t[1] == 0x2F {  // </
            kind = .end
            k = 2
        }
        var last = t.count - 2  // before '>'
        if kind == .start && last > 0 && t[last] == 0x2F {
            kind = .empty
            last -= 1
        }
        let nameStart = k
        while k <= last && !Self.isSpace(t[k]) { k += 1 }
        guard k > nameStart else { throw bad("a tag without a name") }
        let nameRange = nameStart..<k
        ranges.removeAll(keepingCapacity: true)
        while true {
            while k <= last && Self.isSpace(t[k]) { k += 1 }
            if k > last { break }
            let keyStart = k
            while k <= last && t[k] != 0x3D && !Self.isSpace(t[k]) { k += 1 }
            let key = keyStart..<k
            while k <= last && Self.isSpace(t[k]) { k += 1 }
            guard k <= last, t[k] == 0x3D else {
                throw bad("attribute \(text(key)) of <\(text(nameRange))> has no value")
            }
            k += 1
            while k <= last && Self.isSpace(t[k]) { k += 1 }
            guard k <= last, t[k] == 0x22 || t[k] == 0x27 else {
                throw bad("attribute \(text(key)) of <\(text(nameRange))>: expected a quoted value")
            }
            let quote = t[k]
            let valueStart = k + 1
            k = valueStart
            while k <= last && t[k] != quote { k += 1 }
            guard k <= last else {
                throw bad("attribute \(text(key)) of <\(text(nameRange))>: the value is not closed")
            }
            ranges.append((key, valueStart..<k))
            k += 1
        }
        try ranges.withUnsafeBufferPointer { (r) throws(TSDBError) in
            try handle(Element(kind: kind, bytes: t, nameRange: nameRange, ranges: r, line: line, offset: offset))
        }
    }

    /// An attribute value with `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and `&#…;` decoded;
    /// an unknown entity is kept as written.
    static func decode(_ v: UnsafeRawBufferPointer) -> String {
        guard v.contains(0x26) else { return String(decoding: v, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(v.count)
        decode(v, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``decode(_:)``'s bytes, appended to `out` (invalid UTF-8 is left as it is).
    static func decode(_ v: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        guard index(of: 0x26, in: v, from: 0, to: v.count) != nil else {  // memchr: most values have no entity
            out.append(contentsOf: v)
            return
        }
        var k = 0
        while k < v.count {
            guard v[k] == 0x26, let semi = (k + 1..<min(v.count, k + 12)).first(where: { v[$0] == 0x3B }) else {
                out.append(v[k])
                k += 1
                continue
            }
            let entity = String(decoding: UnsafeRawBufferPointer(rebasing: v[k + 1..<semi]), as: UTF8.self)
            var scalar: Unicode.Scalar?
            switch entity {  // a switch, not a dictionary: devices carry four entities per record
            case "amp": scalar = "&"
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init)
                }
            }
            if let scalar {
                UTF8.encode(scalar) { out.append($0) }
                k = semi + 1
            } else {
                out.append(v[k])
                k += 1
            }
        }
    }
}
