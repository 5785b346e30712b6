import ArgumentParser
import TSDB

enum AggregateFormat: String, CaseIterable {
    case table, csv, json, ndjson, markdown

    static func parse(_ text: String) throws -> AggregateFormat {
        guard let f = AggregateFormat(rawValue: text) else {
            throw ValidationError("--format must be one of: " + allCases.map(\.rawValue).joined(separator: ", "))
        }
        return f
    }
}

/// A number for people: integers plainly, others with up to 3 decimals.
func human(_ v: Double) -> String {
    if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
    var s = fixed(v, 3)
    while s.hasSuffix("0") { s.removeLast() }
    if s.hasSuffix(".") { s.removeLast() }
    return s
}

/// A number for machines: shortest exact text.
func exact(_ v: Double) -> String {
    var out = OutputBytes()
    writeExact(v, to: &out)
    return String(decoding: out.bytes, as: UTF8.self)
}

/// Writes ``exact(_:)``'s text to `out` without making a String: integers below 10^15 digit by
/// digit, other values as their shortest round-tripping text.
func writeExact(_ v: Double, to out: inout OutputBytes) {
    guard abs(v) < 1e15 && Double(Int64(v)) == v else {
        v.write(to: &out)
        return
    }
    let n = Int64(v)
    // Digits from the right into a stack buffer, then one append.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
        var magnitude = n.magnitude
        var i = 20
        repeat {
            i -= 1
            digits[i] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if n < 0 {
            i -= 1
            digits[i] = UInt8(ascii: "-")
        }
        out.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[i...]))
    }
}

/// Writes an aggregate's rows as they come (memory stays bounded whatever the number of rows).
struct AggregatePrinter {
    let catalog: TypeCatalog
    let zone: TimeZoneRules
    let format: AggregateFormat
    let out = OutputBuffer()
    private var result: AggregateResult?
    private var columns: [String] = []
    /// CSV and NDJSON lines (the other formats are made from strings).
    private(set) var lines: AggregateLines?
    private var table: StreamingTable?
    private var rows = 0

    init(catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
        self.catalog = catalog
        self.zone = zone
        self.format = format
    }

    /// Whether rows can be written by ``lines`` alone (the engine then formats them on every core).
    var writesLines: Bool { format == .csv || format == .ndjson }

    mutating func header(_ r: AggregateResult) {
        result = r
        columns =
            r.kind == .category && r.statistics.isEmpty
            ? r.categoryValues.map { catalog.categoryName(r.type, $0) + " (min)" }
            : r.statistics.map(\.rawValue)
        if writesLines {
            lines = AggregateLines(
                result: r, keys: columns.map { jsonString(machineName($0)) }, ndjson: format == .ndjson, zone: zone)
        }
        let header = ["start", "end"] + columns
        switch format {
        case .table: table = StreamingTable(header: header)
        case .markdown: out.write(renderMarkdown(header, []))
        case .csv: out.write(header.map { csvQuoted(machineName($0)) }.joined(separator: ",") + "\n")
        case .json: out.write("[")
        case .ndjson: break
        }
    }

    /// `asleepCore (min)` → `asleepCore_min`, `value 3 (min)` → `value_3_min`.
    func machineName(_ column: String) -> String {
        String(column.map { $0 == " " ? "_" : $0 }.filter { $0 != "(" && $0 != ")" })
    }

    mutating func row(_ row: AggregateRow) {
        defer { rows += 1 }
        if lines != nil { return out.write { lines!.append(row, to: &$0.bytes) } }
        guard let r = result else { return }
        func cells(_ number: (Double) -> String) -> [String] {
            var out: [String] = []
            AggregateLines.eachCell(of: row, in: r) { out.append($0.map(number) ?? "") }
            return out
        }
        func bounds() -> (String, String) { (localTimestamp(row.start, zone), localTimestamp(row.end, zone)) }
        switch format {
        case .table:
            let (start, end) = bounds()
            table!.add([start, end] + cells(human), to: out)
        case .markdown:
            let (start, end) = bounds()
            out.write(markdownLine([start, end] + cells(human)))
        case .csv, .ndjson:
            break  // written by `lines`
        case .json:
            let (start, end) = bounds()
            var fields = ["\"start\":\"\(start)\"", "\"end\":\"\(end)\""]
            for (name, value) in zip(columns, cells(exact)) where !value.isEmpty {
                fields.append(jsonString(machineName(name)) + ":" + value)
            }
            let object = "{" + fields.joined(separator: ",") + "}"
            out.write((rows == 0 ? "\n  " : ",\n  ") + object)
        }
    }

    mutating func finish() {
        if format == .table { table?.finish(to: out) }
        if format == .json { out.write(rows == 0 ? "]\n" : "\n]\n") }
        out.flush()
    }
}

/// CSV or NDJSON lines of aggregate rows, written as bytes in place (no strings per row: five
/// years of hours are 43,800 rows). A long aggregate formats each piece's rows with its own copy.
struct AggregateLines: AggregateRowFormatter {
    /// The statistics of the value columns, or nil when the columns are minutes per category value.
    let statistics: [Statistic]?
    let categoryValues: [Int64]
    /// Each column's JSON key and colon (NDJSON).
    let keys: [[UInt8]]
    let ndjson: Bool
    var stamps: LocalTimestampWriter

    init(result r: AggregateResult, keys: [String], ndjson: Bool, zone: TimeZoneRules) {
        statistics = r.kind == .category && r.statistics.isEmpty ? nil : r.statistics
        categoryValues = r.categoryValues
        self.keys = keys.map { Array(($0 + ":").utf8) }
        self.ndjson = ndjson
        stamps = LocalTimestampWriter(zone)
    }

    /// Each value cell of `row` in `result`'s columns, in order (nil: empty).
    static func eachCell(of row: AggregateRow, in result: AggregateResult, _ body: (Double?) -> Void) {
        if result.kind == .category && result.statistics.isEmpty {
            for v in result.categoryValues { body((row.seconds[v] ?? 0) / 60) }
        } else {
            for s in result.statistics { body(row.values[s]) }
        }
    }

    mutating func append(_ row: AggregateRow, to bytes: inout [UInt8]) {
        var out = OutputBytes()
        swap(&out.bytes, &bytes)
        defer { swap(&out.bytes, &bytes) }
        func ascii(_ text: StaticString) {
            out.bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        ascii(ndjson ? "{\"start\":\"" : "")
        stamps.append(row.start, to: &out.bytes)
        ascii(ndjson ? "\",\"end\":\"" : ",")
        stamps.append(row.end, to: &out.bytes)
        if ndjson { ascii("\"") }
        var column = 0
        func cell(_ value: Double?) {
            defer { column += 1 }
            if ndjson {
                guard let value else { return }
                ascii(",")
                out.bytes.append(contentsOf: keys[column])
                writeExact(value, to: &out)
            } else {
                ascii(",")
                if let value { writeExact(value, to: &out) }
            }
        }
        if let statistics {
            for s in statistics { cell(row.values[s]) }
        } else {
            for v in categoryValues { cell((row.seconds[v] ?? 0) / 60) }
        }
        ascii(ndjson ? "}\n" : "\n")
    }
}

func printAggregate(_ r: AggregateResult, catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
    var printer = AggregatePrinter(catalog: catalog, zone: zone, format: format)
    printer.header(r)
    for row in r.rows { printer.row(row) }
    printer.finish()
}
