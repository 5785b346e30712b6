extension SegmentReader {
    /// Adds block `index`'s values up a bucket at a time from its start and mantissa columns alone,
    /// for a block too sparse to have slot summaries across several bucket edges (hours or quarter
    /// hours of a watch's resting heart rate): the other seven columns are skipped, the values are
    /// whole numbers added up as integers, and no checks are made of columns not read.
    ///
    /// For each run of samples in one bucket, in order, it calls `bucketEnd` with the run's first
    /// start (the caller moves its buckets there and answers where that bucket ends, after the
    /// start) and then `add` with the run's totals. False, with neither called, when the block is
    /// not one this reading serves: values other than whole numbers of one value tag (§5.3, scale
    /// 0), a value's magnitude that may reach 2^31, or start offsets whose column headers do not
    /// prove them in order from 0 (§5.1, §5.2). The caller then decodes the block, which checks
    /// every column (§6) and names any damage; a block whose index entry already rules it out
    /// (``wholeNumbers(_:)``) is not read twice.
    func addUpByBucket(
        block index: Int, scratch block: DecodedBlock, bucketEnd: (Int64) -> Int64, add: (ValueTotals) -> Void
    ) throws(TSDBError) -> Bool {
        let location = locations[index]
        let summary = summaries[index]
        let n = summary.sampleCount
        let unit = SegmentFormat.powersOfTen[Int(location.timeUnitExponent)]
        let first = summary.firstStart
        guard Self.wholeNumbers(summary) != nil else { return false }
        let (offsetColumn, mantissaColumn) = block.spareColumns(n)
        let (offsets, mantissas) = (UnsafeBufferPointer(offsetColumn), UnsafeBufferPointer(mantissaColumn))
        do throws(TSDBError) {
            var r = try rawBytes(of: index, at: location, into: block)
            let startFacts = try IntColumn.decode(&r, count: n, into: offsetColumn.baseAddress!)
            guard try Self.wholeNumberTags(&r, count: n, block) else { return false }
            let valueFacts = try IntColumn.decode(&r, count: n, into: mantissaColumn.baseAddress!)
            let bound = PackedColumn.valueBound
            guard startFacts.boundInstants(from: first, unit: unit), startFacts.ascending, offsets[0] == 0,
                offsets[n - 1] &* unit == summary.lastStart &- first,
                let values = valueFacts.range, values.lowerBound > -bound, values.upperBound < bound
            else { return false }
        } catch {
            onDamage?()
            throw located(error)
        }
        var i = 0
        while i < n {
            // Offsets from `limit` on start at or after the bucket's end.
            let limit = Self.offsetReaching(bucketEnd(first &+ offsets[i] &* unit) &- first, unit: unit)
            let j = offsets.firstIndex(from: i + 1, to: n, notBelow: limit)
            let (minimum, maximum, sum) = UnsafeBufferPointer(rebasing: mantissas[i..<j]).extremesAndTotal()
            add(ValueTotals(count: j - i, minimum: minimum, maximum: maximum, sum: sum))
            i = j
        }
        return true
    }
}
