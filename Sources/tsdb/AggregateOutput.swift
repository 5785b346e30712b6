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

/// An instant as ISO 8601 in `zone`, with that zone's offset.
func localTime(_ micros: Int64, _ zone: TimeZoneRules) -> String {
    let offset = zone.offset(atUTC: micros / 1_000_000)
    return Timestamp(microseconds: micros, form: TimeForm(offsetMinutes: Int16(offset / 60), fractionDigits: 0, isZulu: false)).description
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

func printAggregate(_ r: AggregateResult, catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
    let out = OutputBuffer()
    defer { out.flush() }
    let category = r.kind == .category
    let columns: [String] = category ? r.categoryValues.map { catalog.categoryName(r.type, $0) + "_min" } : r.statistics.map(\.rawValue)
    func cells(_ row: AggregateRow, _ number: (Double) -> String) -> [String] {
        category ? r.categoryValues.map { number((row.seconds[$0] ?? 0) / 60) } : r.statistics.map { row.values[$0].map(number) ?? "" }
    }
    switch format {
    case .table, .markdown:
        let header = ["start", "end"] + columns
        let rows = r.rows.map { [localTime($0.start, zone), localTime($0.end, zone)] + cells($0, human) }
        if format == .table {
            out.write(renderTable(header, rows))
        } else {
            out.write("| " + header.joined(separator: " | ") + " |\n|" + header.map { _ in "---" }.joined(separator: "|") + "|\n")
            for row in rows { out.write("| " + row.joined(separator: " | ") + " |\n") }
        }
    case .csv:
        out.write((["start", "end"] + columns).joined(separator: ",") + "\n")
        for row in r.rows { out.write(([localTime(row.start, zone), localTime(row.end, zone)] + cells(row, exact)).joined(separator: ",") + "\n") }
    case .json, .ndjson:
        if format == .json { out.write("[") }
        for (i, row) in r.rows.enumerated() {
            var fields = ["\"start\":\"\(localTime(row.start, zone))\"", "\"end\":\"\(localTime(row.end, zone))\""]
            for (name, value) in zip(columns, cells(row, exact)) where !value.isEmpty { fields.append("\"\(name)\":\(value)") }
            let object = "{" + fields.joined(separator: ",") + "}"
            out.write(format == .json ? (i == 0 ? "\n  " : ",\n  ") + object : object + "\n")
        }
        if format == .json { out.write(r.rows.isEmpty ? "]\n" : "\n]\n") }
    }
}
