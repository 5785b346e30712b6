import TSDB

/// The `samples` table (Formats/parquet-v1.md §6.1): one row per sample of one (type, month)
/// segment, columns straight from its decoded blocks: no JSON, no per-row strings. Dictionary
/// columns reuse the segment's own dictionaries.
enum SampleTable {
    static let schema: [ColumnSchema] = [
        ColumnSchema(name: "start", physicalType: .int64, logicalType: .timestampMicrosUTC, isOptional: false),
        ColumnSchema(name: "end", physicalType: .int64, logicalType: .timestampMicrosUTC, isOptional: false),
        ColumnSchema(name: "utc_offset_minutes", physicalType: .int32, logicalType: nil, isOptional: false),
        ColumnSchema(name: "end_utc_offset_minutes", physicalType: .int32, logicalType: nil, isOptional: false),
        ColumnSchema(name: "value", physicalType: .double, logicalType: nil, isOptional: true),
        ColumnSchema(name: "value_text", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "unit", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "source", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "device", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "metadata", physicalType: .byteArray, logicalType: .json, isOptional: true),
    ]

    /// Rows per row group: bounds memory whatever a month holds (§6: one row group per month in
    /// practice; a month of more samples is split).
    static let rowsPerRowGroup = 1 << 20
    /// A value dictionary holding more entries than this is dropped for PLAIN pages.
    static let largestValueDictionary = 1 << 16

    /// Writes the samples of `segment` starting in `[from, to)`; returns how many.
    static func write(_ segment: SegmentReader, from: Int64, to: Int64, into file: ParquetFileWriter)
        throws(TSDBError) -> Int
    {
        var rows = Rows(segment)
        var total = 0
        let block = DecodedBlock()
        for b in 0..<segment.blockCount
        where segment.summaries[b].lastStart >= from && segment.summaries[b].firstStart < to {
            try segment.decode(block: b, into: block)
            let columns = BlockColumns(block)
            for i in 0..<block.count where columns.starts[i] >= from && columns.starts[i] < to {
                rows.append(i, of: columns)
                if rows.count == rowsPerRowGroup {
                    total += rows.count
                    try file.write(rowGroup: rows.columns(), rowCount: rows.count)
                    rows = Rows(segment)
                }
            }
        }
        if rows.count > 0 || total == 0 {
            total += rows.count
            try file.write(rowGroup: rows.columns(), rowCount: rows.count)
        }
        return total
    }

    /// A decoded block's columns, fetched once per block rather than once per row.
    struct BlockColumns {
        let block: DecodedBlock
        let starts: UnsafeBufferPointer<Int64>, ends: UnsafeBufferPointer<Int64>
        let forms: UnsafeMutableBufferPointer<Int64>, valueTags: UnsafeMutableBufferPointer<Int64>
        let mantissas: UnsafeMutableBufferPointer<Int64>, units: UnsafeMutableBufferPointer<Int64>
        let sources: UnsafeMutableBufferPointer<Int64>, devices: UnsafeMutableBufferPointer<Int64>
        let metadata: UnsafeMutableBufferPointer<Int64>

        /// Valid until the next decode into `block`.
        init(_ block: DecodedBlock) {
            self.block = block
            (starts, ends, forms, valueTags) = (block.starts, block.ends, block.forms, block.valueTags)
            (mantissas, units, sources, devices) = (block.mantissas, block.units, block.sources, block.devices)
            metadata = block.metadata
        }
    }

    /// One row group's columns while they fill.
    struct Rows {
        let segment: SegmentReader
        var starts: [Int64] = []
        var ends: [Int64] = []
        var startOffsets: [Int64] = []
        var endOffsets: [Int64] = []
        var values: [Int32] = []
        var units: [Int32] = []
        var sources: [Int32] = []
        var devices: [Int32] = []
        var metadata: [Int32] = []
        /// Value dictionary: (tag, mantissa) → entry; entries hold the double and the exact text.
        var valueIDs: [ValueKey: Int32] = [:]
        var valueEntries: [(Double?, String)] = []
        let formOffsets: [(Int64, Int64)]

        struct ValueKey: Hashable {
            var tag: Int64
            var mantissa: Int64
        }

        init(_ segment: SegmentReader) {
            self.segment = segment
            formOffsets = segment.forms.map { (Int64($0.0.offsetMinutes), Int64($0.1.offsetMinutes)) }
        }

        var count: Int { starts.count }

        /// Dictionary id of a segment table entry: ids 0 and 1 are absent and null (§6.1).
        static func id(_ segmentID: Int64) -> Int32 { segmentID < 2 ? -1 : Int32(segmentID - 2) }

        mutating func append(_ i: Int, of block: BlockColumns) {
            starts.append(block.starts[i])
            ends.append(block.ends[i])
            let (startOffset, endOffset) = formOffsets[Int(block.forms[i])]
            startOffsets.append(startOffset)
            endOffsets.append(endOffset)
            let key = ValueKey(tag: block.valueTags[i], mantissa: block.mantissas[i])
            if let id = valueIDs[key] {
                values.append(id)
            } else {
                let value = segment.value(of: block.block, at: i)
                switch value {
                case .absent, .null:
                    valueIDs[key] = -1
                    values.append(-1)
                case .decimal, .numberText:
                    let id = Int32(valueEntries.count)
                    valueEntries.append((value.doubleValue, value.description))
                    valueIDs[key] = id
                    values.append(id)
                }
            }
            units.append(Self.id(block.units[i]))
            sources.append(Self.id(block.sources[i]))
            devices.append(Self.id(block.devices[i]))
            metadata.append(Self.id(block.metadata[i]))
        }

        func columns() -> [EncodedColumn] {
            let s = SampleTable.schema
            func texts(_ table: [OptionalText]) -> [ColumnValue] {
                table.dropFirst(2).map { .bytes(Array(($0.string ?? "").utf8)) }
            }
            var out = [
                EncodedColumn.delta(s[0], starts), .delta(s[1], ends),
                .delta(s[2], startOffsets), .delta(s[3], endOffsets),
            ]
            let numbers = valueEntries.map { $0.0.map(ColumnValue.double) }
            let digits = valueEntries.map { ColumnValue.bytes(Array($0.1.utf8)) }
            if valueEntries.count <= SampleTable.largestValueDictionary && !numbers.contains(where: { $0 == nil }) {
                // Both value columns share the ids: one entry per distinct written number.
                out.append(.dictionary(s[4], ids: values, entries: numbers.map { $0! }))
                out.append(.dictionary(s[5], ids: values, entries: digits))
            } else {
                out.append(.plain(s[4], values.map { $0 < 0 ? nil : numbers[Int($0)] }))
                out.append(.plain(s[5], values.map { $0 < 0 ? nil : digits[Int($0)] }))
            }
            out.append(.dictionary(s[6], ids: units, entries: texts(segment.units)))
            out.append(.dictionary(s[7], ids: sources, entries: texts(segment.sources)))
            out.append(.dictionary(s[8], ids: devices, entries: texts(segment.devices)))
            out.append(.dictionary(s[9], ids: metadata, entries: texts(segment.metadata)))
            return out
        }
    }
}
