/// Integer column chunks: frame-of-reference bit packing, optionally over deltas.
///
/// Layout (Formats/segment-v3.md §5.1):
///
///     u8      encoding    0 = FOR, 1 = delta-FOR, 2 = delta-FOR in miniblocks
///     FOR:       varint reference, u8 width, ceil(n*width/8) bytes packed (v - reference)
///     delta-FOR: varint first, varint reference, u8 width, ceil((n-1)*width/8) bytes packed (d - reference)
///     miniblocks: varint first, then per run of up to 128 deltas: varint reference, u8 width, packed
///
/// All arithmetic wraps, so every `Int64` (extremes included) round-trips exactly. Bits are packed
/// little-endian: value `i` occupies bits `i*width ..< (i+1)*width` of the little-endian bit stream.
package enum IntColumn {
    enum Encoding: UInt8 {
        case frameOfReference = 0
        case deltaFrameOfReference = 1
        case deltaMiniblocks = 2
    }

    /// Deltas per miniblock (§5.1): small enough that a workout's 5-second heart-rate gaps and a
    /// night's 5-minute gaps in one block each get their own bit width.
    static let miniblockSize = 128

    /// Readers may load 8 bytes at any packed byte offset, so decode buffers keep this much zeroed slack.
    static let readSlack = 8

    static func packedByteCount(count: Int, width: Int) -> Int {
        (count * width + 7) / 8
    }

    @inline(__always) package static func bitWidth(_ range: UInt64) -> Int {
        64 - range.leadingZeroBitCount
    }

    /// Appends the smaller of the two encodings of `values`.
    static func encode(_ values: UnsafeBufferPointer<Int64>, into out: inout ByteWriter) {
        let n = values.count
        guard n > 0 else {
            out.u8(Encoding.frameOfReference.rawValue)
            out.varint(0)
            out.u8(0)
            return
        }
        // Most of a block's columns hold one value (a heart-rate block's unit, source, device, value
        // tag, duration and time form): FOR of width 0, which the general pass below also picks, in
        // one comparison a value instead of four running extremes.
        if values.allSatisfy({ $0 == values[0] }) {
            out.u8(Encoding.frameOfReference.rawValue)
            out.varint(values[0])
            out.u8(0)
            return
        }
        var lo = values[0]
        var hi = values[0]
        var dlo = Int64.max
        var dhi = Int64.min
        for i in 1..<max(n, 1) {
            let v = values[i]
            lo = min(lo, v)
            hi = max(hi, v)
            let d = v &- values[i - 1]
            dlo = min(dlo, d)
            dhi = max(dhi, d)
        }
        let forWidth = bitWidth(UInt64(bitPattern: hi &- lo))
        let deltaWidth = n > 1 ? bitWidth(UInt64(bitPattern: dhi &- dlo)) : 0
        let forBytes = packedByteCount(count: n, width: forWidth)
        let deltaBytes = packedByteCount(count: n - 1, width: deltaWidth) + 9
        // Miniblocks take at least 10 bytes and 2 a run: most columns (a block's one source, unit,
        // time form) are FOR of width 0, and their miniblock costs need not be added up.
        let runs = (n - 1 + miniblockSize - 1) / miniblockSize
        let fewest = min(forBytes, deltaBytes)
        let miniblocks = n > 1 && fewest > 10 + 2 * runs ? miniblockCost(values) : .max
        if miniblocks < fewest {
            out.u8(Encoding.deltaMiniblocks.rawValue)
            out.varint(values[0])
            var start = 1
            while start < n {
                let end = min(start + miniblockSize, n)
                let (lo, hi) = deltaRange(values, start..<end)
                let width = bitWidth(UInt64(bitPattern: hi &- lo))
                out.varint(lo)
                out.u8(UInt8(width))
                let base = start
                pack(count: end - start, width: width, into: &out) {
                    UInt64(bitPattern: (values[base + $0] &- values[base + $0 - 1]) &- lo)
                }
                start = end
            }
        } else if n > 1 && deltaBytes < forBytes {
            out.u8(Encoding.deltaFrameOfReference.rawValue)
            out.varint(values[0])
            out.varint(dlo)
            out.u8(UInt8(deltaWidth))
            pack(count: n - 1, width: deltaWidth, into: &out) {
                UInt64(bitPattern: (values[$0 + 1] &- values[$0]) &- dlo)
            }
        } else {
            out.u8(Encoding.frameOfReference.rawValue)
            out.varint(lo)
            out.u8(UInt8(forWidth))
            pack(count: n, width: forWidth, into: &out) { UInt64(bitPattern: values[$0] &- lo) }
        }
    }

    /// The smallest and largest difference between neighbours over `range` (each with the value
    /// before it; `range` starts at 1 or later).
    @inline(__always)
    static func deltaRange(_ values: UnsafeBufferPointer<Int64>, _ range: Range<Int>) -> (Int64, Int64) {
        var lo = Int64.max
        var hi = Int64.min
        for i in range {
            let d = values[i] &- values[i - 1]
            lo = min(lo, d)
            hi = max(hi, d)
        }
        return (lo, hi)
    }

    /// Bytes the miniblock encoding would take (headers estimated at their varint length).
    static func miniblockCost(_ values: UnsafeBufferPointer<Int64>) -> Int {
        var total = 10
        var start = 1
        while start < values.count {
            let end = min(start + miniblockSize, values.count)
            let (lo, hi) = deltaRange(values, start..<end)
            let zig = ZigZag.encode(lo)
            total += 1 + (zig == 0 ? 1 : (64 - zig.leadingZeroBitCount + 6) / 7)
            total += packedByteCount(count: end - start, width: bitWidth(UInt64(bitPattern: hi &- lo)))
            start = end
        }
        return total
    }

    /// Packs `count` numbers of `width` bits (§5.1, bit packing) straight into `out`'s bytes, a
    /// word at a time (through an array of bytes, the year's column encoding took 139M instructions, so 118M).
    @inline(__always)
    static func pack(count: Int, width: Int, into out: inout ByteWriter, _ value: (Int) -> UInt64) {
        guard width > 0, count > 0 else { return }
        out.appendZeros(packedByteCount(count: count, width: width)) { packed in
            var acc: UInt64 = 0
            var bits = 0
            var at = 0
            for i in 0..<count {
                let v = value(i)
                acc |= v << UInt64(bits)
                let taken = 64 - bits
                bits += width
                if bits >= 64 {
                    packed.storeBytes(of: acc.littleEndian, toByteOffset: at, as: UInt64.self)
                    at += 8
                    bits -= 64
                    acc = taken < 64 && bits > 0 ? v >> UInt64(taken) : 0
                }
            }
            var s = 0
            while s < bits {
                packed[at] = UInt8(truncatingIfNeeded: acc >> UInt64(s))
                at += 1
                s += 8
            }
        }
    }

    /// ``pack(count:width:into:_:)`` of `values`, for Parquet, whose bit packing is the same (least
    /// significant bit first). A call per run of values: called from the Parquet module through its
    /// closure, a call per value, the year's export took 946 M instructions against 904 M.
    package static func pack(_ values: UnsafeBufferPointer<UInt64>, width: Int, into out: inout ByteWriter) {
        pack(count: values.count, width: width, into: &out) { values[$0] }
    }

    /// What a column's headers prove about its values, so a reader's checks need not look at
    /// each value: a heart-rate block's value tags, units and sources are one value each (width
    /// 0), and its starts are deltas that are never negative.
    struct Facts: Equatable {
        /// Every value lies in this range (nil: the headers do not bound them).
        var range: ClosedRange<Int64>?
        /// The values never decrease.
        var ascending: Bool

        static let unknown = Facts(range: nil, ascending: false)

        /// Whether start offsets with these facts make instants `from + offset × unit` that are
        /// exact and none before `from` (segment-v3 §5.2): bounded to `0 ...` a top whose instant
        /// fits, so no multiplication or addition wraps and the instants keep the offsets' order.
        func boundInstants(from: Int64, unit: Int64) -> Bool {
            guard let range, range.lowerBound >= 0 else { return false }
            let (span, o1) = range.upperBound.multipliedReportingOverflow(by: unit)
            return !o1 && !from.addingReportingOverflow(span).overflow
        }

        /// `count` values `reference + p`, `p` below 2^`width`: bounded unless that can wrap.
        static func frameOfReference(reference: Int64, width: Int, count: Int) -> Facts {
            guard let top = largest(reference: reference, width: width) else { return .unknown }
            return Facts(range: reference...top, ascending: width == 0 || count < 2)
        }

        /// The largest of `reference + p` for `p` below 2^`width`, if no such sum wraps.
        static func largest(reference: Int64, width: Int) -> Int64? {
            guard width < 63 else { return nil }
            let (top, overflow) = reference.addingReportingOverflow((1 << Int64(width)) - 1)
            return overflow ? nil : top
        }
    }

    /// Running bounds of a delta column's prefix sums, one run of deltas at a time.
    private struct DeltaBounds {
        var lowest: Int64
        var highest: Int64
        var ascending = true
        var known = true

        init(first: Int64) { (lowest, highest) = (first, first) }

        /// `count` more deltas `reference + p`, `p` below 2^`width`.
        mutating func add(count: Int, reference: Int64, width: Int) {
            guard known, let top = Facts.largest(reference: reference, width: width) else {
                known = false
                return
            }
            let (down, o1) = Int64(count).multipliedReportingOverflow(by: Swift.min(reference, 0))
            let (up, o2) = Int64(count).multipliedReportingOverflow(by: Swift.max(top, 0))
            let (newLowest, o3) = lowest.addingReportingOverflow(down)
            let (newHighest, o4) = highest.addingReportingOverflow(up)
            guard !(o1 || o2 || o3 || o4) else {
                known = false
                return
            }
            (lowest, highest) = (newLowest, newHighest)
            ascending = ascending && reference >= 0
        }

        var facts: Facts { known ? Facts(range: lowest...highest, ascending: ascending) : .unknown }
    }

    /// Decodes `count` values into `out`, and returns what the headers prove about them. `reader`
    /// must sit on a buffer with ``readSlack`` bytes of addressable memory after its end (the
    /// decoder's scratch buffer guarantees this).
    @discardableResult
    static func decode(_ reader: inout ByteReader, count n: Int, into out: UnsafeMutablePointer<Int64>)
        throws(TSDBError) -> Facts
    {
        try decode(&reader, count: n, into: out, mapped: Unchanged())
    }

    /// As ``decode(_:count:into:)``, writing `mapping(v)` for each value `v`; the facts returned are
    /// about the values themselves. A block's start offsets become instants as they are unpacked
    /// (`first + v × unit`, Formats/segment-v3.md §5.2), where a pass of their own after unpacking
    /// took ~6 instructions a sample (7% of the year's daily percentiles, callgrind).
    static func decode<Mapping: ValueMapping>(
        _ reader: inout ByteReader, count n: Int, into out: UnsafeMutablePointer<Int64>, mapped mapping: Mapping
    ) throws(TSDBError) -> Facts {
        let raw = try reader.u8("column encoding")
        guard let encoding = Encoding(rawValue: raw) else {
            throw reader.fail(
                "unknown integer column encoding \(raw), expected 0 (FOR), 1 (delta-FOR) or 2 (miniblocks)")
        }
        switch encoding {
        case .frameOfReference:
            let reference = try reader.varint("FOR reference")
            let width = try widthByte(&reader)
            let packed = try reader.bytes(packedByteCount(count: n, width: width), "FOR packed values")
            unpack(packed, count: n, width: width, reference: reference, into: out, mapped: mapping)
            return .frameOfReference(reference: reference, width: width, count: n)
        case .deltaFrameOfReference:
            guard n > 0 else { throw reader.fail("delta-FOR column with no values") }
            let first = try reader.varint("delta-FOR first value")
            let reference = try reader.varint("delta-FOR reference")
            let width = try widthByte(&reader)
            let packed = try reader.bytes(packedByteCount(count: n - 1, width: width), "delta-FOR packed deltas")
            out[0] = mapping(first)
            _ = unpackSums(
                packed, count: n - 1, width: width, reference: reference, from: first, into: out + 1, mapped: mapping)
            var bounds = DeltaBounds(first: first)
            bounds.add(count: n - 1, reference: reference, width: width)
            return bounds.facts
        case .deltaMiniblocks:
            guard n > 1 else { throw reader.fail("miniblock column with fewer than 2 values") }
            let first = try reader.varint("miniblock first value")
            out[0] = mapping(first)
            var bounds = DeltaBounds(first: first)
            var running = first
            var start = 1
            while start < n {
                let count = min(miniblockSize, n - start)
                let reference = try reader.varint("miniblock reference")
                let width = try widthByte(&reader)
                let packed = try reader.bytes(packedByteCount(count: count, width: width), "miniblock packed deltas")
                running = unpackSums(
                    packed, count: count, width: width, reference: reference, from: running, into: out + start,
                    mapped: mapping)
                bounds.add(count: count, reference: reference, width: width)
                start += count
            }
            return bounds.facts
        }
    }

    /// Advances past a column of `count` values without unpacking it.
    static func skip(_ reader: inout ByteReader, count n: Int) throws(TSDBError) {
        let raw = try reader.u8("column encoding")
        switch Encoding(rawValue: raw) {
        case .frameOfReference:
            _ = try reader.varint("FOR reference")
            let width = try widthByte(&reader)
            try reader.skip(packedByteCount(count: n, width: width), "FOR packed values")
        case .deltaFrameOfReference:
            _ = try reader.varint("delta-FOR first value")
            _ = try reader.varint("delta-FOR reference")
            let width = try widthByte(&reader)
            try reader.skip(packedByteCount(count: n - 1, width: width), "delta-FOR packed deltas")
        case .deltaMiniblocks:
            _ = try reader.varint("miniblock first value")
            var start = 1
            while start < n {
                let count = min(miniblockSize, n - start)
                _ = try reader.varint("miniblock reference")
                let width = try widthByte(&reader)
                try reader.skip(packedByteCount(count: count, width: width), "miniblock packed deltas")
                start += count
            }
        case nil:
            throw reader.fail(
                "unknown integer column encoding \(raw), expected 0 (FOR), 1 (delta-FOR) or 2 (miniblocks)")
        }
    }

    private static func widthByte(_ reader: inout ByteReader) throws(TSDBError) -> Int {
        let w = Int(try reader.u8("bit width"))
        guard w <= 64 else { throw reader.fail("bit width \(w) is more than 64") }
        return w
    }

    @inline(__always)
    static func unpack<Mapping: ValueMapping>(
        _ packed: UnsafeRawBufferPointer, count n: Int, width: Int, reference: Int64,
        into out: UnsafeMutablePointer<Int64>, mapped mapping: Mapping
    ) {
        if width == 0 { return out.update(repeating: mapping(reference), count: n) }
        forEachPacked(packed, count: n, width: width) { i, p in out[i] = mapping(reference &+ Int64(bitPattern: p)) }
    }

    /// Unpacks `n` deltas `reference + p` and writes the running sums from `running` on, each
    /// mapped, in the same pass (one pass over the values instead of two); returns the last sum.
    @inline(__always)
    static func unpackSums<Mapping: ValueMapping>(
        _ packed: UnsafeRawBufferPointer, count n: Int, width: Int, reference: Int64, from running: Int64,
        into out: UnsafeMutablePointer<Int64>, mapped mapping: Mapping
    ) -> Int64 {
        var running = running
        if width == 0 {
            for i in 0..<n {
                running = running &+ reference
                out[i] = mapping(running)
            }
            return running
        }
        forEachPacked(packed, count: n, width: width) { i, p in
            running = running &+ reference &+ Int64(bitPattern: p)
            out[i] = mapping(running)
        }
        return running
    }

    /// What ``decode(_:count:into:mapped:)`` writes for each value.
    protocol ValueMapping {
        func callAsFunction(_ value: Int64) -> Int64
    }

    /// Each value as it is.
    struct Unchanged: ValueMapping {
        @inline(__always) func callAsFunction(_ value: Int64) -> Int64 { value }
    }

    /// A start offset `v` as the instant `first + v × unit` (§5.2), wrapping: the reader proves
    /// afterwards that nothing wrapped (``SegmentReader``'s checks of a decoded block).
    struct Instants: ValueMapping {
        let first: Int64
        let unit: Int64

        @inline(__always) func callAsFunction(_ value: Int64) -> Int64 { first &+ value &* unit }
    }

    /// Calls `body` with each of the `n` packed `width`-bit numbers (1–64 bits) in order.
    @inline(__always)
    private static func forEachPacked(
        _ packed: UnsafeRawBufferPointer, count n: Int, width: Int, _ body: (Int, UInt64) -> Void
    ) {
        guard let base = packed.baseAddress else { return }
        // Heart rate's deltas take 1–16 bits: each width gets its own copy of the loop, where every
        // load offset and shift is a constant (with the two chains of extremesAndTotal,
        // daily p50/p95 over five heavy years 19.6 → 14.3 ms).
        switch width {
        case 1: forEachPacked(base, count: n, width: Width<1>.self, body)
        case 2: forEachPacked(base, count: n, width: Width<2>.self, body)
        case 3: forEachPacked(base, count: n, width: Width<3>.self, body)
        case 4: forEachPacked(base, count: n, width: Width<4>.self, body)
        case 5: forEachPacked(base, count: n, width: Width<5>.self, body)
        case 6: forEachPacked(base, count: n, width: Width<6>.self, body)
        case 7: forEachPacked(base, count: n, width: Width<7>.self, body)
        case 8: forEachPacked(base, count: n, width: Width<8>.self, body)
        case 9: forEachPacked(base, count: n, width: Width<9>.self, body)
        case 10: forEachPacked(base, count: n, width: Width<10>.self, body)
        case 11: forEachPacked(base, count: n, width: Width<11>.self, body)
        case 12: forEachPacked(base, count: n, width: Width<12>.self, body)
        case 13: forEachPacked(base, count: n, width: Width<13>.self, body)
        case 14: forEachPacked(base, count: n, width: Width<14>.self, body)
        case 15: forEachPacked(base, count: n, width: Width<15>.self, body)
        case 16: forEachPacked(base, count: n, width: Width<16>.self, body)
        default: forEachPacked(base, from: 0, to: n, width: width, body)
        }
    }

    /// A bit width as a type, so each width gets its own specialised copy of a loop.
    enum Width<let bits: Int> {}

    /// Eight numbers of `width` bits take exactly `width` bytes, so every group of eight starts on
    /// a byte and number `k` of a group lies at the same bit offset in each: constants in the copy
    /// specialised for one width.
    @inline(__always)
    private static func forEachPacked<let width: Int>(
        _ base: UnsafeRawPointer, count n: Int, width _: Width<width>.Type, _ body: (Int, UInt64) -> Void
    ) {
        let mask: UInt64 = (1 << UInt64(width)) - 1
        var group = base
        var i = 0
        while i + 8 <= n {
            for k in 0..<8 {
                let bit = k * width
                let word = UInt64(littleEndian: group.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
                body(i + k, (word >> UInt64(bit & 7)) & mask)
            }
            group += width
            i += 8
        }
        forEachPacked(base, from: i, to: n, width: width, body)
    }

    /// Numbers `from ..< to` of any width, one at a time.
    @inline(__always)
    private static func forEachPacked(
        _ base: UnsafeRawPointer, from: Int, to n: Int, width: Int, _ body: (Int, UInt64) -> Void
    ) {
        if width <= 56 {
            // One unaligned 8-byte load covers any value (shift <= 7, width <= 56).
            let mask: UInt64 = (1 << UInt64(width)) - 1
            var bit = from * width
            for i in from..<max(from, n) {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
                body(i, (word >> UInt64(bit & 7)) & mask)
                bit += width
            }
        } else {
            let mask: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
            var bit = from * width
            for i in from..<max(from, n) {
                let byte = bit >> 3
                let shift = UInt64(bit & 7)
                let lo = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: byte, as: UInt64.self))
                var v = lo >> shift
                if shift > 0 {
                    let hi = UInt64(base.load(fromByteOffset: byte + 8, as: UInt8.self))
                    v |= hi << (64 - shift)
                }
                body(i, v & mask)
                bit += width
            }
        }
    }
}
