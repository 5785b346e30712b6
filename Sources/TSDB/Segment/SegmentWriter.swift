/// Serialises the samples of one (type, month) into segment-v3 bytes.
///
/// Input samples must already be sorted by start and free of duplicates; strings are resolved
/// through `strings` (the compactor's interner) and re-numbered into the segment's own dictionaries.
struct SegmentWriter {
    var blockSamples = SegmentFormat.defaultBlockSamples
    var codec: BlockCodec = .lz4
    var zstdLevel: Int32 = 3
    /// A block that already holds this many samples ends at the next local midnight (in the
    /// samples' own UTC offset), so day buckets in the wearer's zone can be answered from block
    /// summaries (§5). 0 disables the split.
    var daySplitSamples = 256

    /// Encodes `samples` as a complete segment file image; after `prefix`'s blocks when given
    /// (`samples` then all start after them and `strings` holds its dictionary's strings).
    func encode(
        type: String, year: Int, month: Int, samples: UnsafeBufferPointer<PackedSample>, strings: ByteInterner,
        after prefix: SegmentPrefix? = nil
    ) -> [UInt8] {
        var dictionary = DictionaryTables(type: type, year: year, month: month)
        var out = ByteWriter(capacity: (prefix?.bytes.count ?? 0) + samples.count * 2 + 4096)
        let entries = prefix?.entries.count ?? 0
        var index = ByteWriter(capacity: (entries + samples.count / blockSamples + 1) * SegmentFormat.indexEntrySize)
        var slots = ByteWriter(capacity: (prefix?.slotBytes.count ?? 0) + samples.count / 8 + 16)
        if let prefix {
            dictionary.seed(prefix, strings)
            out.append(prefix.bytes)
            for entry in prefix.entries { entry.encode(into: &index) }
            slots.append(prefix.slotBytes)
        } else {
            SegmentHeader.encode(into: &out)
        }
        let columns = BlockColumns(capacity: min(blockSamples, samples.count))
        var blockStart = 0
        var blockCount = entries
        while blockStart < samples.count {
            let blockEnd = Self.blockEnd(samples, from: blockStart, limit: blockSamples, daySplit: daySplitSamples)
            let block = UnsafeBufferPointer(rebasing: samples[blockStart..<blockEnd])
            let (summary, exponent) = fill(columns, with: block, dictionary: &dictionary, strings: strings)
            let raw = columns.encode()
            let (stored, usedCodec) = compress(raw)
            let location = BlockLocation(
                offset: out.count, storedLength: stored.count, rawLength: raw.count,
                crc: CRC32C.checksum(stored), codec: usedCodec, timeUnitExponent: exponent)
            out.append(stored)
            IndexEntry(location: location, summary: summary).encode(into: &index)
            SlotRegion.encodeBlock(block, into: &slots)
            blockCount += 1
            blockStart = blockEnd
        }

        let rawDictionary = dictionary.encoded(strings: strings)
        let (storedDictionary, dictionaryCodec) = compress(rawDictionary)
        let dictionaryOffset = out.count
        out.append(storedDictionary)
        let (storedSlots, slotCodec) = compressSlots(slots.bytes)
        out.append(storedSlots)
        let indexOffset = out.count
        out.append(index.bytes)
        SegmentFooter(
            dictionaryOffset: UInt64(dictionaryOffset), dictionaryStoredLength: storedDictionary.count,
            dictionaryRawLength: rawDictionary.count, dictionaryCRC: CRC32C.checksum(storedDictionary),
            dictionaryCodec: dictionaryCodec, indexOffset: UInt64(indexOffset), blockCount: blockCount,
            indexCRC: CRC32C.checksum(index.bytes), sampleCount: UInt64((prefix?.sampleCount ?? 0) + samples.count),
            slotCodec: slotCodec,
            slotStoredLength: storedSlots.count, slotRawLength: slots.bytes.count,
            slotCRC: CRC32C.checksum(storedSlots)
        ).encode(into: &out)
        return out.bytes
    }

    /// Fills the nine columns (§5.1) of one block and computes its summary (§6).
    private func fill(
        _ columns: BlockColumns, with block: UnsafeBufferPointer<PackedSample>,
        dictionary: inout DictionaryTables, strings: ByteInterner
    ) -> (BlockSummary, UInt8) {
        columns.count = block.count
        var summary = SummaryBuilder(block)
        let exponent = Self.timeUnitExponent(block)
        let unit = SegmentFormat.powersOfTen[Int(exponent)]
        let firstStart = block.first!.start
        let (start, duration, form) = (columns[.start], columns[.duration], columns[.form])
        let (valueTag, mantissa, units) = (columns[.valueTag], columns[.mantissa], columns[.unit])
        let (source, device, metadata) = (columns[.source], columns[.device], columns[.metadata])
        // Seconds divide by a constant (a multiplication), other units by the looked-up power.
        let seconds = exponent == SegmentFormat.maxTimeUnitExponent
        for (i, s) in block.enumerated() {
            if seconds {
                start[i] = (s.start - firstStart) / ISO8601.microsPerSecond
                duration[i] = (s.end - s.start) / ISO8601.microsPerSecond
            } else {
                start[i] = (s.start - firstStart) / unit
                duration[i] = (s.end - s.start) / unit
            }
            form[i] = dictionary.formID(s.forms)
            valueTag[i] = Int64(s.valueTag)
            var numeric: Double? = nil
            if s.valueTag == ValueTag.numberText {
                let id = dictionary.numberTexts.id(Int32(truncatingIfNeeded: s.mantissa))
                mantissa[i] = id - SegmentFormat.firstDictionaryID
                numeric = strings.withBytes(Int32(truncatingIfNeeded: s.mantissa)) {
                    Double(String(decoding: $0, as: UTF8.self))
                }
            } else {
                mantissa[i] = s.mantissa
                if s.valueTag >= ValueTag.decimalBase {
                    numeric = ExactDecimal(mantissa: s.mantissa, scale: s.valueTag - ValueTag.decimalBase).doubleValue
                }
            }
            summary.add(end: s.end, value: numeric)
            units[i] = dictionary.units.id(s.unit)
            source[i] = dictionary.sources.id(s.source)
            device[i] = dictionary.devices.id(s.device)
            metadata[i] = dictionary.metadata.id(s.metadata)
        }
        return (summary.finished, exponent)
    }

    /// Where the block starting at `start` ends (§5): at `limit` samples, or at the first sample
    /// whose local date (by its own start offset) differs from the previous one's once the block
    /// holds `daySplit` samples.
    static func blockEnd(_ samples: UnsafeBufferPointer<PackedSample>, from start: Int, limit: Int, daySplit: Int)
        -> Int
    {
        let end = min(start + limit, samples.count)
        guard daySplit > 0, end - start > daySplit else { return end }
        func localDay(_ s: PackedSample) -> Int64 {
            let offset = Int64(TimeForm(packed: UInt32(truncatingIfNeeded: s.forms)).offsetMinutes) * 60_000_000
            return ISO8601.floorDivide(s.start + offset, ISO8601.microsPerDay).0
        }
        var day = localDay(samples[start + daySplit - 1])
        for i in (start + daySplit)..<end {
            let d = localDay(samples[i])
            if d != day { return i }
            day = d
        }
        return end
    }

    /// The coarsest unit 10^e µs (e ≤ 6) that divides every start offset and duration in the block (§5.2).
    static func timeUnitExponent(_ block: UnsafeBufferPointer<PackedSample>) -> UInt8 {
        let first = block.first!.start
        // Whole seconds first, by a constant the compiler divides by multiplying: most blocks
        // are, and a power of ten looked up per sample made two `idiv`s a sample here.
        let second = ISO8601.microsPerSecond
        if block.allSatisfy({ ($0.start - first) % second == 0 && ($0.end - $0.start) % second == 0 }) {
            return SegmentFormat.maxTimeUnitExponent
        }
        var e = Int(SegmentFormat.maxTimeUnitExponent)
        for s in block {
            while e > 0 {
                let u = SegmentFormat.powersOfTen[e]
                if (s.start - first) % u == 0 && (s.end - s.start) % u == 0 { break }
                e -= 1
            }
            if e == 0 { break }
        }
        return UInt8(e)
    }

    private func compress(_ raw: [UInt8]) -> ([UInt8], BlockCodec) {
        if let packed = codec.compress(raw, level: zstdLevel), codec != .none { return (packed, codec) }
        return (raw, .none)
    }

    /// §6.1 The slot region with the block codec only when that saves at least a quarter of it: an
    /// aggregate that reads slots decompresses the whole region first, and lz4 saved a heavy watch's
    /// regions 10% (0.02 bytes a heart-rate sample) for 13% more instructions in a daily aggregate.
    private func compressSlots(_ raw: [UInt8]) -> ([UInt8], BlockCodec) {
        let (stored, codec) = compress(raw)
        return stored.count * 4 <= raw.count * 3 ? (stored, codec) : (raw, .none)
    }

}

/// A block's summary as its samples go by (§6). The squared deviations use Welford's update on
/// values shifted by the block's first value, so they stay exact for large values.
private struct SummaryBuilder {
    var summary: BlockSummary
    var mean = 0.0
    var reference: Double?

    init(_ block: UnsafeBufferPointer<PackedSample>) {
        summary = BlockSummary(
            sampleCount: block.count, valueCount: 0, firstStart: block.first!.start,
            lastStart: block.last!.start, maxEnd: .min, minValue: .infinity,
            maxValue: -.infinity, sum: 0, sumOfSquaredDeviations: 0)
    }

    @inline(__always) mutating func add(end: Int64, value: Double?) {
        summary.maxEnd = max(summary.maxEnd, end)
        guard let v = value else { return }
        summary.valueCount += 1
        summary.minValue = min(summary.minValue, v)
        summary.maxValue = max(summary.maxValue, v)
        summary.sum += v
        let x = v - (reference ?? v)
        if reference == nil { reference = v }
        let delta = x - mean
        mean += delta / Double(summary.valueCount)
        summary.sumOfSquaredDeviations += delta * (x - mean)
    }

    var finished: BlockSummary {
        var s = summary
        if s.valueCount == 0 {
            s.sum = 0
            s.sumOfSquaredDeviations = 0
        }
        return s
    }
}

/// The segment's dictionaries (§4) as the blocks are written: strings re-numbered from the
/// compactor's interner, time-form pairs in first-use order.
private struct DictionaryTables {
    var dictionary: SegmentDictionary
    var units = DictionaryBuilder(), sources = DictionaryBuilder(), devices = DictionaryBuilder()
    var metadata = DictionaryBuilder(), numberTexts = DictionaryBuilder()
    var formIDs: [UInt64: Int64] = [:]
    var lastForm: (key: UInt64, id: Int64) = (.max, -1)

    init(type: String, year: Int, month: Int) { dictionary = SegmentDictionary(type: type, year: year, month: month) }

    @inline(__always) mutating func formID(_ forms: UInt64) -> Int64 {
        if forms != lastForm.key {
            if let id = formIDs[forms] {
                lastForm = (forms, id)
            } else {
                let id = Int64(dictionary.forms.count)
                dictionary.forms.append(forms)
                formIDs[forms] = id
                lastForm = (forms, id)
            }
        }
        return lastForm.id
    }

    /// Starts as a prefix's dictionary, so its entries keep their ids.
    mutating func seed(_ prefix: SegmentPrefix, _ strings: ByteInterner) {
        let ids = prefix.internedDictionary
        for text in ids.units { _ = units.id(text) }
        for text in ids.sources { _ = sources.id(text) }
        for text in ids.devices { _ = devices.id(text) }
        for text in ids.metadata { _ = metadata.id(text) }
        for text in ids.numberTexts { _ = numberTexts.id(text) }
        for forms in prefix.dictionary.forms { _ = formID(forms) }
    }

    /// The dictionary's bytes (§4), each entry's read from the compactor's interner.
    func encoded(strings: ByteInterner) -> [UInt8] {
        var w = ByteWriter()
        w.string(dictionary.type)
        w.u16(UInt16(dictionary.year))
        w.u8(UInt8(dictionary.month))
        for list in [units, sources, devices, metadata, numberTexts] {
            w.uvarint(UInt64(list.entries.count))
            for id in list.entries {
                // Bytes that are not UTF-8 are repaired as `String(decoding:)` repairs them.
                strings.withBytes(id) {
                    ByteReader.isASCII($0) ? w.string(utf8: $0) : w.string(String(decoding: $0, as: UTF8.self))
                }
            }
        }
        w.uvarint(UInt64(dictionary.forms.count))
        for f in dictionary.forms { w.u64(f) }
        return w.bytes
    }
}

/// Assigns segment dictionary ids (0 absent, 1 null, 2+k entry k) to interned strings.
///
/// Entries stay interned ids until the dictionary is encoded: an import's segment holds a
/// metadata object per record, and a `String` made of each (to be copied again) was ~18% of the
/// thread writing segments. Ids are found in a table sized to this segment's entries: a dense one
/// indexed by interned id, as large as the compactor's interner and filled anew for each segment,
/// cost ~140 k instructions a dictionary.
private struct DictionaryBuilder {
    /// Interned ids in dictionary order.
    private(set) var entries: [Int32] = []
    /// Open addressing by interned id: each slot is an index into `entries` plus one (0: empty).
    private var slots = [Int32](repeating: 0, count: 16)
    /// The last lookup: consecutive samples mostly share units, sources and devices.
    private var last: (interned: Int32, id: Int64) = (PackedSample.absent, 0)

    @inline(__always)
    mutating func id(_ interned: Int32) -> Int64 {
        if interned == last.interned { return last.id }
        if interned == PackedSample.absent { return 0 }
        if interned == PackedSample.null { return 1 }
        last = (interned, find(interned))
        return last.id
    }

    private mutating func find(_ interned: Int32) -> Int64 {
        var slot = Self.home(interned, slots.count)
        while slots[slot] != 0 {
            let index = Int(slots[slot]) - 1
            if entries[index] == interned { return Int64(index) + SegmentFormat.firstDictionaryID }
            slot = (slot + 1) & (slots.count - 1)
        }
        entries.append(interned)
        slots[slot] = Int32(entries.count)
        if entries.count * 2 > slots.count { grow() }
        return Int64(entries.count - 1) + SegmentFormat.firstDictionaryID
    }

    /// Fibonacci hashing: interned ids are dense small integers.
    @inline(__always) private static func home(_ interned: Int32, _ count: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt32(bitPattern: interned)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (count - 1)
    }

    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        for (index, interned) in entries.enumerated() {
            var slot = Self.home(interned, slots.count)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Int32(index + 1)
        }
    }
}

/// The nine integer columns of a block, in on-disk order (§5.1).
enum Column: Int, CaseIterable {
    case start, duration, form, valueTag, mantissa, unit, source, device, metadata
}

/// A block's nine columns side by side in one allocation, reused from block to block and filled
/// by index: appending to nine arrays cost two uniqueness checks and a capacity check a value.
final class BlockColumns {
    let capacity: Int
    private let values: UnsafeMutablePointer<Int64>
    /// Values in each column (at most `capacity`).
    var count = 0 {
        willSet { precondition(newValue >= 0 && newValue <= capacity, "a block larger than its columns") }
    }

    init(capacity: Int) {
        self.capacity = capacity
        values = .allocate(capacity: capacity * Column.allCases.count)
    }

    deinit { values.deallocate() }

    /// Column `c`'s room: `capacity` values, the first `count` of them the block's.
    subscript(_ c: Column) -> UnsafeMutablePointer<Int64> { values + c.rawValue * capacity }

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: count * 4)
        for c in Column.allCases { IntColumn.encode(UnsafeBufferPointer(start: self[c], count: count), into: &w) }
        return w.bytes
    }
}
