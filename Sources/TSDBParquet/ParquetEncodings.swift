import TSDB

/// Parquet's value encodings (Formats/parquet-v1.md §4), written through the engine's ByteWriter.
enum ParquetEncoder {
    /// Bits needed for values `0 ... maxValue`.
    static func bitWidth(_ maxValue: UInt64) -> Int { maxValue == 0 ? 0 : 64 - maxValue.leadingZeroBitCount }

    /// Packs `values` (each < 2^width) least-significant bit first, as the hybrid's bit-packed
    /// runs and DELTA_BINARY_PACKED miniblocks do; the count must fill whole bytes.
    static func appendBitPacked(_ values: ArraySlice<UInt64>, width: Int, to out: inout ByteWriter) {
        guard width > 0 else { return }
        var buffer: UInt64 = 0
        var buffered = 0
        for v in values {
            // Up to 64 bits of a value; what does not fit in the 64-bit buffer goes in the next.
            buffer |= v << UInt64(buffered)
            let room = 64 - buffered
            if width >= room {
                out.u64(buffer)
                buffer = room == 64 ? 0 : v >> UInt64(room)
                buffered = width - room
            } else {
                buffered += width
            }
        }
        var remaining = buffered
        while remaining > 0 {
            out.u8(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            remaining -= 8
        }
    }

    /// The RLE / bit-packing hybrid (§4.2) of `values`, each < 2^width: runs of eight or more
    /// equal values become RLE runs, the rest bit-packed groups of eight.
    static func rleHybrid(_ values: [UInt64], width: Int) -> [UInt8] {
        var out = ByteWriter()
        let valueBytes = (width + 7) / 8
        var literals: [UInt64] = []
        func flushLiterals(padTo8 pad: Bool) {
            guard !literals.isEmpty else { return }
            if pad { while literals.count % 8 != 0 { literals.append(0) } }
            var i = 0
            while i < literals.count {
                let groups = min((literals.count - i) / 8, 63)
                out.uvarint(UInt64(groups << 1 | 1))
                appendBitPacked(literals[i..<i + groups * 8], width: width, to: &out)
                i += groups * 8
            }
            literals.removeAll(keepingCapacity: true)
        }
        var i = 0
        while i < values.count {
            var j = i + 1
            while j < values.count && values[j] == values[i] { j += 1 }
            var run = j - i
            if run >= 8 + (8 - literals.count % 8) % 8 {
                // Complete the pending bit-packed group with values of the run, then RLE the rest.
                while literals.count % 8 != 0 {
                    literals.append(values[i])
                    run -= 1
                }
                flushLiterals(padTo8: false)
                out.uvarint(UInt64(run) << 1)
                var v = values[i]
                for _ in 0..<valueBytes {
                    out.u8(UInt8(truncatingIfNeeded: v))
                    v >>= 8
                }
            } else {
                literals += values[i..<j]
            }
            i = j
        }
        // The last bit-packed group may be padded: readers stop at the page's value count.
        flushLiterals(padTo8: true)
        return out.bytes
    }

    /// DELTA_BINARY_PACKED (§4.3) of 64-bit integers: blocks of 128 values in four miniblocks of
    /// 32, each miniblock bit-packed at the width of its largest delta above the block minimum.
    static func deltaBinaryPacked(_ values: [Int64]) -> [UInt8] {
        let blockSize = 128
        let miniblocks = 4
        let miniblockSize = blockSize / miniblocks
        var out = ByteWriter()
        out.uvarint(UInt64(blockSize))
        out.uvarint(UInt64(miniblocks))
        out.uvarint(UInt64(values.count))
        let first = values.first ?? 0
        out.varint(first)
        guard values.count > 1 else { return out.bytes }
        var deltas = [Int64](repeating: 0, count: blockSize)
        var packed = [UInt64](repeating: 0, count: miniblockSize)
        var i = 1
        while i < values.count {
            let n = min(blockSize, values.count - i)
            var minDelta = Int64.max
            for k in 0..<n {
                deltas[k] = values[i + k] &- values[i + k - 1]
                minDelta = min(minDelta, deltas[k])
            }
            out.varint(minDelta)
            let used = (n + miniblockSize - 1) / miniblockSize
            var widths = [Int](repeating: 0, count: miniblocks)
            for m in 0..<used {
                var maxOffset: UInt64 = 0
                for k in m * miniblockSize..<min(n, (m + 1) * miniblockSize) {
                    maxOffset = max(maxOffset, UInt64(bitPattern: deltas[k] &- minDelta))
                }
                widths[m] = bitWidth(maxOffset)
            }
            for w in widths { out.u8(UInt8(w)) }
            // Miniblocks past the last value are not written; the last one is padded with zeros.
            for m in 0..<used {
                for k in 0..<miniblockSize {
                    let d = m * miniblockSize + k
                    packed[k] = d < n ? UInt64(bitPattern: deltas[d] &- minDelta) : 0
                }
                appendBitPacked(packed[...], width: widths[m], to: &out)
            }
            i += n
        }
        return out.bytes
    }
}
