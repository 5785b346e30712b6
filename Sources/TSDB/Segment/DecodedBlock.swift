/// The decoded columns of one block, reused from block to block to avoid allocation.
///
/// After ``SegmentReader/decode(block:into:)`` every array holds ``count`` valid entries:
/// absolute start and end instants in µs, and dictionary ids already checked against the
/// segment's dictionaries.
public final class DecodedBlock {
    public private(set) var count = 0
    /// Start instants, µs since the epoch (UTC), non-decreasing.
    public internal(set) var starts: [Int64] = []
    /// End instants, µs since the epoch (UTC), each ≥ its start.
    public internal(set) var ends: [Int64] = []
    var forms: [Int64] = []
    var valueTags: [Int64] = []
    var mantissas: [Int64] = []
    var units: [Int64] = []
    var sources: [Int64] = []
    var devices: [Int64] = []
    var metadata: [Int64] = []
    private var scratch: UnsafeMutableRawBufferPointer = .allocate(byteCount: 0, alignment: 8)

    public init() {}

    deinit { scratch.deallocate() }

    /// The numeric value of sample `i` (nil for null/absent values).
    public func value(at i: Int, in segment: SegmentReader) -> Double? {
        let tag = UInt8(valueTags[i])
        if tag >= ValueTag.decimalBase {
            return Double(mantissas[i]) / ExactDecimal.powersOfTen[Int(tag - ValueTag.decimalBase)]
        }
        if tag == ValueTag.numberText { return Double(segment.dictionary.numberTexts[Int(mantissas[i])]) }
        return nil
    }

    func scratchBuffer(_ n: Int) -> UnsafeMutableRawBufferPointer {
        if scratch.count < n + IntColumn.readSlack {
            scratch.deallocate()
            scratch = .allocate(byteCount: max(n + IntColumn.readSlack, scratch.count * 2), alignment: 8)
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
        }
        return scratch
    }

    func prepare(_ n: Int) {
        count = n
        func fit(_ a: inout [Int64]) {
            if a.count < n { a.append(contentsOf: repeatElement(0, count: n - a.count)) }
        }
        fit(&starts); fit(&ends); fit(&forms); fit(&valueTags); fit(&mantissas)
        fit(&units); fit(&sources); fit(&devices); fit(&metadata)
    }
}

extension SegmentReader {
    /// Decodes block `index` into `block`, checking its CRC and the consistency of every column.
    public func decode(block index: Int, into block: DecodedBlock) throws(TSDBError) {
        let location = locations[index]
        let summary = summaries[index]
        let n = summary.sampleCount
        block.prepare(n)
        let scratch = block.scratchBuffer(location.rawLength)
        do throws(TSDBError) {
            try file.withBytes { (bytes) throws(TSDBError) in
                let stored = UnsafeRawBufferPointer(rebasing: bytes[location.offset..<location.offset + location.storedLength])
                let crc = CRC32C.checksum(stored)
                guard crc == location.crc else {
                    throw .corrupt("block \(index) CRC mismatch (stored \(hex32(location.crc)), computed \(hex32(crc)))", offset: location.offset)
                }
                let raw = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<location.rawLength])
                do throws(TSDBError) {
                    try location.codec.decompress(stored, into: raw)
                } catch {
                    var e = error
                    e.message = "block \(index): \(e.message)"
                    e.offset = location.offset
                    throw e
                }
            }
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: scratch[0..<location.rawLength]), baseOffset: location.offset,
                               context: "block \(index) (offsets within its decompressed bytes)")
            func column(_ a: inout [Int64]) throws(TSDBError) {
                try a.withUnsafeMutableBufferPointer { (p) throws(TSDBError) in try IntColumn.decode(&r, count: n, into: p.baseAddress!) }
            }
            try column(&block.starts)
            try column(&block.ends)
            try column(&block.forms)
            try column(&block.valueTags)
            try column(&block.mantissas)
            try column(&block.units)
            try column(&block.sources)
            try column(&block.devices)
            try column(&block.metadata)
            guard r.isAtEnd else { throw r.fail("\(r.remaining) unexpected bytes after the last column") }
            try validate(block, index: index, location: location, summary: summary)
        } catch {
            throw error.at(path: path)
        }
    }

    /// Turns stored offsets/durations into instants and checks every invariant the encoder guarantees.
    private func validate(_ b: DecodedBlock, index: Int, location: BlockLocation, summary: BlockSummary) throws(TSDBError) {
        func bad(_ what: String) -> TSDBError { .corrupt("block \(index): \(what)", offset: location.offset) }
        let unit = SegmentFormat.powersOfTen[Int(location.timeUnitExponent)]
        let n = b.count
        var previous = summary.firstStart
        var maxEnd = Int64.min
        let formLimit = Int64(forms.count)
        let limits = (Int64(units.count), Int64(sources.count), Int64(devices.count), Int64(metadata.count))
        let textLimit = Int64(dictionary.numberTexts.count)
        for i in 0..<n {
            let (offset, o1) = b.starts[i].multipliedReportingOverflow(by: unit)
            let (start, o2) = summary.firstStart.addingReportingOverflow(offset)
            let (duration, o3) = b.ends[i].multipliedReportingOverflow(by: unit)
            let (end, o4) = start.addingReportingOverflow(duration)
            guard !(o1 || o2 || o3 || o4) else { throw bad("sample \(i): time overflows 64 bits") }
            guard start >= previous else { throw bad("sample \(i): starts are not in order") }
            guard duration >= 0 else { throw bad("sample \(i): negative duration") }
            b.starts[i] = start
            b.ends[i] = end
            previous = start
            maxEnd = max(maxEnd, end)
            guard b.forms[i] >= 0 && b.forms[i] < formLimit else { throw bad("sample \(i): time form id \(b.forms[i]) out of range") }
            let tag = b.valueTags[i]
            guard tag >= 0 && tag <= Int64(ValueTag.limit) else { throw bad("sample \(i): value tag \(tag) unknown") }
            if tag == Int64(ValueTag.numberText) && !(b.mantissas[i] >= 0 && b.mantissas[i] < textLimit) {
                throw bad("sample \(i): number text id \(b.mantissas[i]) out of range")
            }
            guard b.units[i] >= 0 && b.units[i] < limits.0, b.sources[i] >= 0 && b.sources[i] < limits.1,
                  b.devices[i] >= 0 && b.devices[i] < limits.2, b.metadata[i] >= 0 && b.metadata[i] < limits.3 else {
                throw bad("sample \(i): dictionary id out of range")
            }
        }
        guard b.starts[0] == summary.firstStart, b.starts[n - 1] == summary.lastStart, maxEnd == summary.maxEnd else {
            throw bad("decoded starts/ends disagree with the block summary")
        }
    }

    /// Sample `i` of a decoded block as a full ``Sample``.
    public func sample(_ i: Int, of b: DecodedBlock) -> Sample {
        let (startForm, endForm) = forms[Int(b.forms[i])]
        let tag = UInt8(b.valueTags[i])
        let value: SampleValue
        switch tag {
        case ValueTag.absent: value = .absent
        case ValueTag.null: value = .null
        case ValueTag.numberText: value = .numberText(dictionary.numberTexts[Int(b.mantissas[i])])
        default: value = .decimal(ExactDecimal(mantissa: b.mantissas[i], scale: tag - ValueTag.decimalBase))
        }
        return Sample(type: dictionary.type,
                      start: Timestamp(microseconds: b.starts[i], form: startForm),
                      end: Timestamp(microseconds: b.ends[i], form: endForm),
                      value: value, unit: units[Int(b.units[i])], source: sources[Int(b.sources[i])],
                      device: devices[Int(b.devices[i])], metadata: metadata[Int(b.metadata[i])])
    }

    /// The source string of sample `i` (for filtering without building a whole ``Sample``).
    func sourceText(_ i: Int, of b: DecodedBlock) -> OptionalText { sources[Int(b.sources[i])] }
}
