/// A sample as plain integers: the compactor's working representation.
///
/// Strings are ids into an interner (``PackedSample/absent`` and ``PackedSample/null`` are
/// reserved), the two timestamp forms are packed into one key, and the value is a tag plus an
/// integer (a decimal mantissa, or the interned id of a number's text).
struct PackedSample {
    static let absent: Int32 = -2
    static let null: Int32 = -1

    var start: Int64
    var end: Int64
    var mantissa: Int64
    var forms: UInt64
    var type: Int32
    var unit: Int32
    var source: Int32
    var device: Int32
    var metadata: Int32
    var valueTag: UInt8
    /// Read from an Apple Health export rather than a day file: a day file's copy of the same
    /// reading replaces it (segment-v3 §5.4). Not stored; fits in the struct's padding.
    var fromExport = false

    /// Full equality, used to store a sample that two day files both contain only once.
    func sameSample(as o: PackedSample) -> Bool {
        start == o.start && end == o.end && mantissa == o.mantissa && forms == o.forms && type == o.type
            && unit == o.unit && source == o.source && device == o.device && metadata == o.metadata
            && valueTag == o.valueTag
    }
}

/// Value tags (Formats/segment-v3.md §5.3): how a sample's `value` was written.
enum ValueTag {
    static let absent: UInt8 = 0
    static let null: UInt8 = 1
    static let numberText: UInt8 = 2
    /// `decimalBase + scale` for a decimal with `scale` fraction digits (0...18).
    static let decimalBase: UInt8 = 3
    static let maxScale: UInt8 = 18
    static let limit: UInt8 = decimalBase + maxScale
}

extension TimeForm {
    /// 32-bit packing (segment-v3 §4.4): offset minutes (16 bits, two's complement), fraction
    /// digits (4), Z flag (1), `-00:00` flag (1).
    var packed: UInt32 {
        UInt32(UInt16(bitPattern: offsetMinutes)) | UInt32(fractionDigits) << 16 | (isZulu ? 1 << 20 : 0)
            | (isNegativeZero ? 1 << 21 : 0)
    }

    init(packed: UInt32) {
        self.init(
            offsetMinutes: Int16(bitPattern: UInt16(truncatingIfNeeded: packed)),
            fractionDigits: UInt8((packed >> 16) & 0xF), isZulu: packed & (1 << 20) != 0,
            isNegativeZero: packed & (1 << 21) != 0)
    }

    static func pair(_ start: TimeForm, _ end: TimeForm) -> UInt64 {
        UInt64(start.packed) | UInt64(end.packed) << 32
    }

    static func unpair(_ key: UInt64) -> (TimeForm, TimeForm) {
        (TimeForm(packed: UInt32(truncatingIfNeeded: key)), TimeForm(packed: UInt32(truncatingIfNeeded: key >> 32)))
    }
}
