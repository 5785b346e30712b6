extension SegmentReader {
    /// A block's totals from its index entry (§6) when every sample has a value and the figures are
    /// whole numbers within ``PackedColumn/valueBound`` (sums of whole numbers below 2^53 are exact
    /// in the entry's binary64).
    static func wholeNumbers(_ s: BlockSummary) -> ValueTotals? {
        let bound = Double(PackedColumn.valueBound)
        guard s.valueCount == s.sampleCount, s.minValue > -bound, s.maxValue < bound,
            s.minValue.rounded() == s.minValue, s.maxValue.rounded() == s.maxValue,
            s.sum.rounded() == s.sum, abs(s.sum) < bound * 65_536
        else { return nil }
        return ValueTotals(
            count: s.sampleCount, minimum: Int64(s.minValue), maximum: Int64(s.maxValue), sum: Int64(s.sum))
    }

    /// Moves `r` from the end of a block's start column past its durations, time forms and value
    /// tags (the columns' order, §5); whether every tag is a whole number's (3: no fraction digits,
    /// §5.3), which the columns read either side of an edge or bucket by bucket require.
    static func wholeNumberTags(_ r: inout ByteReader, count n: Int, _ block: DecodedBlock) throws(TSDBError) -> Bool {
        try IntColumn.skip(&r, count: n)  // durations
        try IntColumn.skip(&r, count: n)  // time forms
        try block.packedTags.locate(&r, count: n)
        return block.packedTags.isUniform(Int64(ValueTag.decimalBase))
    }

    /// The first start offset, in units (§5.2), whose instant lies `micros` or more after the
    /// block's first start.
    static func offsetReaching(_ micros: Int64, unit: Int64) -> Int64 {
        micros / unit + (micros % unit == 0 ? 0 : 1)
    }

    /// The totals of block `index`'s values either side of the instant `edge` (samples starting
    /// before it, and the rest), read from its start and mantissa columns without unpacking them
    /// into memory or reading the other columns: a block across one bucket edge (blocks end at the
    /// wearer's midnight, so a day in UTC or any other zone takes part of two) needs no more.
    ///
    /// The edge is found from the column end nearer it: a walk from the block's first start, or back
    /// from its last (the index entry's `lastStart`, §6). Nil, with nothing thrown, when the block is
    /// not one this reading serves: values other than whole numbers of one value tag (§5.3, scale
    /// 0), a value's magnitude reaching 2^31, or an `edge` that its starts do not place strictly
    /// inside it. The caller then decodes it, which checks every column (§6) and names any damage.
    func sideTotals(block index: Int, edge: Int64, scratch block: DecodedBlock) throws(TSDBError)
        -> (before: ValueTotals, after: ValueTotals)?
    {
        let location = locations[index]
        let summary = summaries[index]
        let n = summary.sampleCount
        let unit = SegmentFormat.powersOfTen[Int(location.timeUnitExponent)]
        let (span, toEdge) = (summary.lastStart &- summary.firstStart, edge &- summary.firstStart)
        guard n > 1, summary.firstStart < edge, edge <= summary.lastStart, span % unit == 0 else { return nil }
        do throws(TSDBError) {
            var r = try rawBytes(of: index, at: location, into: block)
            try block.packedStarts.locate(&r, count: n)
            guard try Self.wholeNumberTags(&r, count: n, block) else { return nil }
            try block.packedMantissas.locate(&r, count: n)
            let limit = Self.offsetReaching(toEdge, unit: unit)
            let split = block.packedStarts.count(
                below: limit, last: span / unit, fromEnd: toEdge > summary.lastStart &- edge)
            guard split > 0, split < n else { return nil }
            return block.packedMantissas.totals(split: split, whole: Self.wholeNumbers(summary))
        } catch {
            onDamage?()
            throw located(error)
        }
    }
}
