/// One reading that reached the store twice: the same sample in a day file and in an Apple Health
/// export. The two exporters write it differently (value digits `72` or `72.0`, the offset of the
/// moment each ran, their own metadata), so exact equality cannot find it; a reading is identified
/// by what Health itself would show (segment-v3 §5.4): type, start and end instants, source, and
/// the value as a number. The day file's copy is kept, so importing an export over day files only
/// adds what they lack. Samples of one input are never merged with each other: an export may hold
/// two samples with the same identity (an iPhone and a watch under one name), and both stay.
extension Compactor {
    /// Identity of a reading within one (type, month): start, end, source, normalised value.
    struct ReadingIdentity: Hashable {
        var start: Int64
        var end: Int64
        var source: Int32
        var valueTag: UInt8
        var mantissa: Int64

        init(_ s: PackedSample) {
            start = s.start
            end = s.end
            source = s.source
            (valueTag, mantissa) = Self.normalised(s.valueTag, s.mantissa)
        }

        /// `72.0` and `72` are one value: trailing fraction zeros are dropped from a decimal.
        static func normalised(_ tag: UInt8, _ mantissa: Int64) -> (UInt8, Int64) {
            guard tag >= ValueTag.decimalBase else { return (tag, mantissa) }
            var (scale, m) = (tag - ValueTag.decimalBase, mantissa)
            while scale > 0 && m % 10 == 0 {
                scale -= 1
                m /= 10
            }
            return (ValueTag.decimalBase + scale, m)
        }
    }

    /// Drops each export sample that a day-file sample of `samples` (sorted by
    /// ``precedes(_:_:)``, so copies share a run of equal start and end) is the same reading as,
    /// one for one.
    static func mergeSameReadings(_ samples: inout [PackedSample]) {
        // Day files alone (the usual store) have nothing to merge: 100 instructions a sample saved.
        guard samples.contains(where: \.fromExport) else { return }
        var dayFileCopies: [ReadingIdentity: Int] = [:]
        var out = 0
        var runStart = 0
        while runStart < samples.count {
            var runEnd = runStart + 1
            while runEnd < samples.count && samples[runEnd].start == samples[runStart].start
                && samples[runEnd].end == samples[runStart].end
            {
                runEnd += 1
            }
            let mixed =
                runEnd - runStart > 1
                && samples[runStart..<runEnd].contains { $0.fromExport }
                && samples[runStart..<runEnd].contains { !$0.fromExport }
            if mixed {
                dayFileCopies.removeAll(keepingCapacity: true)
                for s in samples[runStart..<runEnd] where !s.fromExport {
                    dayFileCopies[ReadingIdentity(s), default: 0] += 1
                }
            }
            for i in runStart..<runEnd {
                let s = samples[i]
                if mixed && s.fromExport, let n = dayFileCopies[ReadingIdentity(s)], n > 0 {
                    dayFileCopies[ReadingIdentity(s)] = n - 1
                    continue
                }
                samples[out] = s
                out += 1
            }
            runStart = runEnd
        }
        samples.removeSubrange(out...)
    }
}
