import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an Apple Health export holds, read without storing anything (`tsdb import --check`).
public struct ExportInventory: Sendable {
    public var source = ""
    /// The zip member (or file) holding `<HealthData>`, whatever the phone's language named it.
    public var xmlName = ""
    public var exportDate: String?
    public var me: [(String, String)] = []
    public var records: [String: Int] = [:]
    public var workouts: [String: Int] = [:]
    public var correlations: [String: Int] = [:]
    public var activitySummaries = 0
    public var metadataEntries = 0
    public var heartbeatSeries = 0
    public var heartbeats = 0
    public var workoutEvents = 0
    public var workoutStatistics = 0
    public var workoutRoutes = 0
    /// Elements tsdb does not import (clinical records, audiograms, …), by name.
    public var otherElements: [String: Int] = [:]
    /// Other members of the archive: routes (GPX), electrocardiograms (CSV), the CDA document.
    public var otherMembers: [String] = []
    public var firstDate: String?
    public var lastDate: String?
    public var xmlBytes = 0
    public var sources: Set<String> = []
}

/// Reads an Apple Health export (`export.zip`, `export.xml`, or the unzipped folder) as a stream.
public enum ExportReader {
    public static func inventory(of path: String, progress: (_ done: Int, _ total: Int) -> Void = { _, _ in })
        throws(TSDBError) -> ExportInventory
    {
        var inventory = ExportInventory(source: path)
        var counter = InventoryCounter()
        try stream(path, into: &inventory, progress: progress) { (e, inv) in counter.count(e, &inv) }
        return inventory
    }

    /// Streams the `<HealthData>` document of `path` through `handle`.
    static func stream(
        _ path: String, into inventory: inout ExportInventory, progress: (Int, Int) -> Void,
        _ handle: (HealthXMLScanner.Element, inout ExportInventory) throws(TSDBError) -> Void
    ) throws(TSDBError) {
        let target = FileSystem.isDirectory(path) ? try xmlInFolder(path) : path
        if target.hasSuffix(".zip") || isZip(target) {
            let archive = try ZipArchive(path: target)
            let xml = try healthDataMember(archive)
            inventory.xmlName = xml.name
            inventory.otherMembers = archive.members.filter { $0.name != xml.name && !$0.name.hasSuffix("/") }.map(
                \.name)
            var scanner = HealthXMLScanner(source: target + ":" + xml.name)
            try ZipInflater.stream(xml, of: archive) { (chunk) throws(TSDBError) in
                try scanner.feed(chunk) { (e) throws(TSDBError) in try handle(e, &inventory) }
                progress(scanner.bytesScanned, xml.size)
                return true
            }
            try scanner.finish { (e) throws(TSDBError) in try handle(e, &inventory) }
            inventory.xmlBytes = scanner.bytesScanned
        } else {
            // read(2) into one buffer rather than a mapping: resident memory stays one chunk.
            let fd = open(target, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw TSDBError.io("cannot open", path: target, errno: errno) }
            defer { close(fd) }
            var st = stat()
            let total = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
            inventory.xmlName = target
            var scanner = HealthXMLScanner(source: target)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ZipInflater.chunkSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let n = read(fd, buffer.baseAddress, buffer.count)
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { throw TSDBError.io("cannot read", path: target, errno: errno) }
                if n == 0 { break }
                try scanner.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) { (e) throws(TSDBError) in
                    try handle(e, &inventory)
                }
                progress(scanner.bytesScanned, total)
            }
            try scanner.finish { (e) throws(TSDBError) in try handle(e, &inventory) }
            inventory.xmlBytes = scanner.bytesScanned
        }
    }

    /// Hands each archive member inside `folder` (`workout-routes/`, at any depth of the archive)
    /// whose name ends in `suffix` to `body`, whole, with its name from `folder` on. An export
    /// that is not a zip has none (only its XML is kept).
    static func forEachFile(
        in path: String, folder: String, suffix: String,
        _ body: (String, UnsafeRawBufferPointer) throws(TSDBError) -> Void
    ) throws(TSDBError) {
        guard !FileSystem.isDirectory(path), path.hasSuffix(".zip") || isZip(path) else { return }
        let archive = try ZipArchive(path: path)
        for m in archive.members where m.name.hasSuffix(suffix) {
            let parts = m.name.split(separator: "/", omittingEmptySubsequences: false)
            guard let at = parts.firstIndex(where: { $0 + "/" == folder }) else { continue }
            let relative = parts[at...].joined(separator: "/")
            var bytes: [UInt8] = []
            bytes.reserveCapacity(m.size)
            try ZipInflater.stream(m, of: archive) { (chunk) throws(TSDBError) in
                bytes += chunk
                return true
            }
            let handled = bytes.withUnsafeBytes { b in Result { () throws(TSDBError) in try body(relative, b) } }
            try handled.get()
        }
    }

    static func isZip(_ path: String) -> Bool {
        guard let file = try? MappedFile(path: path), file.count >= 4 else { return false }
        return file.withBytes { $0.loadUnaligned(as: UInt32.self).littleEndian == ZipArchive.localHeader }
    }

    /// An unzipped `apple_health_export/` (or its parent): the `.xml` file whose root is `<HealthData`.
    static func xmlInFolder(_ folder: String) throws(TSDBError) -> String {
        for dir in [folder, folder + "/apple_health_export"] where FileSystem.isDirectory(dir) {
            for entry in try FileSystem.list(dir) where entry.name.hasSuffix(".xml") {
                let path = dir + "/" + entry.name
                if let file = try? MappedFile(path: path), file.withBytes({ startsHealthData($0) }) { return path }
            }
        }
        throw TSDBError.notFound(
            "no export.xml (an .xml file whose root element is <HealthData>) in this folder or its "
                + "apple_health_export/",
            path: folder)
    }

    /// The member whose root element is `<HealthData` (its name is translated into the phone's
    /// language, so it is found by content, not by name).
    static func healthDataMember(_ archive: ZipArchive) throws(TSDBError) -> ZipArchive.Member {
        for m in archive.members where m.name.hasSuffix(".xml") {
            var head: [UInt8] = []
            try ZipInflater.stream(m, of: archive) { (chunk) throws(TSDBError) in
                head += chunk.prefix(65_536 - head.count)
                return head.count < 65_536 && !head.withUnsafeBytes { startsHealthData($0) }
            }
            if head.withUnsafeBytes({ startsHealthData($0) }) { return m }
        }
        let names = archive.members.map(\.name).prefix(8).joined(separator: ", ")
        throw TSDBError.invalidInput(
            "no member whose root element is <HealthData> (members: \(names)); is this Health's export.zip?",
            path: archive.file.path)
    }

    /// Whether the document's first element (after the prolog and DTD) is `<HealthData`.
    static func startsHealthData(_ b: UnsafeRawBufferPointer) -> Bool {
        let needle = Array("<HealthData".utf8)
        guard b.count >= needle.count else { return false }
        return (0...(b.count - needle.count)).contains { i in
            b[i] == 0x3C && (0..<needle.count).allSatisfy { b[i + $0] == needle[$0] }
        }
    }
}

/// Counts what `inventory` reports, element by element.
struct InventoryCounter {
    var first = Int64.max
    var last = Int64.min
    /// The last few distinct `type`/`sourceName` values: consecutive records mostly repeat them,
    /// so most records cost a byte comparison, not a new string.
    var types = RecentStrings()
    var sources = RecentStrings()

    mutating func count(_ e: HealthXMLScanner.Element, _ inv: inout ExportInventory) {
        guard e.kind != .end else { return }
        if e.isNamed("Record") {
            inv.records[types.string(e.rawAttribute("type")) ?? "?", default: 0] += 1
            noteSpan(e, &inv)
            return
        }
        if e.isNamed("MetadataEntry") {
            inv.metadataEntries += 1
            return
        }
        if e.isNamed("InstantaneousBeatsPerMinute") {
            inv.heartbeats += 1
            return
        }
        switch e.name {
        case "HealthData": break
        case "ExportDate": inv.exportDate = e.attribute("value")
        case "Me": inv.me = e.attributes
        case "Workout":
            inv.workouts[e.attribute("workoutActivityType") ?? "?", default: 0] += 1
            noteSpan(e, &inv)
        case "Correlation":
            inv.correlations[e.attribute("type") ?? "?", default: 0] += 1
            noteSpan(e, &inv)
        case "ActivitySummary": inv.activitySummaries += 1
        case "HeartRateVariabilityMetadataList": inv.heartbeatSeries += 1
        case "WorkoutEvent": inv.workoutEvents += 1
        case "WorkoutStatistics": inv.workoutStatistics += 1
        case "WorkoutRoute": inv.workoutRoutes += 1
        case "FileReference", "WorkoutActivity": break
        default: inv.otherElements[e.name, default: 0] += 1
        }
    }

    private mutating func noteSpan(_ e: HealthXMLScanner.Element, _ inv: inout ExportInventory) {
        if let s = sources.string(e.rawAttribute("sourceName")) { inv.sources.insert(s) }
        if let raw = e.rawAttribute("startDate"), let t = HealthDate.instant(raw), t < first {
            first = t
            inv.firstDate = String(decoding: raw, as: UTF8.self)
        }
        if let raw = e.rawAttribute("endDate"), let t = HealthDate.instant(raw), t > last {
            last = t
            inv.lastDate = String(decoding: raw, as: UTF8.self)
        }
    }
}

/// Decoded attribute values remembered by their raw bytes.
struct RecentStrings {
    private var entries: [(raw: [UInt8], text: String)] = []

    mutating func string(_ raw: UnsafeRawBufferPointer?) -> String? {
        guard let raw else { return nil }
        if let hit = entries.firstIndex(where: { $0.raw.elementsEqual(raw) }) {
            if hit > 0 { entries.swapAt(hit, hit - 1) }  // move frequent values forward
            return entries[max(hit - 1, 0)].text
        }
        let text = HealthXMLScanner.decode(raw)
        if entries.count == 8 { entries.removeLast() }
        entries.insert((Array(raw), text), at: 0)
        return text
    }
}

/// Interned ids of attribute values remembered by their raw bytes, for one chunk's string table.
///
/// The raw bytes sit one after another in one buffer: an array per value cost a retain and a
/// release per comparison, and four values a record are looked up (~170 instructions each).
struct RecentIDs {
    /// The remembered values' raw bytes; entries point into it. Rebuilt from the live entries when
    /// it passes ``bytesKept``, so it stays small however many values come and go.
    private var bytes: [UInt8] = []
    /// At most ``capacity``, frequent values first.
    private var entries: [(start: Int, count: Int, id: Int32)] = []
    static let capacity = 8
    static let bytesKept = 4096

    /// The id of `raw` decoded (entities, and invalid UTF-8 repaired as `String(decoding:)` does);
    /// nil when the attribute is missing.
    mutating func id(_ raw: UnsafeRawBufferPointer?, _ parsed: inout ParsedDayFile) -> Int32? {
        guard let raw else { return nil }
        if let hit = index(of: raw) {
            if hit > 0 { entries.swapAt(hit, hit - 1) }  // move frequent values forward
            return entries[max(hit - 1, 0)].id
        }
        let id = parsed.intern(HealthXMLScanner.decode(raw))
        if entries.count == Self.capacity { entries.removeLast() }
        if bytes.count + raw.count > Self.bytesKept { keepOnlyLiveBytes() }
        entries.insert((bytes.count, raw.count, id), at: 0)
        bytes.append(contentsOf: raw)
        return id
    }

    private func index(of raw: UnsafeRawBufferPointer) -> Int? {
        bytes.withUnsafeBytes { b in
            entries.firstIndex { entry in
                entry.count == raw.count
                    && (raw.isEmpty || memcmp(b.baseAddress! + entry.start, raw.baseAddress!, raw.count) == 0)
            }
        }
    }

    private mutating func keepOnlyLiveBytes() {
        var live: [UInt8] = []
        for k in entries.indices {
            let e = entries[k]
            entries[k].start = live.count
            live.append(contentsOf: bytes[e.start..<e.start + e.count])
        }
        bytes = live
    }

    /// Forgets every id (the chunk's table is replaced).
    mutating func forget() {
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}

/// Health's dates: `2021-11-09 02:25:29 +0200`, local time with the phone's offset at export.
enum HealthDate {
    /// The instant (µs) and written offset (minutes), read from the bytes.
    static func parse(_ b: UnsafeRawBufferPointer) -> (micros: Int64, offsetMinutes: Int)? {
        guard b.count == 25, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20,
            b[20] == 0x2B || b[20] == 0x2D
        else { return nil }
        // Two digits at a time, straight-line: a byte that is not a digit is above 9 once 0x30 is
        // taken off (wrapping), so the largest "digit" seen says whether all were digits. A loop
        // per field was ~370 instructions a date, and an export has two dates a record.
        var largest: UInt8 = 0
        func two(_ i: Int) -> Int { twoDigits(b, at: i, largest: &largest) }
        let (y, mo, d, h) = (two(0) &* 100 &+ two(2), two(5), two(8), two(11))
        let (mi, s, oh, om) = (two(14), two(17), two(21), two(23))
        guard largest <= 9, (1...12).contains(mo), d >= 1, d <= ISO8601.daysInMonth(year: y, month: mo), h < 24,
            mi < 60, s < 60
        else { return nil }
        let offset = (b[20] == 0x2D ? -1 : 1) * (oh * 60 + om)
        let local = ISO8601.days(year: y, month: mo, day: d) * 86_400 + Int64(h * 3600 + mi * 60 + s)
        return ((local - Int64(offset) * 60) * 1_000_000, offset)
    }

    static func instant(_ b: UnsafeRawBufferPointer) -> Int64? { parse(b)?.micros }

    /// The two bytes at `i` read as digits; `largest` keeps the largest, above 9 if one was not a digit.
    @inline(__always)
    static func twoDigits(_ b: UnsafeRawBufferPointer, at i: Int, largest: inout UInt8) -> Int {
        let (high, low) = (b[i] &- 0x30, b[i + 1] &- 0x30)
        largest = max(largest, max(high, low))
        return Int(high) &* 10 &+ Int(low)
    }
}

/// ``HealthDate/parse(_:)`` with the last date's day and offset remembered: a record's two dates,
/// and record after record, mostly share them, so only the time of day is read again (the whole
/// date was ~315 instructions, two a record).
struct HealthDates {
    /// The last date read: its bytes 0..<10 and 19..<25 (loaded from 17, the seconds masked off).
    private var day: (UInt64, UInt16, UInt64)?
    /// That date's local midnight as an instant (µs), and its offset.
    private var midnight: Int64 = 0
    private var offsetMinutes = 0

    mutating func parse(_ b: UnsafeRawBufferPointer) -> (micros: Int64, offsetMinutes: Int)? {
        guard b.count == 25 else { return nil }
        let key = (
            b.loadUnaligned(as: UInt64.self), b.loadUnaligned(fromByteOffset: 8, as: UInt16.self),
            b.loadUnaligned(fromByteOffset: 17, as: UInt64.self) & ~0xFFFF
        )
        if let day, day == key, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, let seconds = Self.secondsOfDay(b) {
            return (midnight + seconds * 1_000_000, offsetMinutes)
        }
        guard let parsed = HealthDate.parse(b), let seconds = Self.secondsOfDay(b) else { return nil }
        (day, midnight, offsetMinutes) = (key, parsed.micros - seconds * 1_000_000, parsed.offsetMinutes)
        return parsed
    }

    /// `hh:mm:ss` at bytes 11..<19 in seconds, if they are digits of a time of day.
    @inline(__always) private static func secondsOfDay(_ b: UnsafeRawBufferPointer) -> Int64? {
        var largest: UInt8 = 0
        func two(_ i: Int) -> Int { HealthDate.twoDigits(b, at: i, largest: &largest) }
        let (h, m, s) = (two(11), two(14), two(17))
        guard largest <= 9, h < 24, m < 60, s < 60 else { return nil }
        return Int64(h * 3600 + m * 60 + s)
    }
}

extension ExportReader {
    /// What an export is without reading its samples: the XML's name and size, the other files,
    /// and the head (export date, `Me`). A damaged or foreign archive fails here when its
    /// directory or the start of its XML is bad; damage further in is found while compacting.
    public static func outline(of path: String) throws(TSDBError) -> ExportInventory {
        var inventory = ExportInventory(source: path)
        let target = FileSystem.isDirectory(path) ? try xmlInFolder(path) : path
        if target.hasSuffix(".zip") || isZip(target) {
            let archive = try ZipArchive(path: target)
            let xml = try healthDataMember(archive)
            inventory.xmlName = xml.name
            inventory.xmlBytes = xml.size
            inventory.otherMembers = archive.members.filter { $0.name != xml.name && !$0.name.hasSuffix("/") }.map(
                \.name)
        } else {
            inventory.xmlName = target
            inventory.xmlBytes = try MappedFile(path: target).count
        }
        let head = try head(of: target)
        inventory.exportDate = head.exportDate
        inventory.me = head.me
        return inventory
    }

    /// What an export says before its first sample: its date and the `Me` characteristics
    /// (`tsdb stats`). Reads at most the first megabyte of the XML.
    public static func head(of path: String) throws(TSDBError) -> (exportDate: String?, me: [(String, String)]) {
        var prefix: [UInt8] = []
        let limit = 1 << 20
        func enough() -> Bool { prefix.count >= limit || contains(prefix, "<Record") || contains(prefix, "<Workout") }
        if path.hasSuffix(".zip") || isZip(path) {
            let archive = try ZipArchive(path: path)
            try ZipInflater.stream(try healthDataMember(archive), of: archive) { (chunk) throws(TSDBError) in
                prefix += chunk.prefix(limit - prefix.count)
                return !enough()
            }
        } else {
            let file = try MappedFile(path: path)
            prefix = file.withBytes { Array($0.prefix(limit)) }
        }
        var scanner = HealthXMLScanner(source: path)
        var date: String?
        var me: [(String, String)] = []
        // The prefix ends inside some element: what was complete before it is all that is needed.
        let scanned = prefix.withUnsafeBytes { b in
            Result { () throws(TSDBError) in
                try scanner.feed(b) { e in
                    if e.isNamed("ExportDate") { date = e.attribute("value") }
                    if e.isNamed("Me") { me = e.attributes.map { ($0.name, $0.value) } }
                }
            }
        }
        _ = scanned
        return (date, me)
    }

    private static func contains(_ bytes: [UInt8], _ needle: StaticString) -> Bool {
        bytes.withUnsafeBytes { RoutePoints.find(needle, in: $0, from: 0) != nil }
    }
}
