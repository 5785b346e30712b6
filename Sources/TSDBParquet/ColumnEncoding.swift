import TSDB

/// A column of one row group, encoded into uncompressed pages (Formats/parquet-v1.md §5).
struct EncodedColumn {
    struct DataPage {
        /// Rows in the page, nulls included.
        var valueCount: Int
        var encoding: ParquetEncoding
        /// Definition levels (optional columns) then values, before compression.
        var payload: [UInt8]
    }

    var schema: ColumnSchema
    var dictionary: (entryCount: Int, plain: [UInt8])?
    var pages: [DataPage]
    var statistics: ColumnStatistics
    var encodings: [ParquetEncoding]
}

/// A value of a dictionary or plain column: an INT64, a DOUBLE or a BYTE_ARRAY.
enum ColumnValue: Hashable {
    case int64(Int64)
    case double(Double)
    case bytes([UInt8])

    /// PLAIN encoding (§4.1): doubles as 8 little-endian bytes, byte arrays length-prefixed.
    func appendPlain(to out: inout ByteWriter) {
        switch self {
        case .int64(let v): out.i64(v)
        case .double(let d): out.f64(d)
        case .bytes(let b):
            out.u32(UInt32(b.count))
            out.append(b)
        }
    }

    /// The statistics form: PLAIN without the length prefix.
    var statisticsBytes: [UInt8] {
        switch self {
        case .int64, .double:
            var out = ByteWriter()
            appendPlain(to: &out)
            return out.bytes
        case .bytes(let b): return b
        }
    }

    /// Parquet's type-defined order: signed for numbers, unsigned bytewise for byte arrays.
    static func precedes(_ a: ColumnValue, _ b: ColumnValue) -> Bool {
        switch (a, b) {
        case (.int64(let x), .int64(let y)): x < y
        case (.double(let x), .double(let y)): x < y
        case (.bytes(let x), .bytes(let y)): x.lexicographicallyPrecedes(y)
        default: false
        }
    }
}

extension EncodedColumn {
    /// Rows per data page: large enough for zstd to find repetition, small enough to skip.
    static let rowsPerPage = 65_536
    /// Byte-array statistics longer than this are left out (readers then just cannot prune).
    static let longestStatistic = 256

    /// A required INT64 or INT32 column in DELTA_BINARY_PACKED pages.
    static func delta(_ schema: ColumnSchema, _ values: [Int64]) -> EncodedColumn {
        var pages: [DataPage] = []
        var start = 0
        values.withUnsafeBufferPointer { values in
            while start < values.count || pages.isEmpty {
                let end = min(values.count, start + rowsPerPage)
                var payload = ByteWriter()
                ParquetEncoder.appendDeltaBinaryPacked(UnsafeBufferPointer(rebasing: values[start..<end]), to: &payload)
                pages.append(DataPage(valueCount: end - start, encoding: .deltaBinaryPacked, payload: payload.bytes))
                start = end
            }
        }
        func bytes(_ v: Int64) -> [UInt8] {
            var out = ByteWriter()
            if schema.physicalType == .int32 { out.i32(Int32(truncatingIfNeeded: v)) } else { out.i64(v) }
            return out.bytes
        }
        // Both extremes in one pass.
        var (low, high) = (values.first ?? 0, values.first ?? 0)
        for v in values {
            low = min(low, v)
            high = max(high, v)
        }
        let statistics = ColumnStatistics(
            nullCount: 0, minValue: values.isEmpty ? nil : bytes(low), maxValue: values.isEmpty ? nil : bytes(high))
        return EncodedColumn(
            schema: schema, dictionary: nil, pages: pages, statistics: statistics, encodings: [.deltaBinaryPacked])
    }

    /// An optional column of dictionary ids (`-1` for null) into `entries`: a PLAIN dictionary
    /// page, then RLE_DICTIONARY data pages. Entries that no row uses are kept (ids stay the
    /// segment's) but do not count in the statistics.
    static func dictionary(_ schema: ColumnSchema, ids: [Int32], entries: [ColumnValue]) -> EncodedColumn {
        var plain = ByteWriter()
        for e in entries { e.appendPlain(to: &plain) }
        var used = [Bool](repeating: false, count: entries.count)
        var nulls = 0
        let width = ParquetEncoder.bitWidth(UInt64(max(entries.count - 1, 0)))
        var pages: [DataPage] = []
        var start = 0
        ids.withUnsafeBufferPointer { ids in
            while start < ids.count || pages.isEmpty {
                let end = min(ids.count, start + rowsPerPage)
                let page = UnsafeBufferPointer(rebasing: ids[start..<end])
                // In one pass over the rows: the ids of those that have one (nulls left out), and
                // the entries they use.
                let present = used.withUnsafeMutableBufferPointer { used in
                    [UInt64](unsafeUninitializedCapacity: page.count) { out, count in
                        for id in page where id >= 0 {
                            used[Int(id)] = true
                            out[count] = UInt64(id)
                            count += 1
                        }
                    }
                }
                nulls += page.count - present.count
                var payload = ByteWriter()
                if schema.isOptional {
                    definitionLevels(to: &payload) { out in
                        if present.count == page.count {
                            ParquetEncoder.appendRLEHybrid(repeating: 1, count: page.count, width: 1, to: &out)
                        } else {
                            let levels = page.map { UInt64($0 >= 0 ? 1 : 0) }
                            levels.withUnsafeBufferPointer { ParquetEncoder.appendRLEHybrid($0, width: 1, to: &out) }
                        }
                    }
                }
                payload.u8(UInt8(width))
                present.withUnsafeBufferPointer { ParquetEncoder.appendRLEHybrid($0, width: width, to: &payload) }
                pages.append(DataPage(valueCount: end - start, encoding: .rleDictionary, payload: payload.bytes))
                start = end
            }
        }
        let usedEntries = entries.indices.filter { used[$0] }.map { entries[$0] }
        return EncodedColumn(
            schema: schema, dictionary: (entries.count, plain.bytes), pages: pages,
            statistics: statistics(usedEntries, nullCount: nulls), encodings: [.plain, .rle, .rleDictionary])
    }

    /// A column in PLAIN pages (nil rows are nulls of an optional column): for values too varied
    /// for a dictionary.
    static func plain(_ schema: ColumnSchema, _ rows: [ColumnValue?]) -> EncodedColumn {
        var pages: [DataPage] = []
        var start = 0
        while start < rows.count || pages.isEmpty {
            let end = min(rows.count, start + rowsPerPage)
            var payload = ByteWriter()
            if schema.isOptional {
                let levels = rows[start..<end].map { UInt64($0 == nil ? 0 : 1) }
                definitionLevels(to: &payload) { out in
                    levels.withUnsafeBufferPointer { ParquetEncoder.appendRLEHybrid($0, width: 1, to: &out) }
                }
            }
            for case let v? in rows[start..<end] { v.appendPlain(to: &payload) }
            pages.append(DataPage(valueCount: end - start, encoding: .plain, payload: payload.bytes))
            start = end
        }
        let present = rows.compactMap { $0 }
        return EncodedColumn(
            schema: schema, dictionary: nil, pages: pages,
            statistics: statistics(present, nullCount: rows.count - present.count), encodings: [.plain, .rle])
    }

    /// Definition levels of a flat optional column (§5.2): 1 present, 0 null, as an RLE hybrid of
    /// width 1 (which `hybrid` writes) behind its 4-byte length.
    static func definitionLevels(to out: inout ByteWriter, _ hybrid: (inout ByteWriter) -> Void) {
        let lengthAt = out.count
        out.u32(0)
        hybrid(&out)
        out.patchU32(UInt32(out.count - lengthAt - 4), at: lengthAt)
    }

    static func statistics(_ values: [ColumnValue], nullCount: Int) -> ColumnStatistics {
        var low: ColumnValue?
        var high: ColumnValue?
        for v in values {
            if case .double(let d) = v, d.isNaN { return ColumnStatistics(nullCount: Int64(nullCount)) }
            if low == nil || ColumnValue.precedes(v, low!) { low = v }
            if high == nil || ColumnValue.precedes(high!, v) { high = v }
        }
        // The spec's rule for signed zeros: a zero minimum is written -0.0, a zero maximum +0.0.
        if case .double(let d)? = low, d == 0 { low = .double(-0.0) }
        if case .double(let d)? = high, d == 0 { high = .double(0.0) }
        guard let low, let high,
            low.statisticsBytes.count <= longestStatistic, high.statisticsBytes.count <= longestStatistic
        else { return ColumnStatistics(nullCount: Int64(nullCount)) }
        return ColumnStatistics(
            nullCount: Int64(nullCount), minValue: low.statisticsBytes, maxValue: high.statisticsBytes)
    }
}

extension ColumnStatistics {
    init(nullCount: Int64) { self.init(nullCount: nullCount, minValue: nil, maxValue: nil) }
}
