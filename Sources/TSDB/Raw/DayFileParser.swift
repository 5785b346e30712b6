#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The samples of one day file, with strings interned into a file-local table.
package struct ParsedDayFile {
    /// The file's `date` field (`YYYY-MM-DD`), if present.
    var date: String?
    var samples: [PackedSample] = []
    var strings = ByteInterner()
    /// Non-fatal findings (unknown keys that were ignored), with offsets.
    var warnings: [String] = []
    /// Raw metadata text → canonical id: most samples repeat a few metadata objects verbatim.
    var rawMetadata = ByteInterner()
    var rawMetadataCanonicalID: [Int32] = []
    /// ``ContentHash`` of the file's bytes and the UTC months its samples start in (set by the compactor).
    package var contentHash: UInt64 = 0
    var months: [MonthIndex] = []
    /// For a chunk of a streamed export: how far into its XML the reader is (bytes done, total).
    package var readProgress = (done: 0, total: 0)

    package init() {}

    /// An empty parse with room for as many samples and strings as `other` holds: a reader
    /// handing over chunk after chunk of about one size then grows no array from empty each time.
    package init(roomLike other: ParsedDayFile) {
        samples.reserveCapacity(other.samples.count)
        strings.reserveCapacity(count: other.strings.count, bytes: other.strings.arena.count)
    }

    /// Adds a sample read from another input (an Apple Health export), packing its strings.
    package mutating func add(_ sample: Sample) {
        samples.append(PackedSample(sample, strings: &strings))
    }

    package var sampleCount: Int { samples.count }

    /// Notes a non-fatal finding (compaction lists them with the file's path).
    package mutating func warn(_ finding: String) { warnings.append(finding) }

    /// String ids for ``add(_:_:_:type:unit:source:device:metadata:)``: the key was absent, or `null`.
    package static let absentText = PackedSample.absent
    package static let nullText = PackedSample.null

    /// The id of `bytes` (UTF-8) in this file's string table, for samples added to this file.
    package mutating func intern(_ bytes: UnsafeRawBufferPointer) -> Int32 { strings.intern(bytes) }
    package mutating func intern(_ string: String) -> Int32 { strings.intern(string) }

    /// Adds a sample whose strings are ids from ``intern(_:)``, ``absentText`` or ``nullText``: a
    /// reader that meets the same strings again and again interns each once, not once per sample.
    package mutating func add(
        _ start: Timestamp, _ end: Timestamp, _ value: SampleValue, type: Int32, unit: Int32, source: Int32,
        device: Int32, metadata: Int32
    ) {
        samples.append(
            PackedSample(
                start, end, value, type: type, unit: unit, source: source, device: device, metadata: metadata,
                strings: &strings))
    }

    /// Adds another parse's samples, re-numbering their strings into this one's table.
    package mutating func append(contentsOf other: ParsedDayFile) {
        var remap = [Int32](repeating: 0, count: other.strings.count)
        for id in 0..<other.strings.count {
            remap[id] = other.strings.withBytes(Int32(id)) { strings.intern($0) }
        }
        func map(_ id: Int32) -> Int32 { id >= 0 ? remap[Int(id)] : id }
        samples.reserveCapacity(samples.count + other.samples.count)
        for var p in other.samples {
            (p.type, p.unit, p.source, p.device, p.metadata) = (
                map(p.type), map(p.unit), map(p.source), map(p.device), map(p.metadata)
            )
            if p.valueTag == ValueTag.numberText { p.mantissa = Int64(remap[Int(p.mantissa)]) }
            samples.append(p)
        }
    }
}

/// Parses a day file (Formats/raw-json-v1.md) into packed samples.
///
/// Any violation throws ``TSDBError/Kind/invalidInput`` naming the byte offset and line; the
/// caller attributes it to the file and skips that file.
package enum DayFileParser {
    static func parse(_ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(TSDBError) -> ParsedDayFile {
        var scanner = JSONScanner(bytes)
        var result = ParsedDayFile()
        do {
            try parseTopLevel(&scanner, &result)
        } catch {
            throw TSDBError.invalidInput(
                error.message, path: path, offset: error.offset, line: scanner.line(of: error.offset))
        }
        return result
    }

    private static func parseTopLevel(_ s: inout JSONScanner, _ out: inout ParsedDayFile) throws(JSONScanner.Failure) {
        if s.bytes.isEmpty { throw s.fail("empty file, expected a JSON object") }
        if s.bytes.count >= 3 && s.bytes[0] == 0xEF && s.bytes[1] == 0xBB && s.bytes[2] == 0xBF {
            throw s.fail("file starts with a UTF-8 byte order mark; day files must be plain UTF-8 JSON", at: 0)
        }
        s.skipWhitespace()
        guard s.peek() == UInt8(ascii: "{") else {
            throw s.fail("expected the day file to be a JSON object, found \(s.describeFound())")
        }
        s.position += 1
        var seen = Set<String>()
        var sawSamples = false
        if !s.consume(UInt8(ascii: "}")) {
            repeat {
                s.skipWhitespace()
                let keyOffset = s.position
                let key = s.text(try s.string("object key"))
                guard seen.insert(key).inserted else {
                    throw s.fail("duplicate key \"\(key)\" in the day file", at: keyOffset)
                }
                try s.expect(UInt8(ascii: ":"), "':' after key")
                switch key {
                case "samples":
                    sawSamples = true
                    try parseSamples(&s, &out)
                case "date":
                    s.skipWhitespace()
                    let at = s.position
                    let token = try s.string("\"date\"")
                    let date = s.text(token)
                    guard isCalendarDate(date) else {
                        throw s.fail("\"date\" is \"\(date)\", expected an existing date YYYY-MM-DD", at: at)
                    }
                    out.date = date
                default:
                    try s.skipValue(depth: 1)
                }
            } while s.consume(UInt8(ascii: ","))
            try s.expect(UInt8(ascii: "}"), "',' or '}' after a top-level member")
        }
        s.skipWhitespace()
        guard s.atEnd else { throw s.fail("unexpected content after the top-level object") }
        guard sawSamples else { throw s.fail("the day file has no \"samples\" array", at: 0) }
    }

    package static func isCalendarDate(_ text: String) -> Bool { calendarDate(text) != nil }

    /// The date `text` names as `YYYY-MM-DD`, or nil. Read from its contiguous bytes where it has
    /// them (a listing of day files asks for every name; walking a substring's UTF-8 view took
    /// 640 instructions a name).
    package static func calendarDate(_ text: some StringProtocol) -> (year: Int, month: Int, day: Int)? {
        switch text.utf8.withContiguousStorageIfAvailable({ calendarDate(bytes: $0) }) {
        case .some(let parsed): return parsed
        case .none: return Array(text.utf8).withUnsafeBufferPointer { calendarDate(bytes: $0) }
        }
    }

    static func calendarDate(bytes: UnsafeBufferPointer<UInt8>) -> (year: Int, month: Int, day: Int)? {
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        // Every digit read, and one check of them all at the end: a check per digit through
        // optionals took ~230 instructions a date, this ~100 (callgrind; a compaction reads each
        // day file's date twice, from its listed name and from its manifest path).
        var notDigits: UInt8 = 0
        @inline(__always) func number(_ range: Range<Int>) -> Int {
            var n = 0
            for i in range {
                let digit = bytes[i] &- UInt8(ascii: "0")
                notDigits |= digit < 10 ? 0 : 1
                n = n &* 10 &+ Int(digit)
            }
            return n
        }
        let (y, m, d) = (number(0..<4), number(5..<7), number(8..<10))
        guard notDigits == 0, (1...12).contains(m), d >= 1, d <= ISO8601.daysInMonth(year: y, month: m) else {
            return nil
        }
        return (y, m, d)
    }

    private static func parseSamples(_ s: inout JSONScanner, _ out: inout ParsedDayFile) throws(JSONScanner.Failure) {
        s.skipWhitespace()
        guard s.peek() == UInt8(ascii: "[") else {
            throw s.fail("\"samples\" must be an array, found \(s.describeFound())")
        }
        s.position += 1
        if s.consume(UInt8(ascii: "]")) { return }
        // Room for a sample per 256 bytes left (the exporter writes about 290): grown by doubling,
        // the array was copied about ten times a file (the year's compaction took 33M instructions
        // more), and ended with up to twice the room.
        out.samples.reserveCapacity(out.samples.count + (s.bytes.count - s.position) / 256 + 1)
        var index = 0
        var metadataScratch = ByteWriter()
        var caches = FieldCaches()
        var templates = SampleTemplates()
        var matched = PackedSample(
            start: 0, end: 0, mantissa: 0, forms: 0, type: 0, unit: 0, source: 0, device: 0, metadata: 0, valueTag: 0)
        repeat {
            s.skipWhitespace()
            if templates.match(
                &s, metadata: out.rawMetadata, canonicalMetadata: out.rawMetadataCanonicalID, into: &matched)
            {
                out.samples.append(matched)
            } else {
                let warnings = out.warnings.count
                let k = templates.recording(at: s.position)
                try parseSample(
                    &s, &out, index: index, scratch: &metadataScratch, caches: &caches, template: &templates[k])
                templates[k].finish(
                    at: s.position, as: out.samples.last!, usable: out.warnings.count == warnings, in: s.bytes)
            }
            index += 1
        } while s.consume(UInt8(ascii: ","))
        try s.expect(UInt8(ascii: "]"), "',' or ']' after a sample")
    }

    private static let fieldType = 1 << 0, fieldStart = 1 << 1, fieldEnd = 1 << 2, fieldValue = 1 << 3
    private static let fieldUnit = 1 << 4, fieldSource = 1 << 5, fieldDevice = 1 << 6, fieldMetadata = 1 << 7

    /// The last string seen in each field: consecutive samples mostly repeat type, unit, source
    /// and device, and comparing bytes with the previous one is cheaper than hashing.
    struct FieldCaches {
        struct Entry { var start = 0, length = -1, id: Int32 = 0 }
        var type = Entry(), unit = Entry(), source = Entry(), device = Entry()
    }

    @inline(__always)
    private static func intern(
        _ t: JSONScanner.StringToken, _ s: JSONScanner, _ out: inout ParsedDayFile, _ cache: inout FieldCaches.Entry
    ) -> Int32 {
        if t.hasEscapes { return s.unescaped.withUnsafeBytes { out.strings.intern($0) } }
        let length = t.end - t.start
        let base = s.bytes.baseAddress!
        if length == cache.length && memcmp(base + cache.start, base + t.start, length) == 0 { return cache.id }
        let id = out.strings.intern(UnsafeRawBufferPointer(start: base + t.start, count: length))
        cache = FieldCaches.Entry(start: t.start, length: length, id: id)
        return id
    }

    private static func parseSample(
        _ s: inout JSONScanner, _ out: inout ParsedDayFile, index: Int, scratch: inout ByteWriter,
        caches: inout FieldCaches, template: inout SampleTemplate
    ) throws(JSONScanner.Failure) {
        s.skipWhitespace()
        let sampleOffset = s.position
        guard s.peek() == UInt8(ascii: "{") else {
            throw s.fail("samples[\(index)] must be an object, found \(s.describeFound())")
        }
        s.position += 1
        var seen = 0
        var sample = PackedSample(
            start: 0, end: 0, mantissa: 0, forms: 0, type: 0, unit: PackedSample.absent,
            source: PackedSample.absent, device: PackedSample.absent,
            metadata: PackedSample.absent, valueTag: ValueTag.absent)
        var startForm = TimeForm.zulu
        var endForm = TimeForm.zulu
        if !s.consume(UInt8(ascii: "}")) {
            repeat {
                s.skipWhitespace()
                let keyOffset = s.position
                let key = try s.string("key in samples[\(index)]")
                let field =
                    key.hasEscapes
                    ? s.unescaped.withUnsafeBytes { fieldBit($0) }
                    : fieldBit(UnsafeRawBufferPointer(rebasing: s.bytes[key.start..<key.end]))
                try s.expect(UInt8(ascii: ":"), "':' after key")
                if field != 0 {
                    guard seen & field == 0 else {
                        throw s.fail("duplicate key \"\(s.text(key))\" in samples[\(index)]", at: keyOffset)
                    }
                    seen |= field
                }
                s.skipWhitespace()
                let valueOffset = s.position
                switch field {
                case fieldType:
                    let t = try s.string("samples[\(index)].type")
                    guard t.end > t.start else { throw s.fail("samples[\(index)].type is empty", at: valueOffset) }
                    sample.type = intern(t, s, &out, &caches.type)
                case fieldStart, fieldEnd:
                    let name = field == fieldStart ? "start" : "end"
                    let t = try s.string("samples[\(index)].\(name)")
                    let stamp: Timestamp
                    do {
                        stamp = try s.withContent(t) { (b) throws(JSONScanner.Failure) -> Timestamp in
                            do throws(ISO8601.Failure) { return try ISO8601.parse(b) } catch {
                                throw JSONScanner.Failure(
                                    message:
                                        "samples[\(index)].\(name) "
                                        + "\"\(String(decoding: b, as: UTF8.self))\": \(error.message)",
                                    offset: valueOffset)
                            }
                        }
                    }
                    template.note(field == fieldStart ? .start : .end, from: valueOffset, to: s.position)
                    if field == fieldStart {
                        sample.start = stamp.microseconds
                        startForm = stamp.form
                    } else {
                        sample.end = stamp.microseconds
                        endForm = stamp.form
                    }
                case fieldValue:
                    if try s.consumeNull() {
                        sample.valueTag = ValueTag.null
                        break
                    }
                    let c = s.peek()
                    guard c == UInt8(ascii: "-") || s.isDigit(c) else {
                        throw s.fail("samples[\(index)].value must be a number or null, found \(s.describeFound())")
                    }
                    let range = try s.number()
                    if s.lastNumberHadExponent || range.count >= 300 { try s.checkFinite(range) }
                    template.note(.value, from: range.lowerBound, to: range.upperBound)
                    if let d = exactDecimal(UnsafeRawBufferPointer(rebasing: s.bytes[range])) {
                        sample.mantissa = d.mantissa
                        sample.valueTag = ValueTag.decimalBase + d.scale
                    } else {
                        sample.mantissa = Int64(out.strings.intern(UnsafeRawBufferPointer(rebasing: s.bytes[range])))
                        sample.valueTag = ValueTag.numberText
                    }
                case fieldUnit, fieldSource, fieldDevice:
                    let id: Int32
                    if try s.consumeNull() {
                        id = PackedSample.null
                    } else {
                        let name = field == fieldUnit ? "unit" : field == fieldSource ? "source" : "device"
                        let t = try s.string("samples[\(index)].\(name)")
                        id =
                            field == fieldUnit
                            ? intern(t, s, &out, &caches.unit)
                            : field == fieldSource
                                ? intern(t, s, &out, &caches.source) : intern(t, s, &out, &caches.device)
                    }
                    if field == fieldUnit {
                        sample.unit = id
                    } else if field == fieldSource {
                        sample.source = id
                    } else {
                        sample.device = id
                    }
                case fieldMetadata:
                    if try s.consumeNull() {
                        sample.metadata = PackedSample.null
                        break
                    }
                    guard s.peek() == UInt8(ascii: "{") else {
                        throw s.fail("samples[\(index)].metadata must be an object or null, found \(s.describeFound())")
                    }
                    let rawStart = s.position
                    try s.skipValue(depth: 2)
                    template.note(.metadata, from: rawStart, to: s.position)
                    let raw = UnsafeRawBufferPointer(rebasing: s.bytes[rawStart..<s.position])
                    if let seen = out.rawMetadata.lookup(raw) {
                        sample.metadata = out.rawMetadataCanonicalID[Int(seen)]
                    } else {
                        // First time this exact text appears: canonicalise it (this also rejects duplicate keys).
                        let resume = s.position
                        s.position = rawStart
                        scratch = ByteWriter()
                        try s.canonicalValue(into: &scratch, depth: 2)
                        s.position = resume
                        let id = scratch.bytes.withUnsafeBytes { out.strings.intern($0) }
                        _ = out.rawMetadata.intern(raw)
                        out.rawMetadataCanonicalID.append(id)
                        sample.metadata = id
                    }
                default:
                    out.warnings.append(
                        "samples[\(index)]: ignored unknown key \"\(s.text(key))\" at offset \(keyOffset)")
                    try s.skipValue(depth: 2)
                }
            } while s.consume(UInt8(ascii: ","))
            try s.expect(UInt8(ascii: "}"), "',' or '}' in samples[\(index)]")
        }
        for (bit, name) in [(fieldType, "type"), (fieldStart, "start"), (fieldEnd, "end")] where seen & bit == 0 {
            throw s.fail("samples[\(index)] has no \"\(name)\"", at: sampleOffset)
        }
        guard sample.end >= sample.start else {
            throw s.fail(
                "samples[\(index)] ends before it starts (end \(ISO8601.format(sample.end, endForm)) < "
                    + "start \(ISO8601.format(sample.start, startForm)))",
                at: sampleOffset)
        }
        sample.forms = TimeForm.pair(startForm, endForm)
        out.samples.append(sample)
    }

    /// The known sample keys, matched by length and one little-endian load (no memcmp).
    @inline(__always) private static func fieldBit(_ k: UnsafeRawBufferPointer) -> Int {
        @inline(__always) func word(_ n: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<n { v |= UInt64(k[i]) << (8 * UInt64(i)) }
            return v
        }
        @inline(__always) func lit(_ s: StaticString) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<s.utf8CodeUnitCount { v |= UInt64(s.utf8Start[i]) << (8 * UInt64(i)) }
            return v
        }
        switch k.count {
        case 3: return word(3) == lit("end") ? fieldEnd : 0
        case 4:
            let w = word(4)
            return w == lit("type") ? fieldType : w == lit("unit") ? fieldUnit : 0
        case 5:
            let w = word(5)
            return w == lit("start") ? fieldStart : w == lit("value") ? fieldValue : 0
        case 6:
            let w = word(6)
            return w == lit("source") ? fieldSource : w == lit("device") ? fieldDevice : 0
        case 8: return k.loadUnaligned(as: UInt64.self) == lit("metadata") ? fieldMetadata : 0
        default: return 0
        }
    }

    /// A JSON number as an exact short decimal, or nil when it needs the text fallback
    /// (exponent, more than 18 significant digits or fraction digits, negative zero).
    package static func exactDecimal(_ t: UnsafeRawBufferPointer) -> ExactDecimal? {
        var i = 0
        let negative = t[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        var mantissa: Int64 = 0
        var digits = 0
        var scale = 0
        var inFraction = false
        while i < t.count {
            let b = t[i]
            if b == UInt8(ascii: ".") {
                inFraction = true
                i += 1
                continue
            }
            guard b >= 48 && b <= 57 else { return nil }
            if digits > 0 || b != 48 { digits += 1 }
            guard digits <= 18 else { return nil }
            mantissa = mantissa * 10 + Int64(b - 48)
            if inFraction { scale += 1 }
            i += 1
        }
        guard scale <= Int(ValueTag.maxScale) else { return nil }
        if negative && mantissa == 0 { return nil }
        return ExactDecimal(mantissa: negative ? -mantissa : mantissa, scale: UInt8(scale))
    }
}
