/// Serialises the samples of one (type, month) into segment-v2 bytes.
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

    /// Encodes `samples` as a complete segment file image.
    func encode(type: String, year: Int, month: Int, samples: UnsafeBufferPointer<PackedSample>, strings: ByteInterner) -> [UInt8] {
        var dictionary = SegmentDictionary(type: type, year: year, month: month)
        var units = DictionaryBuilder(), sources = DictionaryBuilder(), devices = DictionaryBuilder()
        var metadata = DictionaryBuilder(), numberTexts = DictionaryBuilder()
        var formIDs: [UInt64: Int64] = [:]
        var lastForm: (key: UInt64, id: Int64) = (.max, -1)

        var out = ByteWriter(capacity: samples.count * 2 + 4096)
        out.append(SegmentFormat.magic)
        out.u16(SegmentFormat.version)
        out.u16(0)
        out.u32(out.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<12])) })

        var index = ByteWriter(capacity: (samples.count / blockSamples + 1) * SegmentFormat.indexEntrySize)
        var columns = BlockColumns(capacity: min(blockSamples, samples.count))
        var blockStart = 0
        var blockCount = 0
        while blockStart < samples.count {
            let blockEnd = Self.blockEnd(samples, from: blockStart, limit: blockSamples, daySplit: daySplitSamples)
            let block = UnsafeBufferPointer(rebasing: samples[blockStart..<blockEnd])
            columns.reset()
            var summary = BlockSummary(sampleCount: block.count, valueCount: 0, firstStart: block.first!.start,
                                       lastStart: block.last!.start, maxEnd: .min, minValue: .infinity,
                                       maxValue: -.infinity, sum: 0, sumOfSquaredDeviations: 0)
            var mean = 0.0, reference: Double?
            let exponent = Self.timeUnitExponent(block)
            let unit = SegmentFormat.powersOfTen[Int(exponent)]
            for s in block {
                columns[.start].append((s.start - summary.firstStart) / unit)
                columns[.duration].append((s.end - s.start) / unit)
                summary.maxEnd = max(summary.maxEnd, s.end)
                if s.forms != lastForm.key {
                    lastForm = (s.forms, formIDs[s.forms] ?? {
                        let id = Int64(dictionary.forms.count)
                        dictionary.forms.append(s.forms)
                        formIDs[s.forms] = id
                        return id
                    }())
                }
                columns[.form].append(lastForm.id)
                columns[.valueTag].append(Int64(s.valueTag))
                var numeric: Double? = nil
                if s.valueTag == ValueTag.numberText {
                    let id = numberTexts.id(Int32(truncatingIfNeeded: s.mantissa), strings)
                    columns[.mantissa].append(id - SegmentFormat.firstDictionaryID)
                    numeric = strings.withBytes(Int32(truncatingIfNeeded: s.mantissa)) { Double(String(decoding: $0, as: UTF8.self)) }
                } else {
                    columns[.mantissa].append(s.mantissa)
                    if s.valueTag >= ValueTag.decimalBase {
                        numeric = ExactDecimal(mantissa: s.mantissa, scale: s.valueTag - ValueTag.decimalBase).doubleValue
                    }
                }
                if let v = numeric {
                    summary.valueCount += 1
                    summary.minValue = min(summary.minValue, v)
                    summary.maxValue = max(summary.maxValue, v)
                    summary.sum += v
                    // Welford on values shifted by the block's first value: the squared deviations
                    // from the block mean (segment-v2 §6) stay exact for large values.
                    let x = v - (reference ?? v)
                    if reference == nil { reference = v }
                    let delta = x - mean
                    mean += delta / Double(summary.valueCount)
                    summary.sumOfSquaredDeviations += delta * (x - mean)
                }
                columns[.unit].append(units.id(s.unit, strings))
                columns[.source].append(sources.id(s.source, strings))
                columns[.device].append(devices.id(s.device, strings))
                columns[.metadata].append(metadata.id(s.metadata, strings))
            }
            if summary.valueCount == 0 { summary.sum = 0; summary.sumOfSquaredDeviations = 0 }
            let raw = columns.encode()
            let (stored, usedCodec) = compress(raw)
            let offset = out.count
            out.append(stored)
            let location = BlockLocation(offset: offset, storedLength: stored.count, rawLength: raw.count,
                                         crc: CRC32C.checksum(stored), codec: usedCodec, timeUnitExponent: exponent)
            Self.writeIndexEntry(location, summary, into: &index)
            blockCount += 1
            blockStart = blockEnd
        }

        dictionary.units = units.strings
        dictionary.sources = sources.strings
        dictionary.devices = devices.strings
        dictionary.metadata = metadata.strings
        dictionary.numberTexts = numberTexts.strings
        let rawDictionary = Self.encodeDictionary(dictionary)
        let (storedDictionary, dictionaryCodec) = compress(rawDictionary)
        let dictionaryOffset = out.count
        out.append(storedDictionary)
        let indexOffset = out.count
        out.append(index.bytes)

        // §7 Footer.
        var footer = ByteWriter(capacity: SegmentFormat.footerSize)
        footer.u64(UInt64(dictionaryOffset))
        footer.u32(UInt32(storedDictionary.count))
        footer.u32(UInt32(rawDictionary.count))
        footer.u32(CRC32C.checksum(storedDictionary))
        footer.u8(dictionaryCodec.rawValue)
        footer.append([0, 0, 0])
        footer.u64(UInt64(indexOffset))
        footer.u32(UInt32(blockCount))
        footer.u32(CRC32C.checksum(index.bytes))
        footer.u64(UInt64(samples.count))
        footer.u32(0)
        footer.u32(CRC32C.checksum(footer.bytes))
        footer.append(SegmentFormat.magic)
        out.append(footer.bytes)
        return out.bytes
    }

    /// Where the block starting at `start` ends (§5): at `limit` samples, or at the first sample
    /// whose local date (by its own start offset) differs from the previous one's once the block
    /// holds `daySplit` samples.
    static func blockEnd(_ samples: UnsafeBufferPointer<PackedSample>, from start: Int, limit: Int, daySplit: Int) -> Int {
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
        var e = Int(SegmentFormat.maxTimeUnitExponent)
        let first = block.first!.start
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

    static func writeIndexEntry(_ l: BlockLocation, _ s: BlockSummary, into w: inout ByteWriter) {
        w.u64(UInt64(l.offset))
        w.u32(UInt32(l.storedLength))
        w.u32(UInt32(l.rawLength))
        w.u32(l.crc)
        w.u32(UInt32(s.sampleCount))
        w.u8(l.codec.rawValue)
        w.u8(l.timeUnitExponent)
        w.u16(0)
        w.u32(UInt32(s.valueCount))
        w.i64(s.firstStart)
        w.i64(s.lastStart)
        w.i64(s.maxEnd)
        w.f64(s.minValue)
        w.f64(s.maxValue)
        w.f64(s.sum)
        w.f64(s.sumOfSquaredDeviations)
    }

    static func encodeDictionary(_ d: SegmentDictionary) -> [UInt8] {
        var w = ByteWriter()
        w.string(d.type)
        w.u16(UInt16(d.year))
        w.u8(UInt8(d.month))
        for list in [d.units, d.sources, d.devices, d.metadata, d.numberTexts] {
            w.uvarint(UInt64(list.count))
            for s in list { w.string(s) }
        }
        w.uvarint(UInt64(d.forms.count))
        for f in d.forms { w.u64(f) }
        return w.bytes
    }
}

/// Assigns segment dictionary ids (0 absent, 1 null, 2+k entry k) to interned strings,
/// through a dense table indexed by interned id (no hashing per sample).
private struct DictionaryBuilder {
    var strings: [String] = []
    var ids: [Int64] = []

    mutating func id(_ interned: Int32, _ table: ByteInterner) -> Int64 {
        if interned == PackedSample.absent { return 0 }
        if interned == PackedSample.null { return 1 }
        let i = Int(interned)
        if i < ids.count, ids[i] >= 0 { return ids[i] }
        if i >= ids.count { ids.append(contentsOf: repeatElement(-1, count: max(i + 1, table.count) - ids.count)) }
        let id = Int64(strings.count) + SegmentFormat.firstDictionaryID
        strings.append(table.string(interned))
        ids[i] = id
        return id
    }
}

/// The nine integer columns of a block, in on-disk order (§5.1).
enum Column: Int, CaseIterable {
    case start, duration, form, valueTag, mantissa, unit, source, device, metadata
}

/// One array per ``Column``, reused from block to block.
struct BlockColumns {
    var data: [[Int64]]

    init(capacity: Int) {
        data = Column.allCases.map { _ in
            var a = [Int64]()
            a.reserveCapacity(capacity)
            return a
        }
    }

    subscript(_ c: Column) -> [Int64] {
        get { data[c.rawValue] }
        _modify { yield &data[c.rawValue] }
    }

    mutating func reset() {
        for i in data.indices { data[i].removeAll(keepingCapacity: true) }
    }

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: data[0].count * 4)
        for column in data { column.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) } }
        return w.bytes
    }
}
