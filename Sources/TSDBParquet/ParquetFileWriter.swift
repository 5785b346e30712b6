import TSDB

/// Writes one Parquet file (Formats/parquet-v1.md §2): `PAR1`, row groups streamed as they are
/// encoded, the Thrift footer, its length and `PAR1`. Memory holds one row group at a time.
/// The file appears at its path only when ``finish()`` succeeds.
final class ParquetFileWriter {
    /// §2: the four bytes at both ends of every Parquet file.
    static let magic: [UInt8] = Array("PAR1".utf8)
    /// Bytes gathered before they are written: a write per page made ~18 system calls a file.
    static let defaultWriteSize = 1 << 20

    private let file: StagedFile
    private let compressor: ZstdCompressor
    /// Written after the file's bytes so far, after a row group that fills `writeSize`, or at the end.
    private var pending = ByteWriter()
    private let writeSize: Int
    private let schema: [ColumnSchema]
    private var rowGroups: [RowGroupMetadata] = []
    private let keyValues: [(String, String)]

    /// Offset in the file of the next byte appended.
    private var size: Int { file.size + pending.count }

    init(
        path: String, schema: [ColumnSchema], keyValues: [(String, String)], compressor: ZstdCompressor,
        writeSize: Int = defaultWriteSize
    ) throws(TSDBError) {
        file = try StagedFile(path: path)
        self.compressor = compressor
        self.writeSize = writeSize
        self.schema = schema
        self.keyValues = keyValues
        pending.append(Self.magic)
    }

    /// Appends a row group whose columns follow the schema's order.
    func write(rowGroup columns: [EncodedColumn], rowCount: Int) throws(TSDBError) {
        precondition(columns.map(\.schema.name) == schema.map(\.name), "row group columns differ from the schema")
        var chunks: [ColumnChunkMetadata] = []
        for column in columns { chunks.append(write(column)) }
        rowGroups.append(RowGroupMetadata(columns: chunks, rowCount: Int64(rowCount)))
        if pending.count >= writeSize { try file.append(pending.take()) }
    }

    private func write(_ column: EncodedColumn) -> ColumnChunkMetadata {
        var uncompressed = 0
        var compressed = 0
        func page(_ kind: PageHeader.Kind, _ payload: [UInt8]) {
            let body = compressor.frame(payload)
            let header = PageHeader(
                kind: kind, uncompressedSize: Int32(payload.count), compressedSize: Int32(body.count)
            ).encoded()
            pending.append(header)
            pending.append(body)
            uncompressed += header.count + payload.count
            compressed += header.count + body.count
        }
        var dictionaryOffset: Int64?
        if let dictionary = column.dictionary {
            dictionaryOffset = Int64(size)
            page(.dictionary(entryCount: Int32(dictionary.entryCount)), dictionary.plain)
        }
        let dataOffset = Int64(size)
        for p in column.pages {
            page(.data(valueCount: Int32(p.valueCount), encoding: p.encoding), p.payload)
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
        pending.append(footer)
        pending.u32(UInt32(footer.count))
        pending.append(Self.magic)
        try file.append(pending.take())
        try file.publish()
        return file.size
    }
}
