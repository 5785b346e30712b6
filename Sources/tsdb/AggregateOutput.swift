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

/// Writes an aggregate's rows as they come (memory stays bounded whatever the number of rows).
struct AggregatePrinter {
    let catalog: TypeCatalog
    let zone: TimeZoneRules
    let format: AggregateFormat
    let out = OutputBuffer()
    private var result: AggregateResult?
    private var columns: [String] = []
    private var table: StreamingTable?
    private var rows = 0

    init(catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
        self.catalog = catalog
        self.zone = zone
        self.format = format
    }

    mutating func header(_ r: AggregateResult) {
        result = r
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
        guard let r = result else { return }
        /// Each value cell of the row, in column order (nil: empty).
        func eachCell(_ body: (Double?) -> Void) {
            if r.kind == .category && r.statistics.isEmpty {
                for v in r.categoryValues { body((row.seconds[v] ?? 0) / 60) }
            } else {
                for s in r.statistics { body(row.values[s]) }
            }
        }
        func cells(_ number: (Double) -> String) -> [String] {
            var out: [String] = []
            eachCell { out.append($0.map(number) ?? "") }
            return out
        }
        let bounds = (localTimestamp(row.start, zone), localTimestamp(row.end, zone))
        switch format {
        case .table: table!.add([bounds.0, bounds.1] + cells(human), to: out)
        case .markdown: out.write(markdownLine([bounds.0, bounds.1] + cells(human)))
        case .csv:
            // Piece by piece: no arrays of cells per row (a year of hours is 8,760 rows).
            out.write(bounds.0 + "," + bounds.1)
            eachCell { out.write("," + ($0.map(exact) ?? "")) }
            out.write("\n")
        case .json, .ndjson:
            var fields = ["\"start\":\"\(bounds.0)\"", "\"end\":\"\(bounds.1)\""]
            for (name, value) in zip(columns, cells(exact)) where !value.isEmpty {
                fields.append(jsonString(machineName(name)) + ":" + value)
            }
            let object = "{" + fields.joined(separator: ",") + "}"
            out.write(format == .json ? (rows == 0 ? "\n  " : ",\n  ") + object : object + "\n")
        }
        rows += 1
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
