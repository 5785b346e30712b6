/// The decoded columns of one block, reused from block to block to avoid allocation.
///
/// After ``SegmentReader/decode(block:into:)`` every column holds ``count`` valid entries:
/// absolute start and end instants in µs, and dictionary ids already checked against the
/// segment's dictionaries. The columns live in one buffer owned by this object; the buffer
/// pointers it hands out are valid until the next decode into it (or its deinit).
public final class DecodedBlock {
    public private(set) var count = 0
    private var capacity = 0
    private var storage = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    private var scratch: UnsafeMutableRawBufferPointer = .allocate(byteCount: 0, alignment: 8)

    public init() {}

    deinit {
        storage.deallocate()
        scratch.deallocate()
    }

    func column(_ c: Column) -> UnsafeMutableBufferPointer<Int64> {
        UnsafeMutableBufferPointer(start: storage + c.rawValue * capacity, count: count)
    }

    /// Start instants, µs since the epoch (UTC), non-decreasing.
    public var starts: UnsafeBufferPointer<Int64> { UnsafeBufferPointer(column(.start)) }
    /// End instants, µs since the epoch (UTC), each ≥ its start (decoding turns durations into ends).
    public var ends: UnsafeBufferPointer<Int64> { UnsafeBufferPointer(column(.duration)) }
    var forms: UnsafeMutableBufferPointer<Int64> { column(.form) }
    var valueTags: UnsafeMutableBufferPointer<Int64> { column(.valueTag) }
    var mantissas: UnsafeMutableBufferPointer<Int64> { column(.mantissa) }
    var units: UnsafeMutableBufferPointer<Int64> { column(.unit) }
    var sources: UnsafeMutableBufferPointer<Int64> { column(.source) }
    var devices: UnsafeMutableBufferPointer<Int64> { column(.device) }
    var metadata: UnsafeMutableBufferPointer<Int64> { column(.metadata) }

    /// The numeric value of sample `i` (nil for null/absent values).
    public func value(at i: Int, in segment: SegmentReader) -> Double? {
        let tag = UInt8(truncatingIfNeeded: valueTags[i])
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
        if n > capacity {
            storage.deallocate()
            capacity = max(n, capacity * 2)
            storage = .allocate(capacity: capacity * Column.allCases.count)
            storage.initialize(repeating: 0, count: capacity * Column.allCases.count)
        }
        count = n
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
            for c in Column.allCases {
                try IntColumn.decode(&r, count: n, into: block.column(c).baseAddress!)
            }
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
        let starts = b.column(.start), ends = b.column(.duration), forms = b.forms, tags = b.valueTags
        let mantissas = b.mantissas, units = b.units, sources = b.sources, devices = b.devices, metadata = b.metadata
        for i in 0..<n {
            let (offset, o1) = starts[i].multipliedReportingOverflow(by: unit)
            let (start, o2) = summary.firstStart.addingReportingOverflow(offset)
            let (duration, o3) = ends[i].multipliedReportingOverflow(by: unit)
            let (end, o4) = start.addingReportingOverflow(duration)
            guard !(o1 || o2 || o3 || o4) else { throw bad("sample \(i): time overflows 64 bits") }
            guard start >= previous else { throw bad("sample \(i): starts are not in order") }
            guard duration >= 0 else { throw bad("sample \(i): negative duration") }
            starts[i] = start
            ends[i] = end
            previous = start
            maxEnd = max(maxEnd, end)
            // Unsigned comparisons check 0 ≤ id < limit in one step.
            guard UInt64(bitPattern: forms[i]) < UInt64(formLimit) else { throw bad("sample \(i): time form id \(forms[i]) out of range") }
            let tag = tags[i]
            guard UInt64(bitPattern: tag) <= UInt64(ValueTag.limit) else { throw bad("sample \(i): value tag \(tag) unknown") }
            if tag == Int64(ValueTag.numberText) && UInt64(bitPattern: mantissas[i]) >= UInt64(textLimit) {
                throw bad("sample \(i): number text id \(mantissas[i]) out of range")
            }
            guard UInt64(bitPattern: units[i]) < UInt64(limits.0), UInt64(bitPattern: sources[i]) < UInt64(limits.1),
                  UInt64(bitPattern: devices[i]) < UInt64(limits.2), UInt64(bitPattern: metadata[i]) < UInt64(limits.3) else {
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
