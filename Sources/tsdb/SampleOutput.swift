import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum OutputFormat: String, CaseIterable {
    case table, csv, json, ndjson
}

/// Samples as a table for people: the engine writes the rows from decoded columns
/// (``Store/writeSampleTable(of:from:to:style:source:flush:)``) with the cells of texts made here,
/// once per segment and text: padded to their width in characters, control characters shown as
/// escapes.
enum SampleTable {
    /// Columns' widths in characters, each cell followed by a space at least.
    static let (timeWidth, valueWidth, unitWidth, whoWidth) = (26, 10, 10, 28)

    static let header =
        pad("start", timeWidth) + pad("end", timeWidth) + pad("value", valueWidth) + pad("unit", unitWidth)
        + pad("source / device", whoWidth) + "metadata\n"

    /// Timestamps as recorded, or in `zone`.
    static func style(zone: TimeZoneRules?) -> SampleTableStyle {
        var style = SampleTableStyle(
            zone: zone, unit: { Array(pad(displaySafe($0.string ?? ""), unitWidth).utf8) },
            sourceAndDevice: { Array(pad(displaySafe(who($0, $1)), whoWidth).utf8) },
            metadata: { Array(displaySafe($0.string ?? "").utf8) })
        (style.startWidth, style.endWidth, style.valueWidth) = (timeWidth, timeWidth, valueWidth)
        return style
    }

    /// `source / device`, either alone when the other is missing. Concatenated, not `joined`: the
    /// generic `joined` made the runtime look up an associated type's conformance, ~176,000
    /// instructions of a one-day listing (8%) the first time.
    static func who(_ source: OptionalText, _ device: OptionalText) -> String {
        guard let device = device.string.map(DeviceName.display) else { return source.string ?? "" }
        return source.string.map { $0 + " / " + device } ?? device
    }

    /// Writes the header and the samples of `type` starting in `[from, to)` to stdout.
    static func write(
        _ store: Store, _ type: String, from: Int64, to: Int64, zone: TimeZoneRules?, source: String?
    ) throws {
        let out = OutputBuffer()
        out.write(header)
        try store.writeSampleTable(of: type, from: from, to: to, style: style(zone: zone), source: source) {
            out.write(bytes: $0)
        }
        out.flush()
    }
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

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
