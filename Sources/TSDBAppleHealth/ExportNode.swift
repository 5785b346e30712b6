import TSDB

/// An element nested in a `Workout` or `Correlation` (statistics, events, routes, activities, a
/// correlation's records), kept whole in its parent sample's metadata: attributes as written
/// (strings), its `MetadataEntry` children as a `metadata` object, other children as arrays
/// named by element. Nothing Apple wrote is dropped, and readers find it by key.
struct ExportNode {
    var name: String
    var attributes: [(String, String)]
    var metadata: [(String, String)] = []
    var children: [ExportNode] = []

    init(_ e: HealthXMLScanner.Element) {
        name = e.name
        attributes = e.attributes.map { ($0.name, $0.value) }
    }

    /// The node as a canonical JSON object (keys sorted, no white space).
    func appendJSON(to out: inout [UInt8]) {
        var members: [(String, JSONText)] = attributes.map { ($0.0, .string($0.1)) }
        if !metadata.isEmpty { members.append(("metadata", .object(metadata.map { ($0.0, .string($0.1)) }))) }
        for (name, nodes) in Self.grouped(children) { members.append((name, .nodes(nodes))) }
        JSONText.object(members).append(to: &out)
    }

    /// Children grouped by element name, each group in document order.
    static func grouped(_ nodes: [ExportNode]) -> [(String, [ExportNode])] {
        var order: [String] = []
        var groups: [String: [ExportNode]] = [:]
        for n in nodes {
            if groups[n.name] == nil { order.append(n.name) }
            groups[n.name, default: []].append(n)
        }
        return order.map { ($0, groups[$0]!) }
    }
}

/// JSON built from the export: strings, number digits as written, objects, node arrays.
indirect enum JSONText {
    case string(String)
    case number(String)
    case object([(String, JSONText)])
    case nodes([ExportNode])

    /// Calls `body` with the members' indices in key order (UTF-8 bytes), a repeated key's first
    /// member first. Objects here have a few keys: an insertion sort of indices on the stack,
    /// stable, which neither copies the members nor retains their strings (a record's metadata is
    /// sorted once per record, millions of times in an import).
    static func inKeyOrder(_ members: [(String, JSONText)], _ body: (Int) -> Void) {
        inStableOrder(members.count, { members[$0].0.utf8.lexicographicallyPrecedes(members[$1].0.utf8) }, body)
    }

    /// Calls `body` with `0..<count` sorted by `precedes`, ties in index order: an insertion sort of
    /// indices on the stack, for the few members of an object.
    static func inStableOrder(_ count: Int, _ precedes: (Int, Int) -> Bool, _ body: (Int) -> Void) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
            for i in 0..<count {
                order[i] = i
                var j = i
                while j > 0 && precedes(order[j], order[j - 1]) {
                    order.swapAt(j, j - 1)
                    j -= 1
                }
            }
            for i in order { body(i) }
        }
    }

    /// Canonical: object keys sorted by their UTF-8 bytes, the first of a repeated key kept.
    func append(to out: inout [UInt8]) {
        switch self {
        case .string(let s): DayFileWriter.appendJSONString(s, to: &out)
        case .number(let n): out += n.utf8
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var previous: Int?
            Self.inKeyOrder(members) { i in
                if let previous {
                    guard members[i].0 != members[previous].0 else { return }
                    out.append(UInt8(ascii: ","))
                }
                previous = i
                DayFileWriter.appendJSONString(members[i].0, to: &out)
                out.append(UInt8(ascii: ":"))
                members[i].1.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .nodes(let nodes):
            out.append(UInt8(ascii: "["))
            for (i, n) in nodes.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                n.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }
}
