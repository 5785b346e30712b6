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

    @inline(__always) private func piece(_ k: Int) -> Piece {
        switch k {
        case 0: pieces.0
        case 1: pieces.1
        case 2: pieces.2
        default: pieces.3
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
    mutating func finish(at offset: Int, as sample: PackedSample, usable: Bool) {
        tail = (recordedUpTo, offset - recordedUpTo)
        self.sample = sample
        let times: UInt8 = 1 << Field.start.rawValue | 1 << Field.end.rawValue
        isSet = usable && fields & times == times && fields & 0x80 == 0
    }

    // MARK: Matching

    /// The sample at the scanner's position if it matches the template, the scanner then past it;
    /// else nil with the scanner where it was.
    func match(
        _ s: inout JSONScanner, _ recent: inout RecentValues, metadata: ByteInterner, canonicalMetadata: [Int32]
    ) -> PackedSample? {
        guard isSet else { return nil }
        let begin = s.position
        if let matched = read(&s, &recent, metadata: metadata, canonicalMetadata: canonicalMetadata) { return matched }
        s.position = begin
        return nil
    }

    private func read(
        _ s: inout JSONScanner, _ recent: inout RecentValues, metadata: ByteInterner, canonicalMetadata: [Int32]
    ) -> PackedSample? {
        let bytes = s.bytes
        var q = s.position
        var out = sample
        var startForm = TimeForm.zulu
        var endForm = TimeForm.zulu
        for k in 0..<pieceCount {
            let piece = piece(k)
            guard same(bytes, at: q, as: piece.literal, piece.length) else { return nil }
            q += piece.length
            switch piece.field {
            case .start, .end:
                guard let (stamp, next) = Self.timestamp(bytes, at: q, &recent.times) else { return nil }
                if piece.field == .start {
                    (out.start, startForm) = (stamp.microseconds, stamp.form)
                } else {
                    (out.end, endForm) = (stamp.microseconds, stamp.form)
                }
                q = next
            case .value:
                s.position = q
                guard let range = try? s.number(), !s.lastNumberHadExponent,
                    let d = DayFileParser.exactDecimal(UnsafeRawBufferPointer(rebasing: bytes[range]))
                else { return nil }
                (out.mantissa, out.valueTag) = (d.mantissa, ValueTag.decimalBase + d.scale)
                q = s.position
            case .metadata:
                if let (id, length) = recent.metadata(bytes, at: q) {
                    (out.metadata, q) = (id, q + length)
                    continue
                }
                guard q < bytes.count, bytes[q] == UInt8(ascii: "{") else { return nil }
                s.position = q
                guard (try? s.skipValue(depth: 2)) != nil,
                    let id = metadata.lookup(UnsafeRawBufferPointer(rebasing: bytes[q..<s.position]))
                else { return nil }
                out.metadata = canonicalMetadata[Int(id)]
                recent.remember(metadata: canonicalMetadata[Int(id)], at: q, length: s.position - q)
                q = s.position
            }
        }
        guard same(bytes, at: q, as: tail.literal, tail.length), out.end >= out.start else { return nil }
        s.position = q + tail.length
        out.forms = TimeForm.pair(startForm, endForm)
        return out
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
    private var oldest = 0
    private var recent = RecentValues()
    /// The year's day files interleave about a dozen kinds of sample: with 6 templates 59,030 of
    /// its 481,640 samples were parsed in full, with 16 7,843 (9% fewer instructions compacting it).
    static let capacity = 16

    /// The sample at the scanner's position if a template matches it (see ``SampleTemplate``).
    mutating func match(_ s: inout JSONScanner, metadata: ByteInterner, canonicalMetadata: [Int32]) -> PackedSample? {
        guard !templates.isEmpty else { return nil }
        let first = lastMatched
        // Borrowed in place: no template is copied per sample. The array is read through a second
        // reference so that `recent` is updated where it lies: copied in and out, it was two
        // memcpy calls a sample (80M instructions of the year's compaction).
        let all = templates
        let found = all.withUnsafeBufferPointer { all -> (Int, PackedSample)? in
            if let sample = all[first].match(&s, &recent, metadata: metadata, canonicalMetadata: canonicalMetadata) {
                return (first, sample)
            }
            for k in all.indices where k != first {
                if let sample = all[k].match(&s, &recent, metadata: metadata, canonicalMetadata: canonicalMetadata) {
                    return (k, sample)
                }
            }
            return nil
        }
        guard let (k, sample) = found else { return nil }
        lastMatched = k
        return sample
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
        lastMatched = k
        return k
    }

    subscript(k: Int) -> SampleTemplate {
        get { templates[k] }
        _modify { yield &templates[k] }
    }
}

/// Whether the `length` bytes at `q` equal those at `earlier` (both offsets into `bytes`).
@inline(__always)
private func same(_ bytes: UnsafeRawBufferPointer, at q: Int, as earlier: Int, _ length: Int) -> Bool {
    q + length <= bytes.count && memcmp(bytes.baseAddress! + q, bytes.baseAddress! + earlier, length) == 0
}
