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
        let blocks = (0..<segment.blockCount).filter {
            segment.summaries[$0].lastStart >= from && segment.summaries[$0].firstStart < to
        }
        // At most the samples of the blocks the range reaches: the columns' room, made once.
        let most = blocks.reduce(0) { $0 + segment.summaries[$1].sampleCount }
        var rows = Rows(segment, capacity: min(most, rowsPerRowGroup))
        var total = 0
        let block = DecodedBlock()
        for b in blocks {
            try segment.decode(block: b, into: block)
            let columns = BlockColumns(block)
            // Runs of rows in the range, each appended column by column.
            var i = 0
            while i < block.count {
                guard columns.starts[i] >= from && columns.starts[i] < to else {
                    i += 1
                    continue
                }
                let room = rowsPerRowGroup - rows.count
                var end = i + 1
                while end < block.count && end - i < room && columns.starts[end] >= from && columns.starts[end] < to {
                    end += 1
                }
                rows.append(i..<end, of: columns)
                if rows.count == rowsPerRowGroup {
                    total += rows.count
                    try file.write(rowGroup: rows.columns(), rowCount: rows.count)
                    rows = Rows(segment, capacity: min(most - total, rowsPerRowGroup))
                }
                i = end
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
        var valueIDs = ValueIDs()
        var valueEntries: [(Double?, String)] = []
        let formOffsets: [(Int64, Int64)]

        /// Rows for `capacity` samples: columns grown by doubling were copied ~log2(n) times each,
        /// ~5% of the year's export instructions (callgrind).
        init(_ segment: SegmentReader, capacity: Int) {
            self.segment = segment
            formOffsets = segment.forms.map { (Int64($0.0.offsetMinutes), Int64($0.1.offsetMinutes)) }
            for column in [\Rows.starts, \.ends, \.startOffsets, \.endOffsets] {
                self[keyPath: column].reserveCapacity(capacity)
            }
            for column in [\Rows.values, \.units, \.sources, \.devices, \.metadata] {
                self[keyPath: column].reserveCapacity(capacity)
            }
        }

        var count: Int { starts.count }

        /// Dictionary id of a segment table entry: ids 0 and 1 are absent and null (§6.1).
        static func id(_ segmentID: Int64) -> Int32 { segmentID < 2 ? -1 : Int32(segmentID - 2) }

        /// Appends the rows `range` of a block, a column at a time.
        mutating func append(_ range: Range<Int>, of block: BlockColumns) {
            starts.append(contentsOf: UnsafeBufferPointer(rebasing: block.starts[range]))
            ends.append(contentsOf: UnsafeBufferPointer(rebasing: block.ends[range]))
            let (forms, offsets) = (block.forms, formOffsets)
            Self.append(range, to: &startOffsets) { offsets[Int(forms[$0])].0 }
            Self.append(range, to: &endOffsets) { offsets[Int(forms[$0])].1 }
            values.reserveCapacity(values.count + range.count)
            for i in range { values.append(valueID(i, of: block)) }
            let (units, sources, devices, metadata) = (block.units, block.sources, block.devices, block.metadata)
            Self.append(range, to: &self.units) { Self.id(units[$0]) }
            Self.append(range, to: &self.sources) { Self.id(sources[$0]) }
            Self.append(range, to: &self.devices) { Self.id(devices[$0]) }
            Self.append(range, to: &self.metadata) { Self.id(metadata[$0]) }
        }

        /// Appends a value made from each row of `range`, written in place (a lazy map appended
        /// took ~17 instructions a value).
        private static func append<T: FixedWidthInteger>(
            _ range: Range<Int>, to column: inout [T], _ make: (Int) -> T
        ) {
            let start = column.count
            column.append(contentsOf: repeatElement(0, count: range.count))
            column.withUnsafeMutableBufferPointer { out in
                for (k, i) in range.enumerated() { out[start + k] = make(i) }
            }
        }

        /// The value entry of row `i` of a block, made when its (tag, mantissa) is first seen.
        private mutating func valueID(_ i: Int, of block: BlockColumns) -> Int32 {
            let (tag, mantissa) = (block.valueTags[i], block.mantissas[i])
            if let id = valueIDs[tag, mantissa] { return id }
            let value = segment.value(of: block.block, at: i)
            let id: Int32
            switch value {
            case .absent, .null:
                id = -1
            case .decimal, .numberText:
                id = Int32(valueEntries.count)
                valueEntries.append((value.doubleValue, value.description))
            }
            valueIDs[tag, mantissa] = id
            return id
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
