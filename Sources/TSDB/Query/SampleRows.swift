/// Raw samples of one segment as CSV rows or NDJSON lines, written a batch of rows at a time
/// straight into the output's spare room (``RowBytes``).
///
/// The segment's texts (type, units, sources, devices, metadata) are escaped once, and the end of
/// a row after its value is composed once per (unit, source, device, metadata) and copied after
/// that (``RowTails``); timestamps are written from a template of their date (``RecordedStampWriter``).
/// Three months of heavy heart rate (414,137 rows) took 1,325 instructions a row before: a
/// timestamp formatted in full twice, four texts copied, and a reference count per field.
struct SampleRows: SampleRowWriter {
    let format: Store.TextFormat
    /// The row up to its start: CSV `type,`, NDJSON `{"type":…,"start":"`.
    private let head: [UInt8]
    private var tails: RowTails
    private let numberTexts: [[UInt8]]
    private let forms: [(TimeForm, TimeForm)]
    /// Where device ids start in a `keep` list (after the source ids).
    private let sourceCount: Int
    /// Room one row may need, with the slack word stores of timestamps take.
    let longestRow: Int
    private var stamps = RecordedStampWriter()

    init(_ segment: SegmentReader, format: Store.TextFormat) {
        self.format = format
        var head: [UInt8] = []
        if format == .csv {
            DayFileWriter.appendCSVField(segment.type, to: &head)
            head.append(UInt8(ascii: ","))
        } else {
            head = Array("{\"type\":".utf8)
            DayFileWriter.appendJSONString(segment.type, to: &head)
            head += Array(",\"start\":\"".utf8)
        }
        self.head = head
        tails = RowTails(segment, format: format)
        numberTexts = segment.dictionary.numberTexts.map { Array($0.utf8) }
        forms = segment.forms
        sourceCount = segment.sources.count
        // Two timestamps with their separators, a decimal (at most 21 bytes: 19 digits, a sign and
        // a point, or "-0." and 18) or number text with NDJSON's key, and 32 bytes of slack.
        let longestNumber = max(24, numberTexts.map(\.count).max() ?? 0)
        longestRow = head.count + 2 * ISO8601.longestText + 16 + longestNumber + 16 + tails.longest + 32
    }

    /// Appends the rows of `rows` of `block` (decoded from this segment, all columns) whose source
    /// or device `keep` holds (sources first, then devices; empty: all rows), until `out` has grown
    /// by about 64 KiB; returns the first row not looked at.
    mutating func append(_ rows: Range<Int>, of block: DecodedBlock, keep: [Bool], to out: inout [UInt8]) -> Int {
        var i = rows.lowerBound
        let budget = max(1 << 16, longestRow)
        let (starts, ends, formIds) = (block.starts, block.ends, block.forms)
        let (tags, mantissas) = (block.valueTags, block.mantissas)
        let (units, sources, devices, metadata) = (block.units, block.sources, block.devices, block.metadata)
        let csv = format == .csv
        RowBytes.append(to: &out, capacity: budget) { row in
            while i < rows.upperBound && row.room >= longestRow {
                defer { i += 1 }
                let (source, device) = (Int(sources[i]), Int(devices[i]))
                guard keep.isEmpty || keep[source] || keep[sourceCount + device] else { continue }
                row.write(head)
                let (startForm, endForm) = forms[Int(formIds[i])]
                stamps.write(starts[i], startForm, to: &row)
                row.write(csv ? "," : "\",\"end\":\"")
                stamps.write(ends[i], endForm, to: &row)
                row.byte(csv ? UInt8(ascii: ",") : UInt8(ascii: "\""))
                writeValue(tag: UInt8(truncatingIfNeeded: tags[i]), mantissas[i], csv: csv, to: &row)
                tails.write(unit: Int(units[i]), source: source, device: device, metadata: Int(metadata[i]), to: &row)
            }
        }
        return i
    }

    @inline(__always)
    private func writeValue(tag: UInt8, _ mantissa: Int64, csv: Bool, to row: inout RowBytes) {
        if tag >= ValueTag.decimalBase {
            if !csv { row.write(",\"value\":") }
            return row.write(mantissa: mantissa, scale: tag - ValueTag.decimalBase)
        }
        switch tag {
        case ValueTag.absent: break
        case ValueTag.null: if !csv { row.write(",\"value\":null") }
        default:
            if !csv { row.write(",\"value\":") }
            row.write(numberTexts[Int(mantissa)])
        }
    }
}

/// The end of a row after its value: CSV `,unit,source,device,metadata` and a new line, NDJSON
/// the present fields' `,"key":value` and `}` and a new line. Composed from the segment's escaped
/// texts for each (unit, source, device, metadata) of ids and kept in one of 64 slots by that
/// key: a heart-rate row repeats one of a handful, and is then one copy instead of four.
private struct RowTails {
    private let csv: Bool
    private let units, sources, devices, metadata: RenderedTexts
    /// The longest tail.
    let longest: Int
    private static let slotCount = 64
    /// Each slot's key (the four ids, 16 bits each; `.max` when empty), its tail's length, and its
    /// tail in `longest` bytes of `bytes`. No slots when a tail is too long to keep 64 of.
    private var keys: [UInt64] = []
    private var lengths: [Int] = []
    private var bytes: [UInt8] = []

    init(_ segment: SegmentReader, format: Store.TextFormat) {
        csv = format == .csv
        units = RenderedTexts(segment.units, key: "unit", format)
        sources = RenderedTexts(segment.sources, key: "source", format)
        devices = RenderedTexts(segment.devices, key: "device", format)
        metadata = RenderedTexts(segment.metadata, key: "metadata", format)
        longest = units.longest + sources.longest + devices.longest + metadata.longest + 6
        if longest <= 4096 {
            keys = Array(repeating: .max, count: Self.slotCount)
            lengths = Array(repeating: 0, count: Self.slotCount)
            bytes = Array(repeating: 0, count: Self.slotCount * longest)
        }
    }

    @inline(__always)
    mutating func write(unit: Int, source: Int, device: Int, metadata m: Int, to row: inout RowBytes) {
        let ids = (UInt64(unit), UInt64(source), UInt64(device), UInt64(m))
        guard !keys.isEmpty, ids.0 | ids.1 | ids.2 | ids.3 < 0xFFFF else {
            return compose(unit: unit, source: source, device: device, metadata: m, to: &row)
        }
        let key = ids.0 | ids.1 << 16 | ids.2 << 32 | ids.3 << 48
        let slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58)
        if keys[slot] != key { fill(slot, key, unit: unit, source: source, device: device, metadata: m) }
        let start = slot * longest
        bytes.withUnsafeBytes { row.write(UnsafeRawBufferPointer(rebasing: $0[start..<start + lengths[slot]])) }
    }

    private mutating func fill(_ slot: Int, _ key: UInt64, unit: Int, source: Int, device: Int, metadata m: Int) {
        let (start, longest, texts) = (slot * longest, longest, self)
        lengths[slot] = bytes.withUnsafeMutableBufferPointer { b in
            RowBytes.writing(into: UnsafeMutableBufferPointer(rebasing: b[start..<start + longest])) { row in
                texts.compose(unit: unit, source: source, device: device, metadata: m, to: &row)
            }
        }
        keys[slot] = key
    }

    private func compose(unit: Int, source: Int, device: Int, metadata m: Int, to row: inout RowBytes) {
        if csv { row.byte(UInt8(ascii: ",")) }
        units.write(unit, to: &row)
        if csv { row.byte(UInt8(ascii: ",")) }
        sources.write(source, to: &row)
        if csv { row.byte(UInt8(ascii: ",")) }
        devices.write(device, to: &row)
        if csv { row.byte(UInt8(ascii: ",")) }
        metadata.write(m, to: &row)
        if !csv { row.byte(UInt8(ascii: "}")) }
        row.byte(0x0A)
    }
}

/// A segment dictionary's texts as output fields, one after another in one buffer: for CSV the
/// (quoted when needed) field, for NDJSON `,"key":value` (nothing when absent).
private struct RenderedTexts {
    private var bytes: [UInt8] = []
    /// Text `k` is `bytes[ends[k - 1]..<ends[k]]` (from 0 for the first).
    private var ends: [Int] = []
    private(set) var longest = 0

    init(_ texts: [OptionalText], key: String, _ format: Store.TextFormat) {
        for t in texts {
            let start = bytes.count
            switch (format, t) {
            case (.csv, .text(let s)): DayFileWriter.appendCSVField(s, to: &bytes)
            case (.csv, _), (.ndjson, .absent): break
            case (.ndjson, .null): bytes += Array(",\"\(key)\":null".utf8)
            case (.ndjson, .text(let s)):
                bytes += Array(",\"\(key)\":".utf8)
                if key == "metadata" { bytes += Array(s.utf8) } else { DayFileWriter.appendJSONString(s, to: &bytes) }
            }
            ends.append(bytes.count)
            longest = max(longest, bytes.count - start)
        }
    }

    func write(_ k: Int, to row: inout RowBytes) {
        let start = k == 0 ? 0 : ends[k - 1]
        bytes.withUnsafeBytes { row.write(UnsafeRawBufferPointer(rebasing: $0[start..<ends[k]])) }
    }
}
