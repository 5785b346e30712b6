/// Health's export describes a device as `<<HKDevice: 0x283e5c9b0>, name:Apple Watch,
/// manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:9.1>>`; the store keeps that
/// text exactly, tables show its name.
public enum DeviceName {
    /// The `name:` field of an HKDevice description, or the text itself when it is not one.
    public static func display(_ device: String) -> String {
        guard device.hasPrefix("<<HKDevice"), let at = device.firstRange(of: ", name:") else { return device }
        let rest = device[at.upperBound...]
        let end = rest.firstRange(of: ", ")?.lowerBound ?? rest.firstRange(of: ">>")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }
}
