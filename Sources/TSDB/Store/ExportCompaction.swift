import Dispatch

/// Compacting an Apple Health export in bounded memory. One export holds years of every type, so
/// it is streamed in chunks (``ExportSampleReader``) after the day files: a (type, month) is written
/// as soon as the export has moved past it (Health writes records type by type, in time order),
/// merged with the day files' segment of that month if one was written; the string table is
/// compacted when it grows, since the export's metadata (creation dates, route points) is mostly
/// unique to each sample.
extension Compactor {
    /// Merges the export's samples of months that pass `keep`; with `flushing`, writes each
    /// (type, month) the export has moved past. Returns its manifest entry (and counts it as read).
    /// A read failure stops the compaction, so nothing is published: the export was whole when it
    /// was imported, and half of it must not replace the store's copy.
    func mergeExport(
        _ file: RawFile, keep: (MonthIndex) -> Bool, flushing: Bool, progress: (Double) -> Void = { _ in }
    ) throws(TSDBError) -> Manifest.RawFileEntry {
        let hash = try MappedFile(path: file.absolutePath).withBytes { ContentHash.hash($0) }
        var months = Set<MonthIndex>()
        var count = 0
        mergingExport = true
        defer { mergingExport = false }
        // The export is read on another thread while this one merges and writes.
        let pipe = ChunkPipe(capacity: 2)
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
                if chunk.readProgress.total > 0 {
                    progress(Double(chunk.readProgress.done) / Double(chunk.readProgress.total))
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
            path: file.relativePath, size: file.size, mtimeNanoseconds: file.mtimeNanoseconds, contentHash: hash,
            sampleCount: count, months: months.sorted())
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
    /// past the options' `stringBudget`: ids in pending and late samples and in every key are renumbered.
    func compactStringsIfLarge() {
        guard strings.arena.count > stringLimit else { return }
        defer { stringLimit = max(options.stringBudget, 2 * strings.arena.count) }  // live strings may be many
        var fresh = ByteInterner()
        var remap = [Int32](repeating: -3, count: strings.count)
        func map(_ id: Int32) -> Int32 {
            guard id >= 0 else { return id }
            if remap[Int(id)] == -3 { remap[Int(id)] = strings.withBytes(id) { fresh.intern($0) } }
            return remap[Int(id)]
        }
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
        func renumbered<V>(_ d: [MonthKey: V], _ body: (inout V) -> Void) -> [MonthKey: V] {
            var out: [MonthKey: V] = [:]
            for (k, v) in d {
                var value = v
                body(&value)
                out[MonthKey(type: map(k.type), month: k.month)] = value
            }
            return out
        }
        pending = renumbered(pending, renumber)
        late = renumbered(late, renumber)
        written = renumbered(written) { _ in }
        strings = fresh
    }
}
