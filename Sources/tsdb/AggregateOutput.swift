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

/// A number for people: integers plainly, others with up to 3 decimals (``writeHuman(_:to:)``'s text).
func human(_ v: Double) -> String {
    var bytes: [UInt8] = []
    RowBytes.append(to: &bytes, capacity: AggregateLines.numberLength) { writeHuman(v, to: &$0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// A number for machines: shortest exact text.
func exact(_ v: Double) -> String {
    var bytes: [UInt8] = []
    RowBytes.append(to: &bytes, capacity: AggregateLines.numberLength) { ExactNumberWriter.write(v, to: &$0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes ``human(_:)``'s text without making strings (long tables): integers below 10^15
/// plainly, other values rounded to 3 decimals in their shortest text, trailing zeros and point
/// dropped.
func writeHuman(_ v: Double, to out: inout RowBytes) {
    if v == v.rounded() && abs(v) < 1e15 { return out.write(Int64(v)) }
    let mark = out.count
    ((v * 1000).rounded() / 1000).write(to: &out)
    let drop = out.withBytes(since: mark) { text -> Int in
        guard text.contains(UInt8(ascii: ".")) else { return 0 }
        var drop = 0
        while text[text.count - 1 - drop] == UInt8(ascii: "0") { drop += 1 }
        return text[text.count - 1 - drop] == UInt8(ascii: ".") ? drop + 1 : drop
    }
    out.removeLast(drop)
}

/// Writes an aggregate's rows as they come (memory stays bounded whatever the number of rows).
struct AggregatePrinter {
    /// Names of category values, read only for a category type (the catalog's tables are built on
    /// first use, which a heart-rate query would pay for nothing).
    let catalog: () -> TypeCatalog
    let zone: TimeZoneRules
    let format: AggregateFormat
    let out = OutputBuffer()
    /// Whether ``header(_:)`` has been given the result.
    private var started = false
    private var cells = ValueCells()
    private var columns: [String] = []
    /// CSV, NDJSON and JSON lines (the other formats are made from strings).
    private(set) var lines: AggregateLines?
    /// A table's header and, until the widths are known, its first rows (``HeldTableRows``).
    private var tableHeader: [String] = []
    private var held = HeldTableRows()
    private var tableWidths: [Int]?
    /// Whether ``write(lines:)`` has written a row (JSON's first row goes without its comma).
    private var wroteLines = false
    private var scratch: [UInt8] = []
    /// Row bounds of tables and Markdown, written as bytes.
    private var stamps: LocalTimestampWriter

    init(catalog: @escaping () -> TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
        self.catalog = catalog
        self.zone = zone
        self.format = format
        stamps = LocalTimestampWriter(zone)
    }

    /// Whether rows can be written by ``lines`` alone (the engine then formats them on every core).
    var writesLines: Bool { lineStyle != nil }

    private var lineStyle: AggregateLines.Style? {
        switch format {
        case .csv: .csv
        case .ndjson: .ndjson
        case .json: .json
        case .table, .markdown: nil
        }
    }

    mutating func header(_ r: AggregateResult) {
        started = true
        cells = ValueCells(r)
        columns =
            r.kind == .category && r.statistics.isEmpty
            ? r.categoryValues.map { catalog().categoryName(r.type, $0) + " (min)" }
            : r.statistics.map(\.rawValue)
        if let lineStyle {
            lines = AggregateLines(
                result: r, keys: columns.map { jsonString(machineName($0)) }, style: lineStyle, zone: zone)
        }
        let header = ["start", "end"] + columns
        switch format {
        case .table: tableHeader = header
        case .markdown: out.write(renderMarkdown(header, []))
        case .csv: out.write(joined(header.map { csvQuoted(machineName($0)) }, by: ",") + "\n")
        case .json: out.write("[")
        case .ndjson: break
        }
    }

    /// `asleepCore (min)` → `asleepCore_min`, `value 3 (min)` → `value_3_min`.
    func machineName(_ column: String) -> String {
        String(column.map { $0 == " " ? "_" : $0 }.filter { $0 != "(" && $0 != ")" })
    }

    /// Writes rows made by ``lines``, in order.
    mutating func write(lines bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if format == .json && !wroteLines {
            bytes.withUnsafeBufferPointer { out.write(bytes: UnsafeBufferPointer(rebasing: $0.dropFirst())) }
        } else {
            bytes.withUnsafeBufferPointer { out.write(bytes: $0) }
        }
        wroteLines = true
    }

    mutating func row(_ row: AggregateRow) {
        if lines != nil {
            scratch.removeAll(keepingCapacity: true)
            lines!.append(row, to: &scratch)
            return write(lines: scratch)
        }
        guard started else { return }
        switch format {
        case .table:
            if let widths = tableWidths {
                Self.tableRow(row, widths: widths, cells, &stamps, to: &scratch)
                return out.write(bytes: scratch)
            }
            var ends: [Int] = []  // each cell's end in the row
            let capacity = 2 * LocalTimestampWriter.length + columns.count * AggregateLines.numberLength
            RowBytes.append(to: &held.text, capacity: capacity) { out in
                stamps.write(row.start, to: &out)
                ends.append(out.count)
                stamps.write(row.end, to: &out)
                ends.append(out.count)
                cells.each(of: row) { v in
                    if let v { writeHuman(v, to: &out) }
                    ends.append(out.count)
                }
            }
            held.endRow(cellEnds: ends)
            if held.rows >= StreamingTable.sample { releaseTable() }
        case .markdown:
            Self.markdownRow(row, columns: columns.count, cells, &stamps, to: &scratch)
            out.write(bytes: scratch)
        case .csv, .ndjson, .json:
            break  // written by `lines`
        }
    }

    /// Writes the header and the rows held back, with widths that fit them; later rows have those
    /// widths (a wider cell widens only its own line), as in ``StreamingTable``.
    private mutating func releaseTable() {
        let widths = held.widths(header: tableHeader)
        tableWidths = widths
        out.write(StreamingTable.line(tableHeader, widths))
        out.write(StreamingTable.line(widths.map { String(repeating: "-", count: $0) }, widths))
        scratch.removeAll(keepingCapacity: true)
        held.write(widths: widths, to: &scratch)
        out.write(bytes: scratch)
        held = HeldTableRows()
    }

    // Rows are written by static functions given only what they change (the timestamp writer,
    // the scratch bytes): a method mutating the whole printer, or a copy of the result, retained
    // and released the result's arrays per row (a seventh of five years of minutes as a table in perf).

    /// A table row once the widths are known, made as bytes: the same text as
    /// `StreamingTable.line` of ``human(_:)`` cells.
    private static func tableRow(
        _ row: AggregateRow, widths: [Int], _ cells: ValueCells, _ stamps: inout LocalTimestampWriter,
        to scratch: inout [UInt8]
    ) {
        let capacity = widths.reduce(8) { $0 + max($1, 32) + 2 }
        scratch.removeAll(keepingCapacity: true)
        RowBytes.append(to: &scratch, capacity: capacity) { out in
            var column = 0
            func padded(_ write: (inout RowBytes) -> Void) {
                if column > 0 { out.write("  ") }
                let mark = out.count
                write(&out)
                out.spaces(widths[column] - (out.count - mark))
                column += 1
            }
            padded { stamps.write(row.start, to: &$0) }
            padded { stamps.write(row.end, to: &$0) }
            cells.each(of: row) { v in padded { if let v { writeHuman(v, to: &$0) } } }
            out.byte(UInt8(ascii: "\n"))
        }
    }

    /// A Markdown row made as bytes: the same text as `markdownLine` of ``human(_:)`` cells.
    private static func markdownRow(
        _ row: AggregateRow, columns: Int, _ cells: ValueCells, _ stamps: inout LocalTimestampWriter,
        to scratch: inout [UInt8]
    ) {
        let capacity = 64 + 2 * LocalTimestampWriter.length + columns * (AggregateLines.numberLength + 3)
        scratch.removeAll(keepingCapacity: true)
        RowBytes.append(to: &scratch, capacity: capacity) { out in
            out.write("| ")
            stamps.write(row.start, to: &out)
            out.write(" | ")
            stamps.write(row.end, to: &out)
            cells.each(of: row) { v in
                out.write(" | ")
                if let v { writeHuman(v, to: &out) }
            }
            out.write(" |\n")
        }
    }

    mutating func finish() {
        if format == .table && tableWidths == nil { releaseTable() }
        if format == .json { out.write(wroteLines ? "\n]\n" : "]\n") }
        out.flush()
    }
}

/// A table's first rows, held back as bytes until the column widths are known (strings per cell
/// were half of a year's daily query in-process): each row's text is appended to ``text`` and
/// ``endRow(cellEnds:)`` notes where its cells end. Cells are timestamps and numbers, all ASCII, so
/// a cell's bytes are its width.
struct HeldTableRows {
    var text: [UInt8] = []
    private var lengths: [Int] = []
    private(set) var rows = 0

    /// Ends the row appended to ``text``: `cellEnds` are its cells' ends, counted from its start.
    mutating func endRow(cellEnds: [Int]) {
        var previous = 0
        for end in cellEnds {
            lengths.append(end - previous)
            previous = end
        }
        rows += 1
    }

    /// Each column's width: its header's or its longest held cell's.
    func widths(header: [String]) -> [Int] {
        var widths = header.map(\.count)
        for (i, length) in lengths.enumerated() { widths[i % widths.count] = max(widths[i % widths.count], length) }
        return widths
    }

    /// The held rows as `StreamingTable.line` writes them: cells padded to `widths`, two spaces apart.
    func write(widths: [Int], to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + rows * widths.reduce(1) { $0 + $1 + 2 })
        var offset = 0
        for (i, length) in lengths.enumerated() {
            let column = i % widths.count
            if column > 0 { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2)) }
            bytes.append(contentsOf: text[offset..<offset + length])
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: widths[column] - length))
            if column == widths.count - 1 { bytes.append(UInt8(ascii: "\n")) }
            offset += length
        }
    }
}

/// CSV, NDJSON or JSON lines of aggregate rows, each made in place and appended at once (no
/// strings per row: five years of hours are 43,800 rows). A long aggregate formats each piece's
/// rows with its own copy. JSON rows each start with `,` and a new line; the printer drops the
/// first row's comma, since only it knows which row comes first.
struct AggregateLines: AggregateRowFormatter {
    enum Style { case csv, ndjson, json }
    /// The longest text of a number: `-1.7976931348623157e+308`.
    static let numberLength = 24
    /// The statistics of the value columns, or nil when the columns are minutes per category value.
    let statistics: [Statistic]?
    let categoryValues: [Int64]
    /// Each column's JSON key and colon (NDJSON, JSON).
    let keys: FixedTexts
    let style: Style
    let maximumRowLength: Int
    var stamps: LocalTimestampWriter
    /// Means of whole numbers share a few fractions, written once each.
    var numbers = ExactNumberWriter()

    init(result r: AggregateResult, keys: [String], style: Style, zone: TimeZoneRules) {
        statistics = r.kind == .category && r.statistics.isEmpty ? nil : r.statistics
        categoryValues = r.categoryValues
        self.keys = FixedTexts(keys.map { Array(($0 + ":").utf8) })
        self.style = style
        stamps = LocalTimestampWriter(zone)
        // Separators, quotes and keys around two timestamps, then a separator, key and number per cell.
        maximumRowLength =
            32 + 2 * LocalTimestampWriter.length + self.keys.totalCount + keys.count * (1 + Self.numberLength)
    }

    mutating func append(_ row: AggregateRow, to bytes: inout [UInt8]) {
        RowBytes.append(to: &bytes, capacity: maximumRowLength) { out in write(row, to: &out) }
    }

    private mutating func write(_ row: AggregateRow, to out: inout RowBytes) {
        switch style {
        case .csv: break
        case .ndjson: out.write("{\"start\":\"")
        case .json: out.write(",\n  {\"start\":\"")
        }
        stamps.write(row.start, to: &out)
        if style == .csv { out.byte(UInt8(ascii: ",")) } else { out.write("\",\"end\":\"") }
        stamps.write(row.end, to: &out)
        if style != .csv { out.byte(UInt8(ascii: "\"")) }
        var column = 0
        if let statistics {
            for s in statistics {
                Self.cell(row.values[s], column, style, keys, &numbers, &out)
                column += 1
            }
        } else {
            for v in categoryValues {
                Self.cell((row.seconds[v] ?? 0) / 60, column, style, keys, &numbers, &out)
                column += 1
            }
        }
        switch style {
        case .csv: out.byte(UInt8(ascii: "\n"))
        case .ndjson: out.write("}\n")
        case .json: out.byte(UInt8(ascii: "}"))
        }
    }

    /// A value cell. Static, mutating only the number writer: a nested function capturing the row
    /// was a call per cell with a run-time exclusivity check, and a method mutating the whole
    /// formatter made each row retain its arrays (shared with the other thread's formatter: five
    /// years of minutes took three times as long).
    @inline(__always)
    private static func cell(
        _ value: Double?, _ column: Int, _ style: Style, _ keys: FixedTexts, _ numbers: inout ExactNumberWriter,
        _ out: inout RowBytes
    ) {
        if style == .csv {
            out.byte(UInt8(ascii: ","))
            if let value { numbers.write(value, to: &out) }
        } else if let value {
            out.byte(UInt8(ascii: ","))
            keys.write(column, to: &out)
            numbers.write(value, to: &out)
        }
    }
}

/// What makes a row's value cells: its statistics, or minutes per category value.
struct ValueCells {
    private var statistics: [Statistic] = []
    /// Nil: the cells are the statistics.
    private var categoryValues: [Int64]?

    init() {}

    init(_ result: AggregateResult) {
        statistics = result.statistics
        if result.kind == .category && result.statistics.isEmpty { categoryValues = result.categoryValues }
    }

    /// Each value cell of `row`, in order (nil: empty).
    func each(of row: AggregateRow, _ body: (Double?) -> Void) {
        if let categoryValues {
            for v in categoryValues { body((row.seconds[v] ?? 0) / 60) }
        } else {
            for s in statistics { body(row.values[s]) }
        }
    }
}

/// Byte strings fixed when made, read without reference counting: a formatter's array of arrays
/// was retained and released per cell, by both threads' copies of it at once (half of five years
/// of minute buckets as NDJSON in perf).
final class FixedTexts: @unchecked Sendable {
    // Sendable: written only in init.
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let ends: UnsafeMutableBufferPointer<Int>
    var totalCount: Int { bytes.count }

    init(_ texts: [[UInt8]]) {
        bytes = .allocate(capacity: texts.reduce(0) { $0 + $1.count })
        ends = .allocate(capacity: texts.count)
        var end = 0
        for (i, text) in texts.enumerated() {
            _ = bytes[end...].initialize(fromContentsOf: text)
            end += text.count
            ends[i] = end
        }
    }

    deinit {
        bytes.deallocate()
        ends.deallocate()
    }

    /// Writes text `i`.
    @inline(__always)
    func write(_ i: Int, to out: inout RowBytes) {
        let start = i == 0 ? 0 : ends[i - 1]
        out.write(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: bytes[start..<ends[i]])))
    }
}

func printAggregate(_ r: AggregateResult, catalog: TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
    var printer = AggregatePrinter(catalog: { catalog }, zone: zone, format: format)
    printer.header(r)
    for row in r.rows { printer.row(row) }
    printer.finish()
}
