/// The decoded columns of one block, reused from block to block to avoid allocation.
///
/// After ``SegmentReader/decode(block:into:)`` every column holds ``count`` valid entries:
/// absolute start and end instants in µs, and dictionary ids already checked against the
/// segment's dictionaries. The columns live in one buffer owned by this object; the buffer
/// pointers it hands out are valid until the next decode into it (or its deinit).
///
/// Its fields are read without the run-time exclusivity checks of a class's stored properties
/// (`@exclusivity(unchecked)`): one thread uses a block at a time (``Store/blockPool``), and the
/// checks were ~60 instructions each time an aggregate took a block's values (2.5% of a year's
/// hourly heart rate as a whole query, callgrind).
public final class DecodedBlock {
    @exclusivity(unchecked) public private(set) var count = 0
    /// Which columns the last decode filled (bit `Column.rawValue`).
    @exclusivity(unchecked) private(set) var decodedColumns: ColumnSet = .all
    /// The value tag of every sample, when the last decode read values and all share one
    /// (heart rate: whole numbers). Lets aggregates take a block's values without a test per sample.
    @exclusivity(unchecked) package fileprivate(set) var uniformValueTag: UInt8?
    /// What each decoded column's headers proved (``IntColumn/Facts``), for the checks after decoding.
    @exclusivity(unchecked) fileprivate var facts = [IntColumn.Facts](repeating: .unknown, count: Column.allCases.count)
    @exclusivity(unchecked) private var capacity = 0
    @exclusivity(unchecked) private var storage = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    private var scratch: UnsafeMutableRawBufferPointer = .allocate(byteCount: 0, alignment: 8)
    /// Columns located in `scratch` by ``SegmentReader/sideTotals(block:edge:scratch:)``, kept for their memory
    /// (unchecked as the fields above: each block added up either side of an edge made three exclusivity
    /// checks, ~350 instructions).
    @exclusivity(unchecked) var packedStarts = PackedColumn()
    @exclusivity(unchecked) var packedTags = PackedColumn()
    @exclusivity(unchecked) var packedMantissas = PackedColumn()

    public init() {}

    deinit {
        storage.deallocate()
        scratch.deallocate()
    }

    /// Column `c`, which the last decode must have filled: the buffer is not zeroed (a first touch
    /// of all nine columns of a large block cost a query dozens of page faults for columns it skips).
    func column(_ c: Column) -> UnsafeMutableBufferPointer<Int64> {
        assert(decodedColumns.contains(c), "column \(c) was not decoded")
        return UnsafeMutableBufferPointer(start: storage + c.rawValue * capacity, count: count)
    }

    /// Start instants, µs since the epoch (UTC), non-decreasing. Valid until the next decode.
    package var starts: UnsafeBufferPointer<Int64> { UnsafeBufferPointer(column(.start)) }
    /// End instants, µs since the epoch (UTC), each ≥ its start (decoding turns durations into ends).
    package var ends: UnsafeBufferPointer<Int64> { UnsafeBufferPointer(column(.duration)) }

    /// The start of sample `i` (`0 ..< count`), µs since the epoch (UTC).
    public func start(at i: Int) -> Int64 {
        precondition(i >= 0 && i < count, "sample \(i) outside the block's \(count)")
        return starts[i]
    }

    /// The end of sample `i` (`0 ..< count`), µs since the epoch (UTC).
    public func end(at i: Int) -> Int64 {
        precondition(
            i >= 0 && i < count && decodedColumns.contains(.duration),
            "sample \(i) outside the block, or ends not decoded")
        return ends[i]
    }
    package var forms: UnsafeMutableBufferPointer<Int64> { column(.form) }
    package var valueTags: UnsafeMutableBufferPointer<Int64> { column(.valueTag) }
    package var mantissas: UnsafeMutableBufferPointer<Int64> { column(.mantissa) }
    package var units: UnsafeMutableBufferPointer<Int64> { column(.unit) }
    package var sources: UnsafeMutableBufferPointer<Int64> { column(.source) }
    package var devices: UnsafeMutableBufferPointer<Int64> { column(.device) }
    package var metadata: UnsafeMutableBufferPointer<Int64> { column(.metadata) }

    /// The numeric value of sample `i` (nil for null/absent values).
    public func value(at i: Int, in segment: SegmentReader) -> Double? {
        precondition(i >= 0 && i < count, "sample \(i) outside the block's \(count)")
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

    /// Room for two columns of `n` values that are not a decoded block's (start offsets and
    /// mantissas, ``SegmentReader/addUpByBucket(block:scratch:bucketEnd:add:)``): afterwards the
    /// block holds no decoded column.
    func spareColumns(_ n: Int) -> (UnsafeMutableBufferPointer<Int64>, UnsafeMutableBufferPointer<Int64>) {
        prepare(n, columns: [])
        count = 0
        let (first, second) = (storage, storage + capacity)
        return (UnsafeMutableBufferPointer(start: first, count: n), UnsafeMutableBufferPointer(start: second, count: n))
    }

    func prepare(_ n: Int, columns: ColumnSet) {
        decodedColumns = columns
        uniformValueTag = nil
        if n > capacity {
            storage.deallocate()
            capacity = max(n, capacity * 2)
            // Int64 is trivial: decoding writes each entry before anything reads it.
            storage = .allocate(capacity: capacity * Column.allCases.count)
        }
        count = n
    }
}

/// A set of block columns to decode.
public struct ColumnSet: OptionSet, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    init(_ c: Column) { rawValue = 1 << UInt16(c.rawValue) }

    public static let starts = ColumnSet(.start)
    /// Ends (needs the duration column).
    public static let ends = ColumnSet(.duration)
    /// Value tags and mantissas: what ``DecodedBlock/value(at:in:)`` reads.
    public static let values: ColumnSet = [ColumnSet(.valueTag), ColumnSet(.mantissa)]
    /// Source and device ids.
    public static let sources: ColumnSet = [ColumnSet(.source), ColumnSet(.device)]
    public static let all = ColumnSet(rawValue: (1 << UInt16(Column.allCases.count)) - 1)

    func contains(_ c: Column) -> Bool { rawValue & (1 << UInt16(c.rawValue)) != 0 }
}

extension SegmentReader {
    /// Decodes block `index` into `block`, checking its CRC and the consistency of every column.
    public func decode(block index: Int, into block: DecodedBlock) throws(TSDBError) {
        try decode(block: index, into: block, columns: .all)
    }

    /// Decodes only `columns` (starts are always decoded) of block `index`, after checking the
    /// whole block's CRC; the other columns are skipped without unpacking. Used by aggregates,
    /// which need starts and values but not units, devices or metadata.
    public func decode(block index: Int, into block: DecodedBlock, columns: ColumnSet) throws(TSDBError) {
        let columns = columns.union(.starts)
        let location = locations[index]
        let summary = summaries[index]
        let n = summary.sampleCount
        block.prepare(n, columns: columns)
        do throws(TSDBError) {
            var r = try rawBytes(of: index, at: location, into: block)
            let startColumn = r
            let instants = IntColumn.Instants(
                first: summary.firstStart, unit: SegmentFormat.powersOfTen[Int(location.timeUnitExponent)])
            for c in Column.allCases {
                if c == .start {
                    let out = block.column(c).baseAddress!
                    block.facts[c.rawValue] = try IntColumn.decode(&r, count: n, into: out, mapped: instants)
                } else if columns.contains(c) {
                    block.facts[c.rawValue] = try IntColumn.decode(&r, count: n, into: block.column(c).baseAddress!)
                } else {
                    block.facts[c.rawValue] = .unknown
                    try IntColumn.skip(&r, count: n)
                }
            }
            guard r.isAtEnd else { throw r.fail("\(r.remaining) unexpected bytes after the last column") }
            try validate(block, index: index, location: location, summary: summary, startColumn: startColumn)
        } catch {
            onDamage?()
            throw located(error)
        }
    }

    /// A reader of block `index`'s decompressed bytes, in `block`'s scratch buffer (valid until its
    /// next use), once the block's CRC is checked (§2).
    func rawBytes(of index: Int, at location: BlockLocation, into block: DecodedBlock) throws(TSDBError)
        -> ByteReader
    {
        let scratch = block.scratchBuffer(location.rawLength)
        try file.withBytes { (bytes) throws(TSDBError) in
            let stored = try Self.checkedStoredBytes(of: index, at: location, in: bytes)
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
        return ByteReader(
            UnsafeRawBufferPointer(rebasing: scratch[0..<location.rawLength]), baseOffset: location.offset,
            about: .block(index))
    }

    /// Block `index`'s stored bytes in the mapped file, once its CRC is checked (§2).
    static func checkedStoredBytes(of index: Int, at location: BlockLocation, in file: UnsafeRawBufferPointer)
        throws(TSDBError) -> UnsafeRawBufferPointer
    {
        let stored = UnsafeRawBufferPointer(rebasing: file[location.offset..<location.offset + location.storedLength])
        let crc = CRC32C.checksum(stored)
        guard crc == location.crc else {
            throw .corrupt(
                "block \(index) CRC mismatch (stored \(hex32(location.crc)), computed \(hex32(crc)))",
                offset: location.offset)
        }
        return stored
    }

    /// Turns durations into instants and checks every invariant the encoder guarantees, for the
    /// columns that were decoded. Each check first runs as one pass without early exits (the common
    /// case: nothing is wrong); only a failed pass looks for the sample to name in the error. The
    /// starts were decoded as instants (``IntColumn/Instants``); when their column's headers do not
    /// prove that none wrapped, they are decoded again from `startColumn` as offsets and checked
    /// one by one.
    private func validate(
        _ b: DecodedBlock, index: Int, location: BlockLocation, summary: BlockSummary, startColumn: ByteReader
    ) throws(TSDBError) {
        let facts = b.facts
        func bad(_ what: String) -> TSDBError { .corrupt("block \(index): \(what)", offset: location.offset) }
        let unit = SegmentFormat.powersOfTen[Int(location.timeUnitExponent)]
        let n = b.count
        let columns = b.decodedColumns
        let starts = b.column(.start)
        let first = summary.firstStart
        if !Self.instantsInOrder(starts, facts[Column.start.rawValue], unit: unit, from: first) {
            var offsets = startColumn
            try IntColumn.decode(&offsets, count: n, into: starts.baseAddress!)
            guard Self.offsetsAscend(starts, unit: unit, from: first) else {
                throw Self.disorder(starts, unit: unit, from: first, bad)
            }
            for i in 0..<n { starts[i] = first &+ starts[i] &* unit }
        }
        guard starts[0] == summary.firstStart, starts[n - 1] == summary.lastStart else {
            throw bad("decoded starts disagree with the block summary")
        }
        if columns.contains(.duration) {
            let ends = b.column(.duration)
            var maxEnd = Int64.min
            for i in 0..<n {
                let (duration, o3) = ends[i].multipliedReportingOverflow(by: unit)
                let (end, o4) = starts[i].addingReportingOverflow(duration)
                guard !(o3 || o4) else { throw bad("sample \(i): time overflows 64 bits") }
                guard duration >= 0 else { throw bad("sample \(i): negative duration") }
                ends[i] = end
                maxEnd = max(maxEnd, end)
            }
            guard maxEnd == summary.maxEnd else { throw bad("decoded ends disagree with the block summary") }
        }
        func ids(_ c: Column, below limit: Int, _ what: String) throws(TSDBError) {
            guard columns.contains(c) else { return }
            if let range = facts[c.rawValue].range, range.lowerBound >= 0 && range.upperBound < limit { return }
            let column = b.column(c)
            // Unsigned, so one comparison checks 0 ≤ id < limit.
            guard Self.largestUnsigned(column) >= UInt64(limit) else { return }
            for i in 0..<n where UInt64(bitPattern: column[i]) >= UInt64(limit) {
                throw bad("sample \(i): \(what) id \(column[i]) out of range")
            }
        }
        try ids(.form, below: forms.count, "time form")
        try ids(.valueTag, below: Int(ValueTag.limit) + 1, "value tag")
        try ids(.unit, below: units.count, "unit")
        try ids(.source, below: sources.count, "source")
        try ids(.device, below: devices.count, "device")
        try ids(.metadata, below: metadata.count, "metadata")
        guard columns.contains(.mantissa) && columns.contains(.valueTag) else { return }
        let tags = b.column(.valueTag)
        let known = facts[Column.valueTag.rawValue].range
        let (lowestTag, highestTag) = known.map { ($0.lowerBound, $0.upperBound) } ?? Self.extremes(tags)
        if lowestTag == highestTag { b.uniformValueTag = UInt8(lowestTag) }
        guard lowestTag <= Int64(ValueTag.numberText) && highestTag >= Int64(ValueTag.numberText) else { return }
        let mantissas = b.column(.mantissa)
        let textLimit = UInt64(dictionary.numberTexts.count)
        for i in 0..<n where tags[i] == Int64(ValueTag.numberText) && UInt64(bitPattern: mantissas[i]) >= textLimit {
            throw bad("sample \(i): number text id \(mantissas[i]) out of range")
        }
    }

    /// Whether instants decoded as `from + offset × unit` (wrapping) are exact and in order, none
    /// before `from`: the column's headers bound its offsets to `0 ...` a top whose instant fits,
    /// so nothing wrapped and the instants keep the offsets' order, which the headers prove too or
    /// one pass checks.
    private static func instantsInOrder(
        _ instants: UnsafeMutableBufferPointer<Int64>, _ facts: IntColumn.Facts, unit: Int64, from: Int64
    ) -> Bool {
        guard facts.boundInstants(from: from, unit: unit) else { return false }
        if facts.ascending { return true }
        var descents = 0
        for i in 1..<max(instants.count, 1) { descents &+= instants[i] < instants[i - 1] ? 1 : 0 }
        return descents == 0
    }

    /// Whether stored start offsets make instants `from + offset × unit` in order, none before
    /// `from`, without overflow: the offsets ascend from ≥ 0, and the last one's instant fits.
    private static func offsetsAscend(_ offsets: UnsafeMutableBufferPointer<Int64>, unit: Int64, from: Int64) -> Bool {
        var descents = 0
        for i in 1..<max(offsets.count, 1) { descents &+= offsets[i] < offsets[i - 1] ? 1 : 0 }
        let (span, o1) = offsets[offsets.count - 1].multipliedReportingOverflow(by: unit)
        let (_, o2) = from.addingReportingOverflow(span)
        return descents == 0 && offsets[0] >= 0 && !o1 && !o2
    }

    /// The error naming the first offset whose instant overflows or goes back (offsets that
    /// fail ``offsetsAscend(_:unit:from:)`` have one).
    private static func disorder(
        _ offsets: UnsafeMutableBufferPointer<Int64>, unit: Int64, from: Int64, _ bad: (String) -> TSDBError
    ) -> TSDBError {
        var previous = from
        for i in offsets.indices {
            let (offset, o1) = offsets[i].multipliedReportingOverflow(by: unit)
            let (start, o2) = from.addingReportingOverflow(offset)
            guard !(o1 || o2) else { return bad("sample \(i): time overflows 64 bits") }
            guard start >= previous else { return bad("sample \(i): starts are not in order") }
            previous = start
        }
        return bad("starts are not in order")
    }

    private static func largestUnsigned(_ column: UnsafeMutableBufferPointer<Int64>) -> UInt64 {
        var largest: UInt64 = 0
        for v in column { largest = max(largest, UInt64(bitPattern: v)) }
        return largest
    }

    private static func extremes(_ column: UnsafeMutableBufferPointer<Int64>) -> (Int64, Int64) {
        var (lowest, highest) = (Int64.max, Int64.min)
        for v in column {
            lowest = min(lowest, v)
            highest = max(highest, v)
        }
        return (lowest, highest)
    }

    /// Sample `i` of a decoded block as a full ``Sample`` (the block must be fully decoded).
    public func sample(_ i: Int, of b: DecodedBlock) -> Sample {
        precondition(b.decodedColumns == .all, "sample(_:of:) needs a block decoded with all columns")
        let (startForm, endForm) = forms[Int(b.forms[i])]
        let tag = UInt8(b.valueTags[i])
        let value: SampleValue
        switch tag {
        case ValueTag.absent: value = .absent
        case ValueTag.null: value = .null
        case ValueTag.numberText: value = .numberText(dictionary.numberTexts[Int(b.mantissas[i])])
        default: value = .decimal(ExactDecimal(mantissa: b.mantissas[i], scale: tag - ValueTag.decimalBase))
        }
        return Sample(
            type: dictionary.type,
            start: Timestamp(microseconds: b.starts[i], form: startForm),
            end: Timestamp(microseconds: b.ends[i], form: endForm),
            value: value, unit: units[Int(b.units[i])], source: sources[Int(b.sources[i])],
            device: devices[Int(b.devices[i])], metadata: metadata[Int(b.metadata[i])])
    }

    /// The source string of sample `i` (for filtering without building a whole ``Sample``).
    func sourceText(_ i: Int, of b: DecodedBlock) -> OptionalText { sources[Int(b.sources[i])] }
}
