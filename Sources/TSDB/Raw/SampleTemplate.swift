#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sample already parsed, kept as a template for the next ones: one exporter writes every
/// sample of a type with the same bytes but for its times, value and metadata, so a sample that
/// repeats the template's other bytes exactly is read by comparing them and parsing only those
/// four. Those bytes were validated in the same place of the same file, and mean the same.
///
/// Anything unexpected (other keys or spacing, escapes, a number kept as text, metadata not seen
/// before in this file, an end before the start) gives no sample, and the caller parses in full
/// with its error messages.
struct SampleTemplate {
    enum Field: UInt8 { case start, end, value, metadata }

    /// Literal bytes of the template (offsets into the file), each followed by a field.
    private struct Piece {
        var literal = 0
        var length = 0
        var field = Field.start
    }
    /// At most one piece per field (a sample's keys are unique), held inline so that a template
    /// is plain bytes: nothing to count references of when it is read per sample.
    private var pieces = (Piece(), Piece(), Piece(), Piece())
    private var pieceCount = 0
    /// The fields noted, one bit per ``Field`` raw value.
    private var fields: UInt8 = 0

    /// The literal after the last field, through the sample's closing brace.
    private var tail = (literal: 0, length: 0)
    /// The template's sample: type, unit, source and device ids, and a `null` value or metadata.
    private var sample = PackedSample(
        start: 0, end: 0, mantissa: 0, forms: 0, type: 0, unit: 0, source: 0, device: 0, metadata: 0, valueTag: 0)
    private var isSet = false
    private var recordedUpTo = 0
    /// Two 8-byte words of the first literal, where the sample's type is, and their offsets in it:
    /// compared before anything else, since most samples are tried against other types' templates
    /// first (3.8 tries a sample on the year, at ~200 instructions each before this).
    private var probe = (at: (0, 0), words: (UInt64(0), UInt64(0)))
    private var hasProbe = false

    @inline(__always) private static func piece(_ k: Int, of t: UnsafePointer<SampleTemplate>) -> Piece {
        switch k {
        case 0: t.pointee.pieces.0
        case 1: t.pointee.pieces.1
        case 2: t.pointee.pieces.2
        default: t.pointee.pieces.3
        }
    }

    // MARK: Recording (while a sample is parsed in full)

    /// A sample starts at `offset`; fields are noted in order of appearance until ``finish``.
    mutating func begin(at offset: Int) {
        (pieceCount, fields, isSet, recordedUpTo) = (0, 0, false, offset)
    }

    /// The sample's `field` value occupies bytes `from ..< to` (a string with its quotes).
    mutating func note(_ field: Field, from: Int, to: Int) {
        let piece = Piece(literal: recordedUpTo, length: from - recordedUpTo, field: field)
        switch pieceCount {
        case 0: pieces.0 = piece
        case 1: pieces.1 = piece
        case 2: pieces.2 = piece
        case 3: pieces.3 = piece
        default: fields |= 0x80  // cannot happen: more than four fields, so no template
        }
        pieceCount += 1
        fields |= 1 << field.rawValue
        recordedUpTo = to
    }

    /// The sample ended at `offset` (after its closing brace) and was parsed as `sample`; `usable`
    /// is false when parsing it said more than the sample (a warning), which a match would not repeat.
    mutating func finish(at offset: Int, as sample: PackedSample, usable: Bool, in bytes: UnsafeRawBufferPointer) {
        tail = (recordedUpTo, offset - recordedUpTo)
        self.sample = sample
        let times: UInt8 = 1 << Field.start.rawValue | 1 << Field.end.rawValue
        isSet = usable && fields & times == times && fields & 0x80 == 0
        // `{"type":"HKQuantityTypeIdentifier` is 33 bytes: the words after it and at the literal's end.
        let first = pieceCount > 0 ? pieces.0 : Piece(literal: tail.literal, length: tail.length)
        hasProbe = first.length >= 8
        guard hasProbe else { return }
        probe.at = (Swift.min(first.length, 41) - 8, Swift.max(first.length - 16, 0))
        probe.words = (word(bytes, first.literal + probe.at.0), word(bytes, first.literal + probe.at.1))
    }

    // MARK: Matching

    /// Whether the sample at the scanner's position matches template `t`: then it is in `out` and
    /// the scanner past it; else `out` holds anything and the scanner is where it was. Static, on a
    /// pointer into the templates, and into `out`: a method call copied the 192-byte template to
    /// the stack first (memory others can reach might change under a borrow; 52M instructions of
    /// memcpy in the year's compaction), and a returned sample was copied at each return (written
    /// in place, the compaction took 2.02G -> 1.91G instructions).
    static func match(
        _ t: UnsafePointer<SampleTemplate>, _ s: inout JSONScanner, _ recent: inout RecentValues,
        metadata: ByteInterner, canonicalMetadata: [Int32], into out: inout PackedSample
    ) -> Bool {
        guard t.pointee.isSet else { return false }
        let begin = s.position
        if t.pointee.hasProbe {
            let (at, words) = t.pointee.probe
            guard begin + Swift.max(at.0, at.1) + 8 <= s.bytes.count, word(s.bytes, begin + at.0) == words.0,
                word(s.bytes, begin + at.1) == words.1
            else { return false }
        }
        if read(t, &s, &recent, metadata: metadata, canonicalMetadata: canonicalMetadata, into: &out) { return true }
        s.position = begin
        return false
    }

    private static func read(
        _ t: UnsafePointer<SampleTemplate>, _ s: inout JSONScanner, _ recent: inout RecentValues,
        metadata: ByteInterner, canonicalMetadata: [Int32], into out: inout PackedSample
    ) -> Bool {
        let bytes = s.bytes
        var q = s.position
        out = t.pointee.sample
        var startForm = TimeForm.zulu
        var endForm = TimeForm.zulu
        for k in 0..<t.pointee.pieceCount {
            let piece = piece(k, of: t)
            guard same(bytes, at: q, as: piece.literal, piece.length) else { return false }
            q += piece.length
            switch piece.field {
            case .start, .end:
                guard let (stamp, next) = Self.timestamp(bytes, at: q, &recent.times) else { return false }
                if piece.field == .start {
                    (out.start, startForm) = (stamp.microseconds, stamp.form)
                } else {
                    (out.end, endForm) = (stamp.microseconds, stamp.form)
                }
                q = next
            case .value:
                if let (mantissa, scale, end) = Self.shortDecimal(bytes, at: q) {
                    (out.mantissa, out.valueTag, q) = (mantissa, ValueTag.decimalBase + scale, end)
                    continue
                }
                s.position = q
                guard let range = try? s.number(), !s.lastNumberHadExponent,
                    let d = DayFileParser.exactDecimal(UnsafeRawBufferPointer(rebasing: bytes[range]))
                else { return false }
                (out.mantissa, out.valueTag) = (d.mantissa, ValueTag.decimalBase + d.scale)
                q = s.position
            case .metadata:
                if let (id, length) = recent.metadata(bytes, at: q) {
                    (out.metadata, q) = (id, q + length)
                    continue
                }
                guard q < bytes.count, bytes[q] == UInt8(ascii: "{") else { return false }
                s.position = q
                guard (try? s.skipValue(depth: 2)) != nil,
                    let id = metadata.lookup(UnsafeRawBufferPointer(rebasing: bytes[q..<s.position]))
                else { return false }
                out.metadata = canonicalMetadata[Int(id)]
                recent.remember(metadata: canonicalMetadata[Int(id)], at: q, length: s.position - q)
                q = s.position
            }
        }
        let tail = t.pointee.tail
        guard same(bytes, at: q, as: tail.literal, tail.length), out.end >= out.start else { return false }
        s.position = q + tail.length
        out.forms = TimeForm.pair(startForm, endForm)
        return true
    }

    /// The number at `q` when it is short and plain, `-?(0|[1-9][0-9]*)(\\.[0-9]+)?` with at most 15
    /// digits and a byte other than a digit, point or exponent after it, as the mantissa and scale
    /// ``DayFileParser/exactDecimal(_:)`` makes of it, and the offset after it; nil for anything
    /// else (then the scanner reads it). Through the scanner, a heart rate's two digits were read
    /// twice and a failure thrown to be discarded was possible on each (callgrind: 58M
    /// instructions of the year's compaction in `JSONScanner.number` alone).
    @inline(__always)
    static func shortDecimal(_ bytes: UnsafeRawBufferPointer, at q: Int) -> (Int64, UInt8, Int)? {
        let n = bytes.count
        var i = q
        let negative = i < n && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        @inline(__always) func digit(_ k: Int) -> Int64? {
            guard k < n else { return nil }
            let d = bytes[k] &- UInt8(ascii: "0")
            return d < 10 ? Int64(d) : nil
        }
        guard let first = digit(i) else { return nil }
        var mantissa = first
        let digitsStart = i
        i += 1
        if first != 0 {
            while let d = digit(i) {
                mantissa = mantissa &* 10 &+ d
                i += 1
            }
        }
        var scale = 0
        if i < n && bytes[i] == UInt8(ascii: ".") {
            i += 1
            while let d = digit(i) {
                mantissa = mantissa &* 10 &+ d
                scale += 1
                i += 1
            }
            guard scale > 0 else { return nil }
        }
        let digits = i - digitsStart - (scale > 0 ? 1 : 0)
        guard digits <= 15, scale <= Int(ValueTag.maxScale), i < n, !(negative && mantissa == 0) else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default: return (negative ? -mantissa : mantissa, UInt8(scale), i)
        }
    }

    /// A quoted timestamp of printable ASCII without escapes at `q`, and the offset after it.
    private static func timestamp(
        _ bytes: UnsafeRawBufferPointer, at q: Int, _ times: inout RecentTimestamps
    ) -> (Timestamp, Int)? {
        guard q < bytes.count, bytes[q] == UInt8(ascii: "\"") else { return nil }
        if let (stamp, length) = times.quick(bytes, at: q + 1) { return (stamp, q + length + 2) }
        var r = q + 1
        while r < bytes.count && bytes[r] != UInt8(ascii: "\"") {
            guard bytes[r] >= 0x20 && bytes[r] < 0x7F && bytes[r] != UInt8(ascii: "\\") else { return nil }
            r += 1
        }
        guard r < bytes.count, let stamp = try? times.parse(UnsafeRawBufferPointer(rebasing: bytes[q + 1..<r]))
        else { return nil }
        return (stamp, r + 1)
    }
}

/// What the samples just read had, for the next: the date and zone of their timestamps, and
/// their last few metadata objects (a watch's heart rate moves between three motion contexts).
struct RecentValues {
    var times = RecentTimestamps()
    /// Metadata texts already read in this file (offset, length) and their canonical ids.
    private var texts = ((0, 0, Int32(0)), (0, 0, Int32(0)), (0, 0, Int32(0)), (0, 0, Int32(0)))
    private var count = 0

    /// The canonical id and length of a metadata text at `q` equal to one already read: a
    /// complete object, so the same bytes are the same object and end where it ended.
    @inline(__always)
    func metadata(_ bytes: UnsafeRawBufferPointer, at q: Int) -> (Int32, Int)? {
        for k in 0..<min(count, 4) {
            let (offset, length, id) =
                switch k {
                case 0: texts.0
                case 1: texts.1
                case 2: texts.2
                default: texts.3
                }
            if same(bytes, at: q, as: offset, length) {
                return (id, length)
            }
        }
        return nil
    }

    /// Remembers a metadata text read at `offset`, in place of the oldest.
    mutating func remember(metadata id: Int32, at offset: Int, length: Int) {
        let entry = (offset, length, id)
        switch count % 4 {
        case 0: texts.0 = entry
        case 1: texts.1 = entry
        case 2: texts.2 = entry
        default: texts.3 = entry
        }
        count += 1
    }
}

/// The templates of the last few kinds of sample (types interleave in a day file: heart rate
/// between sleep stages and energy), the last one matched tried first.
struct SampleTemplates {
    private var templates: [SampleTemplate] = []
    private var lastMatched = 0
    /// For each template, the one that matched right after it last time (-1: none yet), tried
    /// second: a day file's kinds of sample follow each other in the same order day after day.
    private var follower = [Int](repeating: -1, count: capacity)
    private var oldest = 0
    private var recent = RecentValues()
    /// The year's day files interleave about a dozen kinds of sample: with 6 templates 59,030 of
    /// its 481,640 samples were parsed in full, with 16 7,843 (9% fewer instructions compacting it).
    static let capacity = 16

    /// Whether a template matches the sample at the scanner's position (see ``SampleTemplate``):
    /// then the sample is in `out`.
    mutating func match(
        _ s: inout JSONScanner, metadata: ByteInterner, canonicalMetadata: [Int32], into out: inout PackedSample
    ) -> Bool {
        guard !templates.isEmpty else { return false }
        let first = lastMatched
        let second = follower[first]
        // The array is read through a second reference so that `recent` is updated where it lies
        // (copied in and out, it was two memcpy calls a sample).
        let all = templates
        let found = all.withUnsafeBufferPointer { all -> Int? in
            let base = all.baseAddress!
            func matches(_ k: Int) -> Bool {
                SampleTemplate.match(
                    base + k, &s, &recent, metadata: metadata, canonicalMetadata: canonicalMetadata, into: &out)
            }
            if matches(first) { return first }
            if second >= 0 && second != first && matches(second) { return second }
            for k in all.indices where k != first && k != second {
                if matches(k) { return k }
            }
            return nil
        }
        guard let found else { return false }
        if found != first { follower[first] = found }
        lastMatched = found
        return true
    }

    /// The template to record the next sample into: a new one, or the oldest recorded.
    mutating func recording(at offset: Int) -> Int {
        let k: Int
        if templates.count < Self.capacity {
            templates.append(SampleTemplate())
            k = templates.count - 1
        } else {
            k = oldest
            oldest = (oldest + 1) % Self.capacity
        }
        templates[k].begin(at: offset)
        follower[k] = -1
        follower[lastMatched] = k
        lastMatched = k
        return k
    }

    subscript(k: Int) -> SampleTemplate {
        get { templates[k] }
        _modify { yield &templates[k] }
    }
}

/// The 8 bytes at `q` (which must be readable) as one word.
@inline(__always)
private func word(_ bytes: UnsafeRawBufferPointer, _ q: Int) -> UInt64 {
    bytes.baseAddress!.loadUnaligned(fromByteOffset: q, as: UInt64.self)
}

/// Whether the `length` bytes at `q` equal those at `earlier` (both offsets into `bytes`).
@inline(__always)
private func same(_ bytes: UnsafeRawBufferPointer, at q: Int, as earlier: Int, _ length: Int) -> Bool {
    q + length <= bytes.count && memcmp(bytes.baseAddress! + q, bytes.baseAddress! + earlier, length) == 0
}
