/// The leading blocks of a stored segment, carried byte for byte into the segment that replaces
/// it when its month only gains samples after them (an appended day).
///
/// Blocks are split greedily from the front (§5) and dictionary ids are handed out in first-use
/// order (§4), so when every new sample starts after the first sample of the block following the
/// kept ones, a writer given all samples would make the kept blocks, their index entries (§6) and
/// their slot summaries (§6.1) exactly as stored, with the same ids. Copying them, and starting
/// the dictionary as the stored one, gives the same file as encoding everything again.
struct SegmentPrefix {
    /// The header and the kept blocks' stored bytes: file offsets `0..<bytes.count`.
    var bytes: [UInt8]
    var entries: [IndexEntry]
    /// The kept blocks' slot summaries, decompressed (§6.1 records are per block, in order).
    var slotBytes: [UInt8]
    /// The stored segment's whole dictionary: entries first used after the kept blocks are used
    /// again by the blocks decoded for rewriting, in the same order.
    var dictionary: SegmentDictionary
    /// The dictionary's strings as ids of the writer's interner (``intern(into:)``).
    var internedDictionary = InternedDictionary()

    struct InternedDictionary {
        var units: [Int32] = [], sources: [Int32] = [], devices: [Int32] = [], metadata: [Int32] = []
        var numberTexts: [Int32] = []
    }

    mutating func intern(into strings: inout ByteInterner) {
        func ids(_ list: [String]) -> [Int32] { list.map { strings.intern($0) } }
        let d = dictionary
        internedDictionary = InternedDictionary(
            units: ids(d.units), sources: ids(d.sources), devices: ids(d.devices), metadata: ids(d.metadata),
            numberTexts: ids(d.numberTexts))
    }

    var sampleCount: Int { entries.reduce(0) { $0 + $1.summary.sampleCount } }
    var firstStart: Int64? { entries.first?.summary.firstStart }
    var lastStart: Int64? { entries.last?.summary.lastStart }
    var maxEnd: Int64 { entries.reduce(Int64.min) { max($0, $1.summary.maxEnd) } }
}

extension SegmentReader {
    /// How many leading blocks stay as stored when samples starting at `newStart` or later join
    /// the segment: those before the last block whose first sample starts before `newStart` (the
    /// last block is always written again, since the writer could extend it).
    func blocksKept(whenAddingFrom newStart: Int64) -> Int {
        var kept = 0
        while kept + 1 < blockCount, summaries[kept + 1].firstStart < newStart { kept += 1 }
        return kept
    }

    /// Blocks `0..<count` as a ``SegmentPrefix``. Their CRCs are checked, so damage is found here
    /// rather than copied into a new file.
    func prefix(blocks count: Int) throws(TSDBError) -> SegmentPrefix {
        precondition(count > 0 && count < blockCount, "a prefix keeps some blocks and rewrites the last")
        let end = locations[count].offset
        let locations = self.locations
        let bytes: [UInt8]
        do throws(TSDBError) {
            bytes = try file.withBytes { (mapped) throws(TSDBError) in
                for (b, location) in locations[..<count].enumerated() {
                    _ = try Self.checkedStoredBytes(of: b, at: location, in: mapped)
                }
                return Array(mapped[0..<end])
            }
        } catch {
            onDamage?()
            throw located(error)
        }
        let slotBytes: [UInt8]
        do throws(TSDBError) {
            slotBytes = try slotStream().bytes(ofBlocks: count)
        } catch {
            onDamage?()
            throw located(error)
        }
        let entries = (0..<count).map { IndexEntry(location: locations[$0], summary: summaries[$0]) }
        return SegmentPrefix(bytes: bytes, entries: entries, slotBytes: slotBytes, dictionary: dictionary)
    }
}
