/// Raw samples of one segment as CSV rows or NDJSON lines, each made in one ``RowBytes`` buffer.
///
/// The segment's texts (type, units, sources, devices, metadata) are escaped once, into one
/// buffer each; a timestamp equal to the one written before (a point sample's end, or samples
/// with one start) is copied instead of formatted again. Three months of heart rate are 400,000
/// rows: before, each row appended its fields one by one to a growing array, and a third of the
/// time went to retaining and releasing the pre-rendered fields.
struct SampleRows {
    let format: Store.TextFormat
    private let typeField: [UInt8]
    private let units, sources, devices, metadata: RenderedTexts
    /// Punctuation, keys and two timestamps, on top of the fields.
    private let fixedLength: Int
    private var stamp = StampCache()

    init(_ segment: SegmentReader, format: Store.TextFormat) {
        self.format = format
        var type: [UInt8] = []
        if format == .csv {
            DayFileWriter.appendCSVField(segment.type, to: &type)
        } else {
            type = Array("{\"type\":".utf8)
            DayFileWriter.appendJSONString(segment.type, to: &type)
        }
        typeField = type
        units = RenderedTexts(segment.units, key: "unit", format)
        sources = RenderedTexts(segment.sources, key: "source", format)
        devices = RenderedTexts(segment.devices, key: "device", format)
        metadata = RenderedTexts(segment.metadata, key: "metadata", format)
        fixedLength =
            typeField.count + units.longest + sources.longest + devices.longest + metadata.longest
            + 2 * ISO8601.longestText + 64
    }

    /// Appends sample `i` of `block` (decoded from `segment`, all columns) as one row.
    mutating func append(_ i: Int, of block: DecodedBlock, in segment: SegmentReader, to out: inout [UInt8]) {
        let value = segment.value(of: block, at: i)
        // A decimal takes at most 21 bytes (19 digits, a sign and a point, or "-0." and 18).
        var capacity = fixedLength + 24
        if case .numberText(let text) = value { capacity += text.utf8.count }
        let csv = format == .csv
        RowBytes.append(to: &out, capacity: capacity) { row in
            let (startForm, endForm) = segment.forms[Int(block.forms[i])]
            row.write(typeField)
            row.write(csv ? "," : ",\"start\":\"")
            stamp.write(block.starts[i], startForm, to: &row)
            row.write(csv ? "," : "\",\"end\":\"")
            stamp.write(block.ends[i], endForm, to: &row)
            if !csv { row.byte(UInt8(ascii: "\"")) }
            switch value {
            case .absent: if csv { row.byte(UInt8(ascii: ",")) }
            case .null: row.write(csv ? "," : ",\"value\":null")
            case .decimal(let d):
                row.write(csv ? "," : ",\"value\":")
                row.write(mantissa: d.mantissa, scale: d.scale)
            case .numberText(let text):
                row.write(csv ? "," : ",\"value\":")
                row.write(text)
            }
            if csv { row.byte(UInt8(ascii: ",")) }
            units.write(Int(block.units[i]), to: &row)
            if csv { row.byte(UInt8(ascii: ",")) }
            sources.write(Int(block.sources[i]), to: &row)
            if csv { row.byte(UInt8(ascii: ",")) }
            devices.write(Int(block.devices[i]), to: &row)
            if csv { row.byte(UInt8(ascii: ",")) }
            metadata.write(Int(block.metadata[i]), to: &row)
            if !csv { row.byte(UInt8(ascii: "}")) }
            row.byte(0x0A)
        }
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

/// The last timestamp written, as text: written again by copying when the next is the same.
private struct StampCache {
    private var micros = Int64.min
    private var form = TimeForm.zulu
    private var length = 0
    private var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)

    mutating func write(_ t: Int64, _ f: TimeForm, to row: inout RowBytes) {
        if t != micros || f != form || length == 0 {
            (micros, form) = (t, f)
            length = withUnsafeMutableBytes(of: &text) { raw in
                ISO8601.write(t, f, to: raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        let n = length
        withUnsafeBytes(of: &text) { row.write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }
}
