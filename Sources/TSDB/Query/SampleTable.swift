/// How ``Store/writeSampleTable(of:from:to:style:source:flush:)`` shows samples: timestamps as
/// recorded or in a zone, and the cells of texts as the caller makes them (padded, made safe for a
/// terminal), each made once per segment and text.
public struct SampleTableStyle {
    /// Timestamps in this zone (whole seconds, ``LocalTimestampWriter``); nil: as recorded.
    public var zone: TimeZoneRules?
    /// The widths the start, end and value cells are padded to, each followed by a space at least.
    public var startWidth = 26, endWidth = 26, valueWidth = 10
    /// The unit's cell, the source-and-device cell and the metadata cell that ends the row, each
    /// with its padding.
    public var unit: (OptionalText) -> [UInt8]
    public var sourceAndDevice: (OptionalText, OptionalText) -> [UInt8]
    public var metadata: (OptionalText) -> [UInt8]

    public init(
        zone: TimeZoneRules?, unit: @escaping (OptionalText) -> [UInt8],
        sourceAndDevice: @escaping (OptionalText, OptionalText) -> [UInt8],
        metadata: @escaping (OptionalText) -> [UInt8]
    ) {
        self.zone = zone
        self.unit = unit
        self.sourceAndDevice = sourceAndDevice
        self.metadata = metadata
    }
}

/// Raw samples of one segment as table rows: start, end (blank when it is the start), value,
/// unit, source and device, metadata. The text cells are made on first use and kept in one buffer
/// by dictionary id (by pair of ids for source and device), so a row copies them: made from each
/// sample's strings, hashing them to find their cells took ~5,200 instructions a row of heart rate.
struct SampleTableRows: SampleRowWriter {
    private let style: SampleTableStyle
    private let units: [OptionalText], sources: [OptionalText], devices: [OptionalText], metadata: [OptionalText]
    private let numberTexts: [[UInt8]]
    private let forms: [(TimeForm, TimeForm)]
    private var recorded = RecordedStampWriter()
    private var local: LocalTimestampWriter?
    /// The cells made so far, one after another; a cell is a range of it.
    private var cells: [UInt8] = []
    private var unitCells: [Range<Int>?], metadataCells: [Range<Int>?]
    private var whoCells: [Int: Range<Int>] = [:]
    /// The last source-and-device cell asked for: rows of one watch repeat it.
    private var lastWho = (key: -1, cell: 0..<0)
    /// Room a row takes besides its three text cells: two timestamps, a value, their spaces, the new line.
    private let fixedRoom: Int

    init(_ segment: SegmentReader, _ style: SampleTableStyle) {
        self.style = style
        (units, sources, devices, metadata) = (segment.units, segment.sources, segment.devices, segment.metadata)
        numberTexts = segment.dictionary.numberTexts.map { Array($0.utf8) }
        forms = segment.forms
        local = style.zone.map(LocalTimestampWriter.init)
        unitCells = Array(repeating: nil, count: units.count)
        metadataCells = Array(repeating: nil, count: metadata.count)
        let longestNumber = max(24, numberTexts.map(\.count).max() ?? 0)
        let stamp = max(ISO8601.longestText, LocalTimestampWriter.length)
        // Timestamps are stored as words (32 bytes), hence the slack.
        fixedRoom =
            max(style.startWidth, stamp) + max(style.endWidth, stamp) + max(style.valueWidth, longestNumber) + 3 + 32
    }

    mutating func append(_ rows: Range<Int>, of block: DecodedBlock, keep: [Bool], to out: inout [UInt8]) -> Int {
        var i = rows.lowerBound
        let (starts, ends, formIds) = (block.starts, block.ends, block.forms)
        let (tags, mantissas) = (block.valueTags, block.mantissas)
        let (unitIds, sourceIds, deviceIds, metadataIds) = (block.units, block.sources, block.devices, block.metadata)
        let sourceCount = sources.count
        // The first row's cells are made before the room, so that the room holds it whatever their length.
        var texts = self.texts(unit: Int(unitIds[i]), Int(sourceIds[i]), Int(deviceIds[i]), Int(metadataIds[i]))
        let capacity = max(1 << 16, fixedRoom + texts.count)
        RowBytes.append(to: &out, capacity: capacity) { row in
            while i < rows.upperBound {
                let (source, device) = (Int(sourceIds[i]), Int(deviceIds[i]))
                guard keep.isEmpty || keep[source] || keep[sourceCount + device] else {
                    i += 1
                    continue
                }
                texts = self.texts(unit: Int(unitIds[i]), source, device, Int(metadataIds[i]))
                guard row.room >= fixedRoom + texts.count else { return }
                let (startForm, endForm) = forms[Int(formIds[i])]
                var mark = row.count
                stamp(starts[i], startForm, to: &row)
                pad(since: mark, to: style.startWidth, &row)
                mark = row.count
                if ends[i] != starts[i] || endForm != startForm { stamp(ends[i], endForm, to: &row) }
                pad(since: mark, to: style.endWidth, &row)
                mark = row.count
                writeValue(tag: UInt8(truncatingIfNeeded: tags[i]), mantissas[i], to: &row)
                pad(since: mark, to: style.valueWidth, &row)
                cells.withUnsafeBytes { cells in
                    row.write(UnsafeRawBufferPointer(rebasing: cells[texts.unit]))
                    row.write(UnsafeRawBufferPointer(rebasing: cells[texts.who]))
                    row.write(UnsafeRawBufferPointer(rebasing: cells[texts.metadata]))
                }
                row.byte(0x0A)
                i += 1
            }
        }
        return i
    }

    /// Where a row's three text cells lie in ``cells`` (made now if they are new) and their length.
    private struct RowTexts {
        var unit: Range<Int>, who: Range<Int>, metadata: Range<Int>
        var count: Int { unit.count + who.count + metadata.count }
    }

    @inline(__always)
    private mutating func texts(unit: Int, _ source: Int, _ device: Int, _ metadata: Int) -> RowTexts {
        RowTexts(unit: unitCell(unit), who: whoCell(source, device), metadata: metadataCell(metadata))
    }

    @inline(__always)
    private mutating func unitCell(_ id: Int) -> Range<Int> {
        unitCells[id] ?? made(id, \.unitCells) { $0.style.unit($0.units[id]) }
    }

    @inline(__always)
    private mutating func metadataCell(_ id: Int) -> Range<Int> {
        metadataCells[id] ?? made(id, \.metadataCells) { $0.style.metadata($0.metadata[id]) }
    }

    /// Makes text `id`'s cell with `make`, keeps it, and notes where it lies in `cache`.
    private mutating func made(
        _ id: Int, _ cache: WritableKeyPath<Self, [Range<Int>?]>, _ make: (Self) -> [UInt8]
    ) -> Range<Int> {
        let range = keep(make(self))
        self[keyPath: cache][id] = range
        return range
    }

    @inline(__always)
    private mutating func whoCell(_ source: Int, _ device: Int) -> Range<Int> {
        let key = source * devices.count + device
        if key == lastWho.key { return lastWho.cell }
        let range = whoCells[key] ?? keep(style.sourceAndDevice(sources[source], devices[device]))
        whoCells[key] = range
        lastWho = (key, range)
        return range
    }

    private mutating func keep(_ cell: [UInt8]) -> Range<Int> {
        cells += cell
        return cells.count - cell.count..<cells.count
    }

    @inline(__always)
    private mutating func stamp(_ micros: Int64, _ form: TimeForm, to row: inout RowBytes) {
        guard local != nil else { return recorded.write(micros, form, to: &row) }
        local!.write(micros, to: &row)
    }

    /// Spaces after the text written since `mark`, up to `width` and one at least.
    @inline(__always)
    private func pad(since mark: Int, to width: Int, _ row: inout RowBytes) {
        let written = row.count - mark
        row.spaces(written >= width ? 1 : width - written)
    }

    @inline(__always)
    private func writeValue(tag: UInt8, _ mantissa: Int64, to row: inout RowBytes) {
        if tag >= ValueTag.decimalBase { return row.write(mantissa: mantissa, scale: tag - ValueTag.decimalBase) }
        if tag == ValueTag.numberText { row.write(numberTexts[Int(mantissa)]) }
    }
}
