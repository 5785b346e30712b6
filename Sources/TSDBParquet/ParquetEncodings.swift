import TSDB

/// Parquet's value encodings (Formats/parquet-v1.md §4), written through the engine's ByteWriter.
/// Each works on the values in place and writes into the page's buffer: made as arrays, slices
/// and a 64-bit append at a time, they were over a third of a Parquet export's instructions.
enum ParquetEncoder {
    /// Bits needed for values `0 ... maxValue`.
    static func bitWidth(_ maxValue: UInt64) -> Int { IntColumn.bitWidth(maxValue) }

    /// Packs `values` (each < 2^width) least-significant bit first, as the hybrid's bit-packed
    /// runs and DELTA_BINARY_PACKED miniblocks do: the segment format's packing (segment-v3 §5.1).
    static func appendBitPacked(_ values: UnsafeBufferPointer<UInt64>, width: Int, to out: inout ByteWriter) {
        IntColumn.pack(values, width: width, into: &out)
    }

    /// Appends the RLE / bit-packing hybrid (§4.2) of `values`, each < 2^width: runs of eight or
    /// more equal values become RLE runs, the rest bit-packed groups of eight. The values waiting to
    /// be bit-packed are always the ones just before the run being looked at, so they are packed
    /// from `values` where they lie.
    static func appendRLEHybrid(_ values: UnsafeBufferPointer<UInt64>, width: Int, to out: inout ByteWriter) {
        var literalsStart = 0
        var i = 0
        while i < values.count {
            let value = values[i]
            var j = i + 1
            while j < values.count && values[j] == value { j += 1 }
            // A run first completes the pending bit-packed group, then is worth a run of its own if
            // eight or more of it remain.
            let fill = (8 - (i - literalsStart) % 8) % 8
            if j - i >= 8 + fill {
                appendGroups(values, literalsStart..<i + fill, width: width, to: &out)
                appendRun(value, count: j - i - fill, width: width, to: &out)
                literalsStart = j
            }
            i = j
        }
        // The last bit-packed group may be padded: readers stop at the page's value count.
        appendGroups(values, literalsStart..<values.count, width: width, to: &out)
    }

    /// The hybrid of `count` copies of `value`, as ``appendRLEHybrid(_:width:to:)`` writes them
    /// (one RLE run from eight on), without a value per row to look at: a column with no nulls
    /// has definition levels all 1.
    static func appendRLEHybrid(repeating value: UInt64, count: Int, width: Int, to out: inout ByteWriter) {
        guard count >= 8 else {
            let copies = Array(repeating: value, count: count)
            copies.withUnsafeBufferPointer { appendRLEHybrid($0, width: width, to: &out) }
            return
        }
        appendRun(value, count: count, width: width, to: &out)
    }

    /// An RLE run: its length behind a 0 bit, then the value in whole bytes, little-endian.
    private static func appendRun(_ value: UInt64, count: Int, width: Int, to out: inout ByteWriter) {
        out.uvarint(UInt64(count) << 1)
        var v = value
        for _ in 0..<(width + 7) / 8 {
            out.u8(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }

    /// Bit-packed runs (at most 63 groups of eight each: a one-byte header) of `values[range]`,
    /// padded with zeros to a whole group.
    private static func appendGroups(
        _ values: UnsafeBufferPointer<UInt64>, _ range: Range<Int>, width: Int, to out: inout ByteWriter
    ) {
        var start = range.lowerBound
        while start < range.upperBound {
            let groups = min((range.upperBound - start + 7) / 8, 63)
            out.uvarint(UInt64(groups << 1 | 1))
            let end = start + groups * 8
            if end <= range.upperBound {
                appendBitPacked(UnsafeBufferPointer(rebasing: values[start..<end]), width: width, to: &out)
            } else {
                var padded = Array(values[start..<range.upperBound])
                padded += repeatElement(0, count: end - range.upperBound)
                padded.withUnsafeBufferPointer { appendBitPacked($0, width: width, to: &out) }
            }
            start = end
        }
    }

    /// Appends `values` as DELTA_BINARY_PACKED (§4.3): blocks of 128 values in four miniblocks of
    /// 32, each miniblock bit-packed at the width of its largest delta above the block minimum.
    static func appendDeltaBinaryPacked(_ values: UnsafeBufferPointer<Int64>, to out: inout ByteWriter) {
        let blockSize = 128
        let miniblocks = 4
        let miniblockSize = blockSize / miniblocks
        out.uvarint(UInt64(blockSize))
        out.uvarint(UInt64(miniblocks))
        out.uvarint(UInt64(values.count))
        out.varint(values.first ?? 0)
        guard values.count > 1 else { return }
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: blockSize) { offsets in
            var i = 1
            while i < values.count {
                let n = min(blockSize, values.count - i)
                var minDelta = Int64.max
                for k in 0..<n { minDelta = min(minDelta, values[i + k] &- values[i + k - 1]) }
                out.varint(minDelta)
                // Deltas above the minimum; the last miniblock is padded with zeros.
                for k in 0..<n { offsets[k] = UInt64(bitPattern: values[i + k] &- values[i + k - 1] &- minDelta) }
                let used = (n + miniblockSize - 1) / miniblockSize
                for k in n..<used * miniblockSize { offsets[k] = 0 }
                func miniblock(_ m: Int) -> UnsafeBufferPointer<UInt64> {
                    UnsafeBufferPointer(rebasing: offsets[m * miniblockSize..<(m + 1) * miniblockSize])
                }
                // Found again when packing: an OR of 32 values costs less than keeping four widths.
                func width(_ m: Int) -> Int { m < used ? bitWidth(miniblock(m).reduce(0) { $0 | $1 }) : 0 }
                // Miniblocks past the last value are not written, but their widths are (as 0).
                for m in 0..<miniblocks { out.u8(UInt8(width(m))) }
                for m in 0..<used { appendBitPacked(miniblock(m), width: width(m), to: &out) }
                i += n
            }
        }
    }
}
