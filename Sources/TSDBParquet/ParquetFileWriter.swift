import TSDB

/// Writes one Parquet file (Formats/parquet-v1.md §2): `PAR1`, row groups streamed as they are
/// encoded, the Thrift footer, its length and `PAR1`. Memory holds one row group at a time.
/// The file appears at its path only when ``finish()`` succeeds.
final class ParquetFileWriter {
    /// §2: the four bytes at both ends of every Parquet file.
    static let magic: [UInt8] = Array("PAR1".utf8)

    private let file: StagedFile
    private let schema: [ColumnSchema]
    private var rowGroups: [RowGroupMetadata] = []
    private let keyValues: [(String, String)]

    init(path: String, schema: [ColumnSchema], keyValues: [(String, String)]) throws(TSDBError) {
        file = try StagedFile(path: path)
        self.schema = schema
        self.keyValues = keyValues
        try file.append(Self.magic)
    }

    /// Appends a row group whose columns follow the schema's order.
    func write(rowGroup columns: [EncodedColumn], rowCount: Int) throws(TSDBError) {
        precondition(columns.map(\.schema.name) == schema.map(\.name), "row group columns differ from the schema")
        var chunks: [ColumnChunkMetadata] = []
        for column in columns { chunks.append(try write(column)) }
        rowGroups.append(RowGroupMetadata(columns: chunks, rowCount: Int64(rowCount)))
    }

    private func write(_ column: EncodedColumn) throws(TSDBError) -> ColumnChunkMetadata {
        var uncompressed = 0
        var compressed = 0
        func page(_ kind: PageHeader.Kind, _ payload: [UInt8]) throws(TSDBError) {
            let body = BlockCodec.zstdFrame(payload)
            let header = PageHeader(
                kind: kind, uncompressedSize: Int32(payload.count), compressedSize: Int32(body.count)
            ).encoded()
            try file.append(header + body)
            uncompressed += header.count + payload.count
            compressed += header.count + body.count
        }
        var dictionaryOffset: Int64?
        if let dictionary = column.dictionary {
            dictionaryOffset = Int64(file.size)
            try page(.dictionary(entryCount: Int32(dictionary.entryCount)), dictionary.plain)
        }
        let dataOffset = Int64(file.size)
        for p in column.pages {
            try page(.data(valueCount: Int32(p.valueCount), encoding: p.encoding), p.payload)
        }
        return ColumnChunkMetadata(
            column: column.schema, encodings: column.encodings,
            valueCount: Int64(column.pages.reduce(0) { $0 + $1.valueCount }),
            uncompressedSize: Int64(uncompressed), compressedSize: Int64(compressed),
            dataPageOffset: dataOffset, dictionaryPageOffset: dictionaryOffset, statistics: column.statistics)
    }

    /// Writes the footer and publishes the file; returns its size in bytes.
    func finish(createdBy: String) throws(TSDBError) -> Int {
        let footer = FileMetadata(schema: schema, rowGroups: rowGroups, keyValues: keyValues, createdBy: createdBy)
            .encoded()
        var tail = ByteWriter(capacity: footer.count + 8)
        tail.append(footer)
        tail.u32(UInt32(footer.count))
        tail.append(Self.magic)
        try file.append(tail.bytes)
        try file.publish()
        return file.size
    }
}
