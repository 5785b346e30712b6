import Dispatch

/// Compacting an Apple Health export in bounded memory. One export holds years of every type, so
/// it is streamed in chunks (``ExportSampleReader``) after the day files: a (type, month) is written
/// as soon as the export has moved past it (Health writes records type by type, in time order),
/// merged with the day files' segment of that month if one was written; the string table is
/// compacted when it grows, since the export's metadata (creation dates, route points) is mostly
/// unique to each sample.
extension Compactor {
    /// Merges the export's samples of months that pass `keep`; with `flushing`, writes each
    /// (type, month) the export has moved past; `progress` hears the fraction read and the samples
    /// so far. Returns its manifest entry (and counts it as read).
    /// A read failure stops the compaction, so nothing is published: the export was whole when it
    /// was imported, and half of it must not replace the store's copy.
    func mergeExport(
        _ file: RawFile, keep: (MonthIndex) -> Bool, flushing: Bool, progress: (Double, Int) -> Void = { _, _ in }
    ) throws(TSDBError) -> Manifest.RawFileEntry {
        let hash = try MappedFile(path: file.absolutePath).withBytes { ContentHash.hash($0) }
        var months = Set<MonthIndex>()
        var count = 0
        mergingExport = true
        defer { mergingExport = false }
        // The export is read on another thread while this one merges and writes.
        let pipe = BoundedPipe<ParsedDayFile>(capacity: 2)
        let reader = options.exportReader
        DispatchQueue.global().async {
            do throws(TSDBError) {
                try file.streamExport(reader) { (chunk) throws(TSDBError) in
                    chunk.months = Compactor.months(of: chunk.samples)
                    try pipe.put(chunk)
                }
                pipe.finish(nil)
            } catch {
                pipe.finish(error)
            }
        }
        do throws(TSDBError) {
            while let chunk = try pipe.take() {
                count += chunk.samples.count
                noteExportChunk(chunk, of: file)
                if chunk.readProgress.total > 0 {
                    progress(Double(chunk.readProgress.done) / Double(chunk.readProgress.total), count)
                }
                months.formUnion(merge(chunk, keep: keep))
                if flushing { try flushPassed(by: chunk) }
                compactStringsIfLarge()
            }
        } catch {
            pipe.cancel()
            throw error
        }
        report.filesRead += 1
        report.bytesRead += file.size
        report.exportsRead += 1
        report.samplesRead += count
        return Manifest.RawFileEntry(
            place: file.path, size: file.size, mtimeNanoseconds: file.mtimeNanoseconds, contentHash: hash,
            sampleCount: count, months: MonthList(months.sorted()))
    }

    /// Counts a chunk's samples by type and span for the report, and keeps its findings.
    func noteExportChunk(_ chunk: ParsedDayFile, of file: RawFile) {
        var byType: [Int32: Int] = [:]
        var (first, last) = (Int64.max, Int64.min)
        for s in chunk.samples {
            byType[s.type, default: 0] += 1
            (first, last) = (min(first, s.start), max(last, s.start))
        }
        for (type, n) in byType { report.exportSamples[chunk.strings.string(type), default: 0] += n }
        if first <= last {
            let span = report.exportSpan
            report.exportSpan = min(span?.lowerBound ?? first, first)...max(span?.upperBound ?? last, last)
        }
        report.exportFindings += chunk.warnings
        report.warnings += chunk.warnings.map { "\(file.absolutePath): \($0)" }
    }

    /// Writes every pending (type, month) the export has moved past: a type this chunk does not
    /// hold, or a month before the chunk's earliest of that type. A sample that still comes later
    /// (real exports have a little disorder) is merged into the written segment, which is written
    /// again.
    func flushPassed(by chunk: ParsedDayFile) throws(TSDBError) {
        var earliest: [Int32: Int64] = [:]
        for s in chunk.samples { earliest[s.type] = min(earliest[s.type] ?? .max, s.start) }
        var current: [Int32: MonthIndex] = [:]
        for (local, start) in earliest {
            let id = chunk.strings.withBytes(local) { strings.intern($0) }
            current[id] = MonthIndex.containing(start).month
        }
        for key in pending.keys.sorted() {
            if let month = current[key.type], key.month.rawValue >= month.rawValue { continue }
            var samples = pending.removeValue(forKey: key)!
            try writeSegment(key, &samples)
        }
    }

    /// Rebuilds the string table with only the strings pending samples use, when it has grown
    /// past its limit: ids in pending and late samples and in every key are renumbered in place.
    /// The new table reserves the live bytes plus the options' `stringBudget` at once, and that is
    /// the next limit: memory grows by a fixed step, never by doubling.
    func compactStringsIfLarge() {
        guard strings.arena.count > stringLimit else { return }
        var used = [Bool](repeating: false, count: strings.count)
        var liveBytes = 0
        func mark(_ id: Int32) {
            guard id >= 0, !used[Int(id)] else { return }
            used[Int(id)] = true
            liveBytes += strings.withBytes(id) { $0.count }
        }
        func markStrings(of s: PackedSample) {
            mark(s.type)
            mark(s.unit)
            mark(s.source)
            mark(s.device)
            mark(s.metadata)
            if s.valueTag == ValueTag.numberText { mark(Int32(s.mantissa)) }
        }
        for samples in pending.values { for s in samples { markStrings(of: s) } }
        for samples in late.values { for s in samples { markStrings(of: s) } }
        for key in Array(pending.keys) + Array(late.keys) + Array(written.keys) { mark(key.type) }
        var fresh = ByteInterner()
        fresh.reserveCapacity(bytes: liveBytes + options.stringBudget)
        var remap = [Int32](repeating: -3, count: strings.count)
        for id in used.indices where used[id] { remap[id] = strings.withBytes(Int32(id)) { fresh.intern($0) } }
        used = []
        func map(_ id: Int32) -> Int32 { id >= 0 ? remap[Int(id)] : id }
        func renumber(_ samples: inout [PackedSample]) {
            for i in samples.indices {
                samples[i].type = map(samples[i].type)
                samples[i].unit = map(samples[i].unit)
                samples[i].source = map(samples[i].source)
                samples[i].device = map(samples[i].device)
                samples[i].metadata = map(samples[i].metadata)
                if samples[i].valueTag == ValueTag.numberText {
                    samples[i].mantissa = Int64(map(Int32(samples[i].mantissa)))
                }
            }
        }
        // Each array is taken out of its dictionary first, so renumbering does not copy it.
        func renumbered<V>(_ d: inout [MonthKey: V], _ body: (inout V) -> Void) {
            var out: [MonthKey: V] = [:]
            for key in Array(d.keys) {
                var value = d.removeValue(forKey: key)!
                body(&value)
                out[MonthKey(type: map(key.type), month: key.month)] = value
            }
            d = out
        }
        renumbered(&pending, renumber)
        renumbered(&late, renumber)
        renumbered(&written) { _ in }
        strings = fresh
        stringLimit = liveBytes + options.stringBudget
    }
}
