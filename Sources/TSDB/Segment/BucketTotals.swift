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
    /// every column (§6) and names any damage.
    func addUpByBucket(
        block index: Int, scratch block: DecodedBlock, bucketEnd: (Int64) -> Int64, add: (ValueTotals) -> Void
    ) throws(TSDBError) -> Bool {
        let location = locations[index]
        let summary = summaries[index]
        let n = summary.sampleCount
        let unit = SegmentFormat.powersOfTen[Int(location.timeUnitExponent)]
        let first = summary.firstStart
        let (offsets, mantissas) = block.spareColumns(n)
        do throws(TSDBError) {
            var r = try rawBytes(of: index, at: location, into: block)
            let startFacts = try IntColumn.decode(&r, count: n, into: offsets)
            try IntColumn.skip(&r, count: n)  // durations
            try IntColumn.skip(&r, count: n)  // time forms
            try block.packedTags.locate(&r, count: n)
            guard block.packedTags.isUniform(Int64(ValueTag.decimalBase)) else { return false }
            let valueFacts = try IntColumn.decode(&r, count: n, into: mantissas)
            let bound = PackedColumn.valueBound
            let span = offsets[n - 1].multipliedReportingOverflow(by: unit)
            guard let starts = startFacts.range, starts.lowerBound >= 0, startFacts.ascending, offsets[0] == 0,
                !span.overflow, span.partialValue == summary.lastStart &- first,
                let values = valueFacts.range, values.lowerBound > -bound, values.upperBound < bound
            else { return false }
        } catch {
            onDamage?()
            throw located(error)
        }
        var i = 0
        while i < n {
            // Offsets from `limit` on start at or after the bucket's end.
            let toEnd = bucketEnd(first &+ offsets[i] &* unit) &- first
            let limit = toEnd / unit + (toEnd % unit == 0 ? 0 : 1)
            let j = Self.firstIndex(offsets, from: i + 1, to: n, notBelow: limit)
            add(Self.totals(mantissas, i..<j))
            i = j
        }
        return true
    }

    /// The first index in `from ..< to` of ascending `values` that is ≥ `limit` (`to` if none): by
    /// steps doubling from `from`, then halving, so a bucket's run of a few samples costs a few
    /// looks and a long run about twice its logarithm.
    @inline(__always)
    private static func firstIndex(_ values: UnsafeMutablePointer<Int64>, from: Int, to: Int, notBelow limit: Int64)
        -> Int
    {
        var (below, step) = (from - 1, 1)
        while below + step < to && values[below + step] < limit {
            below += step
            step *= 2
        }
        var above = Swift.min(below + step, to)
        while above - below > 1 {
            let middle = below + (above - below) / 2
            if values[middle] < limit { below = middle } else { above = middle }
        }
        return above
    }

    /// The totals of `values[range]` (not empty), in two interleaved chains: a compare and a
    /// conditional move per value wait for the one before.
    @inline(__always)
    private static func totals(_ values: UnsafeMutablePointer<Int64>, _ range: Range<Int>) -> ValueTotals {
        var (low, high, sum) = (values[range.lowerBound], values[range.lowerBound], Int64(0))
        var (low2, high2, sum2) = (low, high, Int64(0))
        var i = range.lowerBound
        while i + 1 < range.upperBound {
            let (a, b) = (values[i], values[i + 1])
            (low, high, sum) = (Swift.min(low, a), Swift.max(high, a), sum &+ a)
            (low2, high2, sum2) = (Swift.min(low2, b), Swift.max(high2, b), sum2 &+ b)
            i += 2
        }
        if i < range.upperBound {
            let a = values[i]
            (low, high, sum) = (Swift.min(low, a), Swift.max(high, a), sum &+ a)
        }
        return ValueTotals(
            count: range.count, minimum: Swift.min(low, low2), maximum: Swift.max(high, high2), sum: sum &+ sum2)
    }
}
