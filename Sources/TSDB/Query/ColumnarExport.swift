extension Store {
    public enum TextFormat: Sendable { case csv, ndjson }

    /// Writes the samples of `type` starting in `[from, to)` as CSV rows (``DayFileWriter/csvHeader``
    /// columns, no header) or NDJSON lines, straight from decoded columns: each dictionary string
    /// is escaped once per segment, not once per row. `flush` receives the bytes in chunks.
    public func writeSamples(
        of type: String, from: Int64 = .min, to: Int64 = .max, format: TextFormat,
        source: String? = nil, flush: ([UInt8]) -> Void
    ) throws(TSDBError) {
        try writeRows(
            of: type, from: from, to: to, source: source, rows: { SampleRows($0, format: format) }, flush: flush)
    }

    /// Writes the samples of `type` starting in `[from, to)` as table rows in `style`
    /// (``SampleTableRows``), straight from decoded columns like ``writeSamples(of:from:to:format:source:flush:)``:
    /// each text's cell is made once per segment, not once per row.
    public func writeSampleTable(
        of type: String, from: Int64 = .min, to: Int64 = .max, style: SampleTableStyle, source: String? = nil,
        flush: ([UInt8]) -> Void
    ) throws(TSDBError) {
        try writeRows(of: type, from: from, to: to, source: source, rows: { SampleTableRows($0, style) }, flush: flush)
    }

    /// The rows `rows` makes for each segment of the samples in range, in chunks of about 64 KiB.
    private func writeRows<Rows: SampleRowWriter>(
        of type: String, from: Int64, to: Int64, source: String?, rows make: (SegmentReader) -> Rows,
        flush: ([UInt8]) -> Void
    ) throws(TSDBError) {
        var out: [UInt8] = []
        out.reserveCapacity(1 << 17)
        let filter = source?.lowercased()
        let block = DecodedBlock()
        for segment in try segments(of: type, from: from, to: to) {
            var rows = make(segment)
            let keep = filter.map { filter in
                (segment.sources + segment.devices).map { $0.string?.lowercased().containsText(filter) ?? false }
            }
            for b in 0..<segment.blockCount
            where segment.summaries[b].lastStart >= from && segment.summaries[b].firstStart < to {
                try segment.decode(block: b, into: block)
                // Starts are in order within a block.
                let starts = block.starts
                var i = starts.partitioningIndex { $0 >= from }
                let end = starts[i...].partitioningIndex { $0 >= to }
                while i < end {
                    i = rows.append(i..<end, of: block, keep: keep ?? [], to: &out)
                    if out.count >= 1 << 16 {
                        flush(out)
                        out.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        if !out.isEmpty { flush(out) }
    }
}

/// Rows of one segment's samples as text, a batch at a time.
protocol SampleRowWriter {
    /// Appends the rows of `rows` of `block` (decoded from the segment, all columns) whose source
    /// or device `keep` holds (sources first, then devices; empty: all rows), until `out` has grown
    /// by about 64 KiB; returns the first row not looked at (past the first, so that a caller
    /// calling again makes progress).
    mutating func append(_ rows: Range<Int>, of block: DecodedBlock, keep: [Bool], to out: inout [UInt8]) -> Int
}

extension SegmentReader {
    /// The `value` field of sample `i` of a decoded block.
    package func value(of b: DecodedBlock, at i: Int) -> SampleValue {
        let tag = UInt8(truncatingIfNeeded: b.valueTags[i])
        switch tag {
        case ValueTag.absent: return .absent
        case ValueTag.null: return .null
        case ValueTag.numberText: return .numberText(dictionary.numberTexts[Int(b.mantissas[i])])
        default: return .decimal(ExactDecimal(mantissa: b.mantissas[i], scale: tag - ValueTag.decimalBase))
        }
    }
}
