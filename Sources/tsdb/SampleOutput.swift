import TSDB

enum OutputFormat: String, CaseIterable {
    case table, csv, json, ndjson
}

/// Streams samples to stdout as a table or a JSON array (CSV and NDJSON go through the
/// engine's columnar ``Store/writeSamples(of:from:to:format:source:flush:)``).
struct SampleWriter {
    let format: OutputFormat
    /// When set, timestamps are shown in this zone instead of as written (table only).
    let zone: TimeZoneRules?
    let out = OutputBuffer()
    private var count = 0
    private var stamps: LocalTimestampWriter?
    private var cells = TableCells()

    init(format: OutputFormat, zone: TimeZoneRules? = nil) {
        self.format = format
        self.zone = zone
        stamps = zone.map(LocalTimestampWriter.init)
        precondition(format == .json || format == .table, "CSV and NDJSON are written by Store.writeSamples")
        if format == .json {
            out.write("[")
        } else {
            out.write(
                pad("start", 26) + pad("end", 26) + pad("value", 10) + pad("unit", 10) + pad("source / device", 28)
                    + "metadata\n")
        }
    }

    private var line: [UInt8] = []

    mutating func write(_ s: Sample) {
        count += 1
        line.removeAll(keepingCapacity: true)
        if format == .json {
            line.append(contentsOf: (count == 1 ? "\n  " : ",\n  ").utf8)
            DayFileWriter.appendSample(s, to: &line)
        } else {
            appendTableRow(s)
        }
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
        RowBytes.append(to: &line, capacity: LocalTimestampWriter.length) { stamps!.write(t.microseconds, to: &$0) }
    }

    /// `pad` of the ASCII text written since `mark`.
    private mutating func padASCII(from mark: Int, to width: Int) {
        let written = line.count - mark
        line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: written >= width ? 1 : width - written))
    }

    func finish() {
        if format == .json { out.write(count == 0 ? "]\n" : "\n]\n") }
        out.flush()
    }

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
