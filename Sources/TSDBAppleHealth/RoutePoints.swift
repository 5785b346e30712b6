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
        var json: [UInt8] = []
        var skipped = 0
        var cursor = 0
        while let open = find("<trkpt", in: gpx, from: cursor) {
            guard let tagEnd = find(">", in: gpx, from: open), let close = find("</trkpt>", in: gpx, from: tagEnd)
            else { break }
            cursor = close + 8
            var fields = attributes(UnsafeRawBufferPointer(rebasing: gpx[open + 6..<tagEnd]))
            fields += childTexts(UnsafeRawBufferPointer(rebasing: gpx[tagEnd + 1..<close]))
            guard let time = fields.first(where: { $0.0 == "time" }).flatMap({ Timestamp($0.1) }),
                fields.contains(where: { $0.0 == "lat" }), fields.contains(where: { $0.0 == "lon" })
            else {
                skipped += 1
                continue
            }
            var members: [(String, JSONText)] = [("file", .string(file))]
            for (k, v) in fields where k != "time" {
                members.append((k, ExportSamples.isJSONNumber(v) ? .number(v) : .string(v)))
            }
            json.removeAll(keepingCapacity: true)
            JSONText.object(members).append(to: &json)
            let metadata = json.withUnsafeBytes { parsed.intern($0) }
            parsed.add(
                time, time, .null, type: type, unit: ParsedDayFile.absentText, source: source, device: device,
                metadata: metadata)
        }
        return skipped
    }

    /// `name="value"` pairs of a tag's attribute text.
    static func attributes(_ b: UnsafeRawBufferPointer) -> [(String, String)] {
        var out: [(String, String)] = []
        var i = 0
        while let eq = find("=\"", in: b, from: i), let end = find("\"", in: b, from: eq + 2) {
            var nameStart = eq
            while nameStart > i && b[nameStart - 1] != 0x20 && b[nameStart - 1] != 0x09 && b[nameStart - 1] != 0x0A {
                nameStart -= 1
            }
            out.append((text(b, nameStart..<eq), text(b, eq + 2..<end)))
            i = end + 1
        }
        return out
    }

    /// `<name>text</name>` leaves anywhere inside a point (`ele`, `time`, and `speed` … inside
    /// `extensions`).
    static func childTexts(_ b: UnsafeRawBufferPointer) -> [(String, String)] {
        var out: [(String, String)] = []
        var i = 0
        while let lt = find("<", in: b, from: i), let gt = find(">", in: b, from: lt) {
            i = gt + 1
            guard lt + 1 < gt, b[lt + 1] != UInt8(ascii: "/"), b[gt - 1] != UInt8(ascii: "/") else { continue }
            let name = text(b, lt + 1..<gt)
            guard let next = find("<", in: b, from: gt), next + 1 < b.count, b[next + 1] == UInt8(ascii: "/") else {
                continue  // a container such as <extensions>
            }
            out.append((name, text(b, gt + 1..<next)))
            i = next
        }
        return out
    }

    static func text(_ b: UnsafeRawBufferPointer, _ r: Range<Int>) -> String {
        HealthXMLScanner.decode(UnsafeRawBufferPointer(rebasing: b[r]))
    }

    static func find(_ needle: StaticString, in b: UnsafeRawBufferPointer, from: Int) -> Int? {
        let n = needle.utf8CodeUnitCount
        guard n > 0, let base = b.baseAddress, from >= 0 else { return nil }
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
