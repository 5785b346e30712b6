/// The Parquet metadata structures tsdb writes, each encoding itself in Thrift's compact protocol
/// (field ids from parquet-format's `parquet.thrift`; Formats/parquet-v1.md §3).

/// Physical types (`Type` in parquet.thrift).
enum PhysicalType: Int32 {
    case int32 = 1
    case int64 = 2
    case double = 5
    case byteArray = 6
}

/// Value encodings (`Encoding`).
enum ParquetEncoding: Int32 {
    case plain = 0
    case rle = 3
    case deltaBinaryPacked = 5
    case rleDictionary = 8
}

/// `CompressionCodec`: tsdb writes ZSTD pages only.
enum CompressionCodec: Int32 {
    case zstd = 6
}

/// What a column's values mean (`LogicalType` union, plus the legacy `ConvertedType` written
/// beside it for older readers).
enum LogicalType {
    case string
    case json
    case timestampMicrosUTC

    /// `ConvertedType`: UTF8 = 0, JSON = 19, TIMESTAMP_MICROS = 10.
    var convertedType: Int32 {
        switch self {
        case .string: 0
        case .json: 19
        case .timestampMicrosUTC: 10
        }
    }

    func encode(_ w: inout ThriftCompactWriter) {
        switch self {
        case .string: w.field(1, struct: { _ in })
        case .json: w.field(12, struct: { _ in })
        case .timestampMicrosUTC:
            w.field(8) { t in
                t.field(1, bool: true)  // isAdjustedToUTC
                t.field(2) { unit in unit.field(2, struct: { _ in }) }  // MICROS
            }
        }
    }
}

/// One leaf column of a flat schema.
struct ColumnSchema {
    var name: String
    var physicalType: PhysicalType
    var logicalType: LogicalType?
    var isOptional: Bool
}

/// `Statistics`: min and max as PLAIN-encoded values (no length prefix for byte arrays).
struct ColumnStatistics {
    var nullCount: Int64
    var minValue: [UInt8]?
    var maxValue: [UInt8]?

    func encode(_ w: inout ThriftCompactWriter) {
        w.field(3, i64: nullCount)
        if let maxValue { w.field(5, binary: maxValue) }
        if let minValue { w.field(6, binary: minValue) }
    }
}

/// `PageHeader` for a dictionary page or a version-1 data page.
struct PageHeader {
    enum Kind {
        /// `DataPageHeader`: values (nulls included), value encoding; levels are RLE.
        case data(valueCount: Int32, encoding: ParquetEncoding)
        /// `DictionaryPageHeader`: entries, PLAIN.
        case dictionary(entryCount: Int32)
    }

    var kind: Kind
    var uncompressedSize: Int32
    var compressedSize: Int32

    func encoded() -> [UInt8] {
        var w = ThriftCompactWriter()
        w.writeStruct { w in
            switch kind {
            case .data(let count, let encoding):
                w.field(1, i32: 0)  // DATA_PAGE
                w.field(2, i32: uncompressedSize)
                w.field(3, i32: compressedSize)
                w.field(5) { h in
                    h.field(1, i32: count)
                    h.field(2, i32: encoding.rawValue)
                    h.field(3, i32: ParquetEncoding.rle.rawValue)  // definition levels
                    h.field(4, i32: ParquetEncoding.rle.rawValue)  // repetition levels (none: flat)
                }
            case .dictionary(let count):
                w.field(1, i32: 2)  // DICTIONARY_PAGE
                w.field(2, i32: uncompressedSize)
                w.field(3, i32: compressedSize)
                w.field(7) { h in
                    h.field(1, i32: count)
                    h.field(2, i32: ParquetEncoding.plain.rawValue)
                }
            }
        }
        return w.bytes
    }
}

/// `ColumnChunk` with its `ColumnMetaData`, for one column of one row group.
struct ColumnChunkMetadata {
    var column: ColumnSchema
    var encodings: [ParquetEncoding]
    var valueCount: Int64
    var uncompressedSize: Int64
    var compressedSize: Int64
    /// Absolute file offsets.
    var dataPageOffset: Int64
    var dictionaryPageOffset: Int64?
    var statistics: ColumnStatistics

    func encode(_ w: inout ThriftCompactWriter) {
        w.field(2, i64: dictionaryPageOffset ?? dataPageOffset)  // file_offset: where the chunk starts
        w.field(3) { m in
            m.field(1, i32: column.physicalType.rawValue)
            m.field(2, listOf: .i32, count: encodings.count) { l in
                for e in encodings { l.writeZigzag(Int64(e.rawValue)) }
            }
            m.field(3, listOf: .binary, count: 1) { l in l.writeBinary(Array(column.name.utf8)) }
            m.field(4, i32: CompressionCodec.zstd.rawValue)
            m.field(5, i64: valueCount)
            m.field(6, i64: uncompressedSize)
            m.field(7, i64: compressedSize)
            m.field(9, i64: dataPageOffset)
            if let dictionaryPageOffset { m.field(11, i64: dictionaryPageOffset) }
            m.field(12) { s in statistics.encode(&s) }
        }
    }
}

/// `RowGroup`.
struct RowGroupMetadata {
    var columns: [ColumnChunkMetadata]
    var rowCount: Int64

    func encode(_ w: inout ThriftCompactWriter) {
        w.field(1, listOf: .structure, count: columns.count) { l in
            for c in columns { l.writeStruct { c.encode(&$0) } }
        }
        w.field(2, i64: columns.reduce(0) { $0 + $1.uncompressedSize })
        w.field(3, i64: rowCount)
        if let first = columns.first { w.field(5, i64: first.dictionaryPageOffset ?? first.dataPageOffset) }
        w.field(6, i64: columns.reduce(0) { $0 + $1.compressedSize })
    }
}

/// `FileMetaData`: the footer.
struct FileMetadata {
    var schema: [ColumnSchema]
    var rowGroups: [RowGroupMetadata]
    var keyValues: [(String, String)]
    var createdBy: String

    func encoded() -> [UInt8] {
        var w = ThriftCompactWriter()
        w.writeStruct { w in
            w.field(1, i32: 2)  // version: logical types and the v2 statistics fields
            w.field(2, listOf: .structure, count: schema.count + 1) { l in
                l.writeStruct { root in
                    root.field(4, string: "schema")
                    root.field(5, i32: Int32(schema.count))
                }
                for c in schema {
                    l.writeStruct { e in
                        e.field(1, i32: c.physicalType.rawValue)
                        e.field(3, i32: c.isOptional ? 1 : 0)  // OPTIONAL : REQUIRED
                        e.field(4, string: c.name)
                        if let t = c.logicalType {
                            e.field(6, i32: t.convertedType)
                            e.field(10) { t.encode(&$0) }
                        }
                    }
                }
            }
            w.field(3, i64: rowGroups.reduce(0) { $0 + $1.rowCount })
            w.field(4, listOf: .structure, count: rowGroups.count) { l in
                for g in rowGroups { l.writeStruct { g.encode(&$0) } }
            }
            if !keyValues.isEmpty {
                w.field(5, listOf: .structure, count: keyValues.count) { l in
                    for (k, v) in keyValues {
                        l.writeStruct { kv in
                            kv.field(1, string: k)
                            kv.field(2, string: v)
                        }
                    }
                }
            }
            w.field(6, string: createdBy)
            // ColumnOrder: TYPE_DEFINED_ORDER for every column, so readers trust min_value/max_value.
            w.field(7, listOf: .structure, count: schema.count) { l in
                for _ in schema { l.writeStruct { o in o.field(1, struct: { _ in }) } }
            }
        }
        return w.bytes
    }
}
