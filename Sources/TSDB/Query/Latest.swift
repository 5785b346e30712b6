extension Store {
    /// The most recent sample of `type` (latest start; among equal starts the last in the
    /// segment's order), or nil when the store has none. Answered from the index: the manifest
    /// names the segment, the block index the block, and only that block is decoded.
    public func latest(of type: String) throws(TSDBError) -> Sample? {
        let entries = segmentEntries(of: type)
        guard let newest = entries.map(\.lastStart).max() else { return nil }
        // The segment holding the latest start (segments are per month, so exactly one holds it).
        guard let segment = try segments(of: type, from: newest, to: newest + 1).last, segment.blockCount > 0 else {
            return nil
        }
        let block = DecodedBlock()
        try segment.decode(block: segment.blockCount - 1, into: block)
        return segment.sample(block.count - 1, of: block)
    }
}
