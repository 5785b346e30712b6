import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A workout's route (`workout-routes/route_….gpx` in the export) as samples: one
/// `HKWorkoutRouteTypeIdentifier` sample per track point at its instant, its fields as metadata
/// with the GPX's own names and digits (`lat`, `lon`, `ele`, `speed`, `course`, `hAcc`, `vAcc`)
/// and `file`, the path the workout's `WorkoutRoute` names, which links the two. Source and device
/// are the `WorkoutRoute`'s; a route no workout names keeps none.
enum RoutePoints {
    static let type = "HKWorkoutRouteTypeIdentifier"

    /// Adds the points of one GPX document; returns how many were skipped (no time or position).
    static func add(
        gpx: UnsafeRawBufferPointer, file: String, route: ExportNode?, to parsed: inout ParsedDayFile
    ) -> Int {
        func id(_ attribute: String) -> Int32 {
            route.flatMap { r in r.attributes.first { $0.0 == attribute }?.1 }.map { parsed.intern($0) }
                ?? ParsedDayFile.absentText
        }
        let (type, source, device) = (parsed.intern(Self.type), id("sourceName"), id("device"))
        var point = PointMetadata(file: file)
        var fields = FieldRanges()
        var skipped = 0
        var cursor = 0
        while let open = find("<trkpt", in: gpx, from: cursor) {
            guard let tagEnd = find(">", in: gpx, from: open), let close = find("</trkpt>", in: gpx, from: tagEnd)
            else { break }
            cursor = close + 8
            fields.removeAll()
            fields.collect(gpx, attributes: open + 6..<tagEnd, children: tagEnd + 1..<close)
            // Text with no entity and no byte beyond ASCII is its own decoded text, so the point is
            // read from its bytes; anything else is decoded to strings first (~30,000 instructions a
            // point, 23% of a year's import on the thread building samples, callgrind).
            let plain = Self.isPlainASCII(UnsafeRawBufferPointer(rebasing: gpx[open..<close]))
            guard
                let time = plain
                    ? point.write(fields, of: gpx) : point.write(decoding: fields, of: gpx)
            else {
                skipped += 1
                continue
            }
            let metadata = point.json.withUnsafeBytes { parsed.intern($0) }
            parsed.add(
                time, time, .null, type: type, unit: ParsedDayFile.absentText, source: source, device: device,
                metadata: metadata)
        }
        return skipped
    }

    /// Whether `b` holds only ASCII bytes and no `&`.
    static func isPlainASCII(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let base = b.baseAddress else { return true }
        return ByteReader.isASCII(b) && memchr(base, 0x26, b.count) == nil
    }

    static func text(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> String {
        HealthXMLScanner.decode(UnsafeRawBufferPointer(rebasing: b[r]))
    }

    static func find(_ needle: StaticString, in b: UnsafeRawBufferPointer, from: Int) -> Int? {
        let n = needle.utf8CodeUnitCount
        guard n > 0, let base = b.baseAddress, from >= 0 else { return nil }
        if n == 1 {
            // Tags and texts inside a point are a few bytes long: a loop finds the next one sooner
            // than a call to memchr.
            let byte = needle.utf8Start[0]
            var i = from
            while i < b.count {
                if b[i] == byte { return i }
                i += 1
            }
            return nil
        }
        let first = Int32(needle.utf8Start[0])
        var i = from
        while b.count - i >= n, let hit = memchr(base + i, first, b.count - i - n + 1) {
            let at = UnsafeRawPointer(hit) - base
            if memcmp(base + at, needle.utf8Start, n) == 0 { return at }
            i = at + 1
        }
        return nil
    }
}

/// A track point's fields as byte ranges of its GPX document: names and values, its tag's
/// `name="value"` attributes first, then the `<name>text</name>` leaves anywhere inside it (`ele`,
/// `time`, and `speed` … inside `extensions`).
struct FieldRanges {
    private(set) var names: [Range<Int>] = []
    private(set) var values: [Range<Int>] = []

    var count: Int { names.count }

    mutating func removeAll() {
        names.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// The fields of the attribute text `attributes` and of the children `children` of `gpx`.
    mutating func collect(_ gpx: UnsafeRawBufferPointer, attributes: Range<Int>, children: Range<Int>) {
        collectAttributes(UnsafeRawBufferPointer(rebasing: gpx[attributes]), from: attributes.lowerBound)
        collectChildren(UnsafeRawBufferPointer(rebasing: gpx[children]), from: children.lowerBound)
    }

    /// `name="value"` pairs of `b`, at offset `base`.
    mutating func collectAttributes(_ b: UnsafeRawBufferPointer, from base: Int) {
        var i = 0
        while let eq = RoutePoints.find("=\"", in: b, from: i), let end = RoutePoints.find("\"", in: b, from: eq + 2) {
            var nameStart = eq
            while nameStart > i && b[nameStart - 1] != 0x20 && b[nameStart - 1] != 0x09 && b[nameStart - 1] != 0x0A {
                nameStart -= 1
            }
            names.append(base + nameStart..<base + eq)
            values.append(base + eq + 2..<base + end)
            i = end + 1
        }
    }

    /// `<name>text</name>` leaves of `b`, at offset `base`.
    mutating func collectChildren(_ b: UnsafeRawBufferPointer, from base: Int) {
        var i = 0
        while let lt = RoutePoints.find("<", in: b, from: i), let gt = RoutePoints.find(">", in: b, from: lt) {
            i = gt + 1
            guard lt + 1 < gt, b[lt + 1] != UInt8(ascii: "/"), b[gt - 1] != UInt8(ascii: "/") else { continue }
            guard let next = RoutePoints.find("<", in: b, from: gt), next + 1 < b.count,
                b[next + 1] == UInt8(ascii: "/")
            else {
                continue  // a container such as <extensions>
            }
            names.append(base + lt + 1..<base + gt)
            values.append(base + gt + 1..<base + next)
            i = next
        }
    }

    /// The fields decoded (entities, and invalid UTF-8 repaired), from `b` at offset 0.
    func texts(_ b: UnsafeRawBufferPointer) -> [(String, String)] {
        (0..<count).map { (RoutePoints.text(b, names[$0]), RoutePoints.text(b, values[$0])) }
    }
}

/// A track point's metadata: `file` and every field but `time`, canonical JSON (keys sorted by
/// their bytes, a repeated key's first kept, numbers as written).
struct PointMetadata {
    let file: String
    /// `file` as a JSON string, written once for every point.
    private let fileJSON: [UInt8]
    /// The last point's metadata.
    private(set) var json: [UInt8] = []
    /// How points with the names `plan.names` are written: a GPX writer gives every point the same
    /// fields, so the order of their keys is worked out once per document, not once per point
    /// (sorting a point's keys and writing them took ~4,000 instructions of its ~12,000).
    private var plan = Plan()

    private struct Plan {
        /// The names of the point planned for, as ranges of the document, in the point's order.
        var names: [Range<Int>] = []
        /// The field holding the time (the first named `time`), if any, and whether one is named
        /// `lat` and one `lon`.
        var time: Int?
        var hasPosition = false
        /// The members written, in key order: the field (-1 for `file`), and its `"key":` in `keys`.
        var members: [(field: Int, key: Range<Int>)] = []
        var keys: [UInt8] = []
    }

    init(file: String) {
        self.file = file
        var quoted: [UInt8] = []
        DayFileWriter.appendJSONString(file, to: &quoted)
        fileJSON = quoted
    }

    /// Writes the metadata of a point whose fields are plain ASCII without entities (their bytes are
    /// their text), and returns its time; nil, with nothing written, when it has no time or position.
    mutating func write(_ fields: FieldRanges, of gpx: UnsafeRawBufferPointer) -> Timestamp? {
        if !Self.sameNames(fields.names, plan.names, in: gpx) { plan = Self.plan(fields.names, in: gpx) }
        guard let t = plan.time, plan.hasPosition,
            let time = Timestamp(utf8: UnsafeRawBufferPointer(rebasing: gpx[fields.values[t]]))
        else { return nil }
        // Room for the worst case (every value escaped), written in place: appended piece by piece,
        // each `append(contentsOf:)` cost ~100 instructions, fifteen a point.
        var room = 2 + plan.keys.count + plan.members.count + fileJSON.count
        for member in plan.members where member.field >= 0 { room += 6 * fields.values[member.field].count + 2 }
        json.removeAll(keepingCapacity: true)
        plan.keys.withUnsafeBytes { keys in
            fileJSON.withUnsafeBytes { fileJSON in
                RowBytes.append(to: &json, capacity: room) { out in
                    out.byte(UInt8(ascii: "{"))
                    for (k, member) in plan.members.enumerated() {
                        if k > 0 { out.byte(UInt8(ascii: ",")) }
                        out.write(UnsafeRawBufferPointer(rebasing: keys[member.key]))
                        guard member.field >= 0 else {
                            out.write(fileJSON)
                            continue
                        }
                        let value = UnsafeRawBufferPointer(rebasing: gpx[fields.values[member.field]])
                        if ExportSamples.isJSONNumber(value) {
                            out.write(value)
                        } else {
                            DayFileWriter.writeJSONString(utf8: value, to: &out)
                        }
                    }
                    out.byte(UInt8(ascii: "}"))
                }
            }
        }
        return time
    }

    private static func sameNames(_ a: [Range<Int>], _ b: [Range<Int>], in gpx: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count, let base = gpx.baseAddress else { return false }
        for (x, y) in zip(a, b)
        where x.count != y.count || memcmp(base + x.lowerBound, base + y.lowerBound, x.count) != 0 {
            return false
        }
        return true
    }

    /// How to write a point with fields named `names`: `file` and the fields but `time`, sorted
    /// (stably) by key, a repeated key's first member kept.
    private static func plan(_ names: [Range<Int>], in gpx: UnsafeRawBufferPointer) -> Plan {
        func named(_ k: Int, _ name: StaticString) -> Bool {
            let r = names[k]
            return r.count == name.utf8CodeUnitCount
                && memcmp(gpx.baseAddress! + r.lowerBound, name.utf8Start, r.count) == 0
        }
        var plan = Plan()
        plan.names = names
        plan.time = names.indices.first { named($0, "time") }
        plan.hasPosition = names.indices.contains { named($0, "lat") } && names.indices.contains { named($0, "lon") }
        let fileName: StaticString = "file"
        let fileKey = UnsafeRawBufferPointer(start: fileName.utf8Start, count: fileName.utf8CodeUnitCount)
        func key(_ field: Int) -> UnsafeRawBufferPointer {
            field < 0 ? fileKey : UnsafeRawBufferPointer(rebasing: gpx[names[field]])
        }
        let members = [-1] + names.indices.filter { !named($0, "time") }
        var previous: UnsafeRawBufferPointer?
        func precedes(_ a: Int, _ b: Int) -> Bool { key(members[a]).lexicographicallyPrecedes(key(members[b])) }
        func add(_ member: Int) {
            let field = members[member]
            let name = key(field)
            if let previous, name.elementsEqual(previous) { return }
            previous = name
            let start = plan.keys.count
            DayFileWriter.appendJSONString(utf8: name, to: &plan.keys)
            plan.keys.append(UInt8(ascii: ":"))
            plan.members.append((field, start..<plan.keys.count))
        }
        JSONText.inStableOrder(members.count, precedes, add)
        return plan
    }

    /// ``write(_:of:)`` for any point: its fields decoded to strings first.
    mutating func write(decoding fields: FieldRanges, of gpx: UnsafeRawBufferPointer) -> Timestamp? {
        let texts = fields.texts(gpx)
        guard let time = texts.first(where: { $0.0 == "time" }).flatMap({ Timestamp($0.1) }),
            texts.contains(where: { $0.0 == "lat" }), texts.contains(where: { $0.0 == "lon" })
        else { return nil }
        var members: [(String, JSONText)] = [("file", .string(file))]
        for (k, v) in texts where k != "time" {
            members.append((k, ExportSamples.isJSONNumber(v) ? .number(v) : .string(v)))
        }
        json.removeAll(keepingCapacity: true)
        JSONText.object(members).append(to: &json)
        return time
    }
}
