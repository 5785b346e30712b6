import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum OutputFormat: String, CaseIterable {
    case table, csv, json, ndjson
}

/// Streams samples to stdout as a table (CSV, NDJSON and JSON go through the engine's columnar
/// ``Store/writeSamples(of:from:to:format:source:flush:)``).
struct SampleTableWriter {
    let out = OutputBuffer()
    /// When set, timestamps are shown in this zone instead of as written.
    private var stamps: LocalTimestampWriter?
    private var cells = TableCells()
    private var line: [UInt8] = []

    init(zone: TimeZoneRules? = nil) {
        stamps = zone.map(LocalTimestampWriter.init)
        out.write(
            pad("start", 26) + pad("end", 26) + pad("value", 10) + pad("unit", 10) + pad("source / device", 28)
                + "metadata\n")
    }

    mutating func write(_ s: Sample) {
        line.removeAll(keepingCapacity: true)
        appendTableRow(s)
        out.write(bytes: line)
    }

    /// The table row of `s`, as ``write(_:)`` writes it.
    mutating func tableRow(_ s: Sample) -> [UInt8] {
        line.removeAll(keepingCapacity: true)
        appendTableRow(s)
        return line
    }

    /// A table row as bytes: the text `pad` makes of each cell's string. Timestamps and numbers are
    /// ASCII, so their bytes are their width; the strings samples repeat come from ``TableCells``.
    private mutating func appendTableRow(_ s: Sample) {
        timestamp(s.start)
        padASCII(from: 0, to: 26)
        let end = line.count
        if s.end != s.start { timestamp(s.end) }
        padASCII(from: end, to: 26)
        let value = line.count
        DayFileWriter.appendValue(s.value, to: &line)
        padASCII(from: value, to: 10)
        line.append(contentsOf: cells.unit(s.unit.string))
        line.append(contentsOf: cells.sourceAndDevice(s.source.string, s.device.string))
        line.append(contentsOf: cells.metadata(s.metadata.string))
        line.append(UInt8(ascii: "\n"))
    }

    private mutating func timestamp(_ t: Timestamp) {
        guard stamps != nil else { return ISO8601.append(t.microseconds, t.form, to: &line) }
        stamps!.append(t.microseconds, to: &line)
    }

    /// `pad` of the ASCII text written since `mark`.
    private mutating func padASCII(from mark: Int, to width: Int) {
        let written = line.count - mark
        line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: written >= width ? 1 : width - written))
    }

    func finish() { out.flush() }
}

/// Samples as CSV (with its header), NDJSON or a JSON array, from the lines the engine's columnar
/// ``Store/writeSamples(of:from:to:format:source:flush:)`` makes (`tsdb query` and `tsdb export`).
struct SampleTextWriter {
    let out = OutputBuffer()
    /// What to ask the engine for: JSON arrays are made of NDJSON lines.
    let engineFormat: Store.TextFormat
    private var array: JSONArrayOfLines?

    init(format: OutputFormat) {
        precondition(format != .table, "tables are written by SampleTableWriter")
        engineFormat = format == .csv ? .csv : .ndjson
        if format == .csv { out.write(DayFileWriter.csvHeader) }
        if format == .json { array = JSONArrayOfLines() }
    }

    /// Writes a chunk of the engine's lines.
    mutating func write(_ lines: [UInt8]) {
        if array != nil { array!.write(lines: lines, to: out) } else { out.write(bytes: lines) }
    }

    func finish() {
        array?.finish(to: out)
        out.flush()
    }
}

/// A JSON array of NDJSON lines: `[`, each line on its own line indented by two spaces, commas
/// between, `]` (what `tsdb query --format json` wrote when it made each sample's text itself).
struct JSONArrayOfLines {
    private var lines = 0
    private var scratch: [UInt8] = []

    /// Writes whole lines, each ending in a new line.
    mutating func write(lines bytes: [UInt8], to out: OutputBuffer) {
        scratch.removeAll(keepingCapacity: true)
        scratch.reserveCapacity(bytes.count + bytes.count / 64 + 8)
        if lines == 0 && !bytes.isEmpty { scratch.append(UInt8(ascii: "[")) }
        bytes.withUnsafeBufferPointer { b in
            var start = 0
            while start < b.count, let found = memchr(b.baseAddress! + start, 0x0A, b.count - start) {
                let newline = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - b.baseAddress!
                if lines > 0 { scratch.append(UInt8(ascii: ",")) }
                scratch.append(contentsOf: "\n  ".utf8)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: b[start..<newline]))
                lines += 1
                start = newline + 1
            }
        }
        out.write(bytes: scratch)
    }

    func finish(to out: OutputBuffer) { out.write(lines == 0 ? "[]\n" : "\n]\n") }
}

/// The cells of a sample table that samples repeat (units, sources and devices, metadata), made
/// once each as `pad` and `displaySafe` make them: a week of heart rate is 7,000 rows of the same
/// few strings. At most ``limit`` of each are kept, so memory stays bounded.
struct TableCells {
    private struct Who: Hashable {
        let source: String?, device: String?
    }
    private var units: [String?: [UInt8]] = [:]
    private var whos: [Who: [UInt8]] = [:]
    private var metadatas: [String?: [UInt8]] = [:]
    static let limit = 1024
    /// Cells kept, of all kinds.
    var kept: Int { units.count + whos.count + metadatas.count }

    mutating func unit(_ unit: String?) -> [UInt8] {
        Self.cached(unit, in: &units) { Array(pad(displaySafe($0 ?? ""), 10).utf8) }
    }

    mutating func sourceAndDevice(_ source: String?, _ device: String?) -> [UInt8] {
        Self.cached(Who(source: source, device: device), in: &whos) { who in
            let text = [who.source, who.device.map(DeviceName.display)].compactMap { $0 }.joined(separator: " / ")
            return Array(pad(displaySafe(text), 28).utf8)
        }
    }

    mutating func metadata(_ metadata: String?) -> [UInt8] {
        Self.cached(metadata, in: &metadatas) { Array(displaySafe($0 ?? "").utf8) }
    }

    private static func cached<Key: Hashable>(
        _ key: Key, in table: inout [Key: [UInt8]], _ make: (Key) -> [UInt8]
    ) -> [UInt8] {
        if let bytes = table[key] { return bytes }
        if table.count >= limit { table.removeAll(keepingCapacity: true) }
        let bytes = make(key)
        table[key] = bytes
        return bytes
    }
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
