/// One correlation (a blood-pressure reading, a food entry) with its members side by side.
public struct CorrelationReading: Sendable {
    public var start: Timestamp
    public var end: Timestamp
    public var source: String?
    public var device: String?
    /// Each member record: its type, value digits as written, and unit.
    public var members: [(type: String, value: String, unit: String?)]
}

extension Store {
    /// The readings of correlation type `type` (`HKCorrelationTypeIdentifierBloodPressure`)
    /// starting in `[from, to)`, their members taken from the correlation sample's
    /// `HKCorrelationObjects` (Health's export keeps them there; each member is also a sample of
    /// its own type).
    public func correlations(of type: String, from: Int64, to: Int64, source: String? = nil)
        throws(TSDBError) -> [CorrelationReading]
    {
        var out: [CorrelationReading] = []
        var cursor = try samples(of: type, from: from, to: to, source: source)
        while let s = try cursor.next() {
            var reading = CorrelationReading(
                start: s.start, end: s.end, source: s.source.string, device: s.device.string, members: [])
            if case .text(var text) = s.metadata,
                let meta = text.withUTF8({ try? JSONValue.parse(UnsafeRawBufferPointer($0)) }),
                case .array(let objects)? = meta["HKCorrelationObjects"]
            {
                for o in objects {
                    guard let t = o["type"]?.string else { continue }
                    reading.members.append((t, o["value"]?.string ?? "", o["unit"]?.string))
                }
            }
            out.append(reading)
        }
        return out
    }
}
