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

/// `v × 1000` rounded half away from zero, as `(v * 1000).rounded()` for |v| < 10^12: the
/// difference from its truncation is exact there (both below 2^50, within 1 of each other).
private func thousandthsRounded(_ v: Double) -> Int64 {
    let t = v * 1000
    let k = Int64(t)
    let r = t - Double(k)
    return r >= 0.5 ? k + 1 : r <= -0.5 ? k - 1 : k
}

/// Writes ``human(_:)``'s text without making strings (long tables): integers below 10^15
/// plainly, other values rounded to 3 decimals in their shortest text, trailing zeros and point
/// dropped.
func writeHuman(_ v: Double, to out: inout RowBytes) {
    // Whole and rounded by truncation and comparison, not `rounded()`: a call to libm's `round`
    // each (there is no instruction for rounding half away from zero here).
    if abs(v) < 1e15 && Double(Int64(v)) == v { return out.write(Int64(v)) }
    // Thousandths k below 10^15 are exact, and below 10^12 doubles are closer than 0.0005 apart, so
    // the shortest text of the double nearest k / 1000 is k / 1000's digits: written from k (the
    // stdlib's text of each mean was a sixth of five years of minutes as a table). 0 keeps its sign.
    if abs(v) < 1e12, case let k = thousandthsRounded(v), k != 0 {
        if k < 0 { out.byte(UInt8(ascii: "-")) }
        out.write(Int64(k.magnitude / 1000))
        let fraction = Int(k.magnitude % 1000)
        guard fraction != 0 else { return }
        // The point and three digits in one word, kept up to the last digit that is not zero.
        let (first, rest) = fraction.quotientAndRemainder(dividingBy: 100)
        let (second, third) = rest.quotientAndRemainder(dividingBy: 10)
        let digits = third != 0 ? 3 : second != 0 ? 2 : 1
        let word = 0x2E | UInt64(48 + first) << 8 | UInt64(48 + second) << 16 | UInt64(48 + third) << 24
        return out.write(words: (word.littleEndian, 0), count: 1 + digits)
    }
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
    private var columns: [String] = []
    /// What makes the rows' lines (a table's, its cells: ``AggregateTableCells``), on every core.
    private(set) var lines: AggregateLines?
    /// A table's header and, until the widths are known, its first rows (``HeldTableRows``).
    private var tableHeader: [String] = []
    private var held = HeldTableRows()
    private var tableWidths: [Int]?
    /// Whether ``write(lines:)`` has written a row (JSON's first row goes without its comma).
    private var wroteLines = false
    private var scratch: [UInt8] = []

    init(catalog: @escaping () -> TypeCatalog, zone: TimeZoneRules, format: AggregateFormat) {
        self.catalog = catalog
        self.zone = zone
        self.format = format
    }

    private var lineStyle: AggregateLines.Style {
        switch format {
        case .csv: .csv
        case .ndjson: .ndjson
        case .json: .json
        case .markdown: .markdown
        case .table: .tableCells
        }
    }

    mutating func header(_ r: AggregateResult) {
        started = true
        columns =
            r.kind == .category && r.statistics.isEmpty
            ? r.categoryValues.map { catalog().categoryName(r.type, $0) + " (min)" }
            : r.statistics.map(\.rawValue)
        lines = AggregateLines(
            result: r, keys: columns.map { jsonString(machineName($0)) }, style: lineStyle, zone: zone)
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
        // By UTF-8 bytes: none of the three is ever part of another character's bytes.
        var bytes: [UInt8] = []
        for b in column.utf8 where b != UInt8(ascii: "(") && b != UInt8(ascii: ")") {
            bytes.append(b == UInt8(ascii: " ") ? UInt8(ascii: "_") : b)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes rows made by ``lines``, in order.
    mutating func write(lines bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if format == .table {
            return bytes.withUnsafeBufferPointer { writeTable(cells: $0) }
        } else if format == .json && !wroteLines {
            bytes.withUnsafeBufferPointer { out.write(bytes: UnsafeBufferPointer(rebasing: $0.dropFirst())) }
        } else {
            bytes.withUnsafeBufferPointer { out.write(bytes: $0) }
        }
        wroteLines = true
    }

    mutating func row(_ row: AggregateRow) {
        guard started else { return }
        scratch.removeAll(keepingCapacity: true)
        lines!.append(row, to: &scratch)
        write(lines: scratch)
    }

    /// Table rows from their cells (``AggregateTableCells``): held back until the widths are known, then
    /// padded to them. Only the padding is done here: the cells were made on the core that
    /// computed their rows (formatting every row here took 314 ms of five years of minutes).
    private mutating func writeTable(cells text: UnsafeBufferPointer<UInt8>) {
        var rowStart = 0
        while rowStart < text.count, tableWidths == nil {
            let end = AggregateTableCells.end(of: text, from: rowStart)
            held.add(cells: UnsafeBufferPointer(rebasing: text[rowStart..<end]))
            rowStart = end + 1
            if held.rows >= StreamingTable.sample { releaseTable() }
        }
        guard let widths = tableWidths, rowStart < text.count else { return }
        scratch.removeAll(keepingCapacity: true)
        AggregateTableCells.pad(
            UnsafeBufferPointer(rebasing: text[rowStart...]), longest: lines!.maximumRowLength, widths: widths,
            to: &scratch)
        out.write(bytes: scratch)
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

    mutating func finish() {
        if format == .table && tableWidths == nil { releaseTable() }
        if format == .json { out.write(wroteLines ? "\n]\n" : "]\n") }
        out.flush()
    }
}

/// A table's first rows, held back as bytes until the column widths are known (strings per cell
/// were half of a year's daily query in-process): each row's cells are appended to ``text`` and
/// their lengths noted. Cells are timestamps and numbers, all ASCII, so a cell's bytes are its width.
struct HeldTableRows {
    var text: [UInt8] = []
    private var lengths: [Int] = []
    private(set) var rows = 0

    /// Holds a row given as ``AggregateTableCells`` makes it (cells between tabs, no newline).
    mutating func add(cells row: UnsafeBufferPointer<UInt8>) {
        var length = 0
        for byte in row {
            if byte == AggregateTableCells.separator {
                lengths.append(length)
                length = 0
            } else {
                text.append(byte)
                length += 1
            }
        }
        lengths.append(length)
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

/// A table's rows as ``AggregateLines`` makes them before the widths are known: cells separated by
/// a tab, each row ended by a new line (cells are timestamps and numbers: neither byte occurs).
/// The rows are made on the core that computed them; the calling thread only pads them.
enum AggregateTableCells {
    static let separator = UInt8(ascii: "\t")

    /// Where the row starting at `start` ends (its new line).
    static func end(of text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        while text[i] != UInt8(ascii: "\n") { i += 1 }
        return i
    }

    /// Writes `text`'s whole rows, none longer than `longest`, with their cells padded to `widths`,
    /// two spaces apart, as `StreamingTable.line` does (a wider cell widens only its own line).
    static func pad(_ text: UnsafeBufferPointer<UInt8>, longest: Int, widths: [Int], to bytes: inout [UInt8]) {
        guard let base = text.baseAddress else { return }
        // A word past the row lets its cells and spaces be stored eight bytes at a time.
        let capacity = widths.reduce(longest + 1 + 8) { $0 + $1 + 2 }
        bytes.reserveCapacity(bytes.count + text.count + text.count / 2)
        widths.withUnsafeBufferPointer { widths in
            var start = 0
            while start < text.count {
                RowBytes.append(to: &bytes, capacity: capacity) { out in
                    start += padRow(base + start, limit: text.count - start, widths, to: &out)
                }
            }
        }
    }

    /// Pads the row at `row` (within `limit` bytes) and writes its new line; returns its length
    /// with its new line. Cells are copied a word at a time up to the tab or new line that ends
    /// them (byte by byte this was ~1,000 instructions a row of hourly heart rate, a quarter of
    /// the query).
    @inline(__always)
    private static func padRow(
        _ row: UnsafePointer<UInt8>, limit: Int, _ widths: UnsafeBufferPointer<Int>, to out: inout RowBytes
    ) -> Int {
        var column = 0
        var i = 0
        while true {
            let length = out.write(untilControlByte: row + i, limit: limit - i)
            i += length
            let padding = max(0, widths[column] - length)
            precondition(
                i < limit && (row[i] == separator || row[i] == UInt8(ascii: "\n")), "a cell with a control byte")
            guard row[i] == separator else {
                out.spaces(padding)
                break
            }
            out.spaces(padding + 2)
            column += 1
            i += 1
        }
        out.byte(UInt8(ascii: "\n"))
        return i + 1
    }
}

/// CSV, NDJSON, JSON or Markdown lines, or a table's cells (``AggregateTableCells``), of aggregate rows, each
/// made in place and appended at once (no strings per row: five years of hours are 43,800 rows). A
/// long aggregate formats each piece's rows with its own copy. JSON rows each start with `,` and a
/// new line; the printer drops the first row's comma, since only it knows which row comes first.
/// Machine formats write numbers exactly, Markdown and tables for people (``writeHuman(_:to:)``).
struct AggregateLines: AggregateRowFormatter {
    enum Style { case csv, ndjson, json, markdown, tableCells }
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
            32 + 2 * LocalTimestampWriter.length + self.keys.totalCount + keys.count * (3 + Self.numberLength)
    }

    mutating func append(_ row: AggregateRow, to bytes: inout [UInt8]) {
        RowBytes.append(to: &bytes, capacity: maximumRowLength) { out in write(row, to: &out) }
    }

    /// Rows straight from the columns, many rows to one room made in `bytes` (making room cost ~90
    /// instructions a row), with no ``AggregateRow`` made for each.
    mutating func append(_ rows: AggregateRowColumns, to bytes: inout [UInt8]) {
        guard let statistics, statistics.count == rows.statisticCount else {
            for r in 0..<rows.count { append(rows.row(r), to: &bytes) }
            return
        }
        // Copies in locals, written back at the end: mutated through `self` inside the closure,
        // the formatter was retained and checked for exclusive access per row.
        var (stamps, numbers) = (self.stamps, self.numbers)
        defer { (self.stamps, self.numbers) = (stamps, numbers) }
        let (style, keys) = (self.style, self.keys)
        let rowsARoom = 1024
        // Room for them all at once, as rows usually are (two timestamps, up to nine bytes a value),
        // and a room's worst case: grown room by room, the bytes were copied into new memory and
        // faulted in again (63 of the 460 page faults of a year's hours). Reserving every row's
        // worst case made each piece's bytes new memory (a year's minutes, 572 -> 1,286 faults).
        let usual = 2 * LocalTimestampWriter.length + 2 + rows.statisticCount * 9
        let needed = bytes.count + rows.count * usual + min(rows.count, rowsARoom) * maximumRowLength
        // Twice the room when growing: a buffer reused for later pieces then settles at a size.
        if bytes.capacity < needed { bytes.reserveCapacity(max(needed, 2 * bytes.capacity)) }
        for first in stride(from: 0, to: rows.count, by: rowsARoom) {
            let end = min(first + rowsARoom, rows.count)
            RowBytes.append(to: &bytes, capacity: (end - first) * maximumRowLength) { out in
                // CSV in a loop of its own, where the style is known: no test of it per row, and
                // the other styles' code out of the loop (~20 instructions a row).
                guard style == .csv else {
                    for r in first..<end { Self.writeLine(rows, r, style, keys, &stamps, &numbers, to: &out) }
                    return
                }
                for r in first..<end { Self.writeLine(rows, r, .csv, keys, &stamps, &numbers, to: &out) }
            }
        }
    }

    /// Row `r` of `rows`.
    @inline(__always)
    private static func writeLine(
        _ rows: AggregateRowColumns, _ r: Int, _ style: Style, _ keys: FixedTexts,
        _ stamps: inout LocalTimestampWriter, _ numbers: inout ExactNumberWriter, to out: inout RowBytes
    ) {
        writeLine(
            start: rows.start(r), end: rows.end(r), cells: rows.statisticCount,
            {
                let v = rows.value($0, r)
                return v.isNaN ? nil : v
            }, style, keys, &stamps, &numbers, to: &out)
    }

    private mutating func write(_ row: AggregateRow, to out: inout RowBytes) {
        if let statistics {
            let values = row.values
            Self.writeLine(
                start: row.start, end: row.end, cells: statistics.count, { values[statistics[$0]] }, style, keys,
                &stamps, &numbers, to: &out)
        } else {
            let (seconds, categoryValues) = (row.seconds, categoryValues)
            Self.writeLine(
                start: row.start, end: row.end, cells: categoryValues.count,
                { (seconds[categoryValues[$0]] ?? 0) / 60 }, style, keys, &stamps, &numbers, to: &out)
        }
    }

    /// A row's line: its bucket's bounds, then `cells` values (`value(k)` for cell `k`, nil where
    /// there is none), from a row or straight from columns.
    @inline(__always)
    private static func writeLine(
        start: Int64, end: Int64, cells: Int, _ value: (Int) -> Double?, _ style: Style, _ keys: FixedTexts,
        _ stamps: inout LocalTimestampWriter, _ numbers: inout ExactNumberWriter, to out: inout RowBytes
    ) {
        // CSV, the commonest, with no choice of style made per cell.
        if style == .csv {
            stamps.write(start, to: &out)
            out.byte(UInt8(ascii: ","))
            stamps.write(end, to: &out)
            for k in 0..<cells {
                out.byte(UInt8(ascii: ","))
                if let v = value(k) { numbers.write(v, to: &out) }
            }
            return out.byte(UInt8(ascii: "\n"))
        }
        switch style {
        case .csv, .tableCells: break
        case .ndjson: out.write("{\"start\":\"")
        case .json: out.write(",\n  {\"start\":\"")
        case .markdown: out.write("| ")
        }
        stamps.write(start, to: &out)
        switch style {
        case .csv: out.byte(UInt8(ascii: ","))
        case .ndjson, .json: out.write("\",\"end\":\"")
        case .markdown: out.write(" | ")
        case .tableCells: out.byte(AggregateTableCells.separator)
        }
        stamps.write(end, to: &out)
        if style == .ndjson || style == .json { out.byte(UInt8(ascii: "\"")) }
        for k in 0..<cells { cell(value(k), k, style, keys, &numbers, &out) }
        switch style {
        case .csv, .tableCells: out.byte(UInt8(ascii: "\n"))
        case .ndjson: out.write("}\n")
        case .json: out.byte(UInt8(ascii: "}"))
        case .markdown: out.write(" |\n")
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
        switch style {
        case .csv:
            out.byte(UInt8(ascii: ","))
            if let value { numbers.write(value, to: &out) }
        case .ndjson, .json:
            guard let value else { return }
            out.byte(UInt8(ascii: ","))
            keys.write(column, to: &out)
            numbers.write(value, to: &out)
        case .markdown:
            out.write(" | ")
            if let value { writeHuman(value, to: &out) }
        case .tableCells:
            out.byte(AggregateTableCells.separator)
            if let value { writeHuman(value, to: &out) }
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
