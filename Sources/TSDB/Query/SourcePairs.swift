/// The query's (source, device) pairs, each with its key (its place here), and the filter that
/// keeps them (`--source`, lowercased; nil keeps every pair).
struct SourcePairs {
    let filter: String?
    private(set) var pairs: [(source: String, device: String)] = []
    private var keys: [String: Int32] = [:]

    init(filter: String?) { self.filter = filter }

    /// The key of `source` and `device`, -1 when the filter leaves them out.
    mutating func key(source: String, device: String) -> Int32 {
        if let filter, !source.lowercased().containsText(filter) && !device.lowercased().containsText(filter) {
            return -1
        }
        let name = source + "\u{0}" + device
        if let known = keys[name] { return known }
        let key = Int32(pairs.count)
        keys[name] = key
        pairs.append((source, device))
        return key
    }
}

/// One segment's dictionary ids of source and device mapped to the query's keys (``SourcePairs``),
/// each pair looked up the first time it is met: in a table by the two ids when their product is
/// small (it is a handful of sources and devices), else hashed. A lookup per sample hashed its
/// ids: a fifth of a year of daily steps.
struct SegmentSourceKeys {
    private static let unknown: Int32 = -2
    private let segment: SegmentReader
    private var table: [Int32]
    private var hashed: [Int: Int32] = [:]

    init(_ segment: SegmentReader) {
        self.segment = segment
        // The decoder has checked each id against its dictionary, so an id pair has one place.
        let (places, overflow) = segment.sources.count.multipliedReportingOverflow(by: segment.devices.count)
        table = [Int32](repeating: Self.unknown, count: overflow || places > 4096 ? 0 : places)
    }

    /// The key of the pair with dictionary ids `source` and `device`, -1 when filtered out.
    @inline(__always)
    mutating func key(_ source: Int, _ device: Int, pairs: inout SourcePairs) -> Int32 {
        let id = source * segment.devices.count + device
        if id < table.count {
            if table[id] != Self.unknown { return table[id] }
            table[id] = lookUp(source, device, pairs: &pairs)
            return table[id]
        }
        if let known = hashed[id] { return known }
        let key = lookUp(source, device, pairs: &pairs)
        hashed[id] = key
        return key
    }

    private func lookUp(_ source: Int, _ device: Int, pairs: inout SourcePairs) -> Int32 {
        pairs.key(source: segment.sources[source].string ?? "", device: segment.devices[device].string ?? "")
    }
}
