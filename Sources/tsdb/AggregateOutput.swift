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
    v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
}

/// Writes ``exact(_:)``'s text to `out` without making a String.
func writeExact(_ v: Double, to out: inout OutputBytes) {
    // As exact(_:) decides, without a call to round().
    guard abs(v) < 1e15 && Double(Int64(v)) == v else {
        v.write(to: &out)
        return
    }
    let n = Int64(v)
    if n < 0 { out.bytes.append(UInt8(ascii: "-")) }
    var magnitude = n.magnitude
    let first = out.bytes.count
    repeat {
        out.bytes.append(UInt8(truncatingIfNeeded: 48 + magnitude % 10))
        magnitude /= 10
    } while magnitude > 0
    out.bytes[first...].reverse()
}

/// Writes an aggregate's rows as they come (memory stays bounded whatever the number of rows).
struct AggregatePrinter {
    let catalog: TypeCatalog
    let zone: TimeZoneRules
    let format: AggregateFormat
    let out = OutputBuffer()
    private var result: AggregateResult?
    /// The statistics of the value columns, or nil when the columns are minutes per category value.
    private var statistics: [Statistic]?
    private var categoryValues: [Int64] = []
    private var columns: [String] = []
    private var stamps: LocalTimestampWriter
    private var table: StreamingTable?
    private var rows = 0

    init(catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
        self.catalog = catalog
        self.zone = zone
        self.format = format
        stamps = LocalTimestampWriter(zone)
    }

    mutating func header(_ r: AggregateResult) {
        result = r
        statistics = r.kind == .category && r.statistics.isEmpty ? nil : r.statistics
        categoryValues = r.categoryValues
        columns =
            r.kind == .category && r.statistics.isEmpty
            ? r.categoryValues.map { catalog.categoryName(r.type, $0) + " (min)" }
            : r.statistics.map(\.rawValue)
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
        guard format != .csv else { return writeCSV(row) }
        guard let r = result else { return }
        func eachCell(_ body: (Double?) -> Void) { self.eachCell(of: row, body) }
        func cells(_ number: (Double) -> String) -> [String] {
            var out: [String] = []
            eachCell { out.append($0.map(number) ?? "") }
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
        case .csv:
            writeCSV(row)
        case .json, .ndjson:
            let (start, end) = bounds()
            var fields = ["\"start\":\"\(start)\"", "\"end\":\"\(end)\""]
            for (name, value) in zip(columns, cells(exact)) where !value.isEmpty {
                fields.append(jsonString(machineName(name)) + ":" + value)
            }
            let object = "{" + fields.joined(separator: ",") + "}"
            out.write(format == .json ? (rows == 0 ? "\n  " : ",\n  ") + object : object + "\n")
        }
    }

    /// Each value cell of `row`, in column order (nil: empty).
    private func eachCell(of row: AggregateRow, _ body: (Double?) -> Void) {
        if let statistics {
            for s in statistics { body(row.values[s]) }
        } else {
            for v in categoryValues { body((row.seconds[v] ?? 0) / 60) }
        }
    }

    /// A CSV line written as bytes in place: no strings per row (five years of hours are 43,800 rows).
    private mutating func writeCSV(_ row: AggregateRow) {
        out.write { bytes in
            stamps.append(row.start, to: &bytes.bytes)
            bytes.bytes.append(UInt8(ascii: ","))
            stamps.append(row.end, to: &bytes.bytes)
            eachCell(of: row) { value in
                bytes.bytes.append(UInt8(ascii: ","))
                if let value { writeExact(value, to: &bytes) }
            }
            bytes.bytes.append(UInt8(ascii: "\n"))
        }
    }

    mutating func finish() {
        if format == .table { table?.finish(to: out) }
        if format == .json { out.write(rows == 0 ? "]\n" : "\n]\n") }
        out.flush()
    }
}

func printAggregate(_ r: AggregateResult, catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
    var printer = AggregatePrinter(catalog: catalog, zone: zone, format: format)
    printer.header(r)
    for row in r.rows { printer.row(row) }
    printer.finish()
}
