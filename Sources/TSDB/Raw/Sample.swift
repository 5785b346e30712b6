/// A string field that may be absent from the JSON, explicitly `null`, or a string.
/// Keeping absent and null apart makes the round trip exact.
public enum OptionalText: Hashable, Sendable {
    case absent
    case null
    case text(String)

    /// The string, or nil when absent or null.
    public var string: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    public init(_ string: String?) { self = string.map { .text($0) } ?? .null }
}

/// An exact decimal number: `mantissa × 10^-scale` (`1.596` is mantissa 1596, scale 3; `72.0` is 720, 1).
public struct ExactDecimal: Hashable, Sendable, CustomStringConvertible {
    public var mantissa: Int64
    /// Digits after the decimal point, 0...18.
    public var scale: UInt8

    public init(mantissa: Int64, scale: UInt8) {
        self.mantissa = mantissa
        self.scale = scale
    }

    /// Written out, as ``SegmentFormat/powersOfTen`` is (each exact in a binary64).
    package static let powersOfTen: [Double] = [
        1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    ]

    public var doubleValue: Double { Double(mantissa) / Self.powersOfTen[Int(scale)] }

    /// The decimal as JSON number text, digits exactly as stored.
    public var description: String {
        let negative = mantissa < 0
        var digits = String(mantissa.magnitude)
        let s = Int(scale)
        guard s > 0 else { return negative ? "-" + digits : digits }
        if digits.count <= s { digits = String(repeating: "0", count: s - digits.count + 1) + digits }
        let cut = digits.index(digits.endIndex, offsetBy: -s)
        return (negative ? "-" : "") + digits[..<cut] + "." + digits[cut...]
    }
}

/// A sample's `value` field.
public enum SampleValue: Hashable, Sendable, CustomStringConvertible {
    case absent
    case null
    /// A short decimal kept digit for digit.
    case decimal(ExactDecimal)
    /// Any other JSON number (exponent form, more than 18 digits, `-0`), kept as its text.
    case numberText(String)

    public var doubleValue: Double? {
        switch self {
        case .absent, .null: nil
        case .decimal(let d): d.doubleValue
        case .numberText(let t): Double(t)
        }
    }

    public var description: String {
        switch self {
        case .absent, .null: "null"
        case .decimal(let d): d.description
        case .numberText(let t): t
        }
    }
}

/// One HealthKit sample exactly as the raw JSON had it.
public struct Sample: Hashable, Sendable {
    /// HealthKit type identifier, e.g. `HKQuantityTypeIdentifierHeartRate`.
    public var type: String
    public var start: Timestamp
    public var end: Timestamp
    public var value: SampleValue
    public var unit: OptionalText
    public var source: OptionalText
    public var device: OptionalText
    /// The metadata object as canonical JSON text (keys sorted, no white space), or absent/null.
    public var metadata: OptionalText

    public init(
        type: String, start: Timestamp, end: Timestamp, value: SampleValue, unit: OptionalText = .absent,
        source: OptionalText = .absent, device: OptionalText = .absent, metadata: OptionalText = .absent
    ) {
        self.type = type
        self.start = start
        self.end = end
        self.value = value
        self.unit = unit
        self.source = source
        self.device = device
        self.metadata = metadata
    }

    /// `end − start` in microseconds.
    public var durationMicroseconds: Int64 { end.microseconds - start.microseconds }
}
