/// Incremental compaction (Formats/manifest-v4.md §3): what changed since the published
/// generation, and how little needs rewriting.
extension Compactor {
    // MARK: Incremental

    /// What changed since the previous manifest, from a stat of every raw file.
    struct IncrementalPlan {
        /// Files whose size or mtime differ from the manifest, or that it does not list.
        var candidates: [RawFile] = []
        /// The manifest's entry of each candidate (nil: a new file).
        var candidateEntries: [Manifest.RawFileEntry?] = []
        var unchanged: [RawFile] = []
        /// The manifest's entry of each unchanged file.
        var unchangedEntries: [Manifest.RawFileEntry] = []
        var deleted: [Manifest.RawFileEntry] = []
        /// Exports with the manifest's bytes under a new mtime (also in `unchanged`).
        var touchedExports: [RawFile] = []

        /// Pairs the listing with the manifest's entries in one pass over both in path order (the
        /// listing is in date order, the export first, which is path order; the manifest is kept
        /// sorted by path): hashing every path into a dictionary and a set was a tenth of a
        /// one-day compaction's instructions. `candidates`, `unchanged` and `deleted` keep that order.
        init(files: [RawFile], previous: Manifest) {
            let files = files.inOrder { $0.path < $1.path }
            let old = previous.rawFiles.inOrder { $0.place < $1.place }
            // Mostly unchanged: room made once, not grown by appends that copy to fresh pages (with
            // the listing's room, a compaction of the year with nothing to do 223 -> 210 page faults).
            unchanged.reserveCapacity(files.count)
            unchangedEntries.reserveCapacity(min(files.count, old.count))
            var j = 0
            for f in files {
                while j < old.count && old[j].place < f.path {
                    deleted.append(old[j])
                    j += 1
                }
                var entry: Manifest.RawFileEntry?
                if j < old.count && old[j].place == f.path {
                    entry = old[j]
                    j += 1
                }
                if let e = entry, e.size == f.size, e.mtimeNanoseconds == f.mtimeNanoseconds {
                    unchanged.append(f)
                    unchangedEntries.append(e)
                } else {
                    candidates.append(f)
                    candidateEntries.append(entry)
                }
            }
            deleted += old[j...]
        }

        /// Hashes the exports whose size matches the manifest but whose mtime does not: the same
        /// bytes (a `touch`, a restore from a backup) are unchanged, and must not force the full
        /// rebuild a new export needs.
        mutating func recogniseTouchedExports() throws(TSDBError) {
            var changed: [RawFile] = []
            var changedEntries: [Manifest.RawFileEntry?] = []
            for (f, old) in zip(candidates, candidateEntries) {
                guard f.isExport, let old, old.size == f.size,
                    try MappedFile(path: f.absolutePath).withBytes({ ContentHash.hash($0) }) == old.contentHash
                else {
                    changed.append(f)
                    changedEntries.append(old)
                    continue
                }
                touchedExports.append(f)
                // In path order, as the rest of `unchanged`.
                let at = unchanged.firstIndex { f.path < $0.path } ?? unchanged.count
                unchanged.insert(f, at: at)
                unchangedEntries.insert(old, at: at)
            }
            (candidates, candidateEntries) = (changed, changedEntries)
        }
    }

    /// Applies a small change to the previous state. Returns nil when nothing needs publishing.
    func incremental(
        _ plan: IncrementalPlan, previous: Manifest, rebuilding damaged: Set<MonthIndex>,
        progress: ((CompactionProgress) -> Void)?
    ) throws(TSDBError) -> Manifest? {
        // The manifest's entries: the unchanged files' (parallel to `plan.unchanged`), and what
        // becomes of each candidate's (parallel to `plan.candidates`; nil: none).
        var entries = plan.unchangedEntries
        var candidateEntries = [Manifest.RawFileEntry?](repeating: nil, count: plan.candidates.count)
        var rebuild = damaged
        var touchedOnly = !plan.touchedExports.isEmpty
        for f in plan.touchedExports {
            if let i = plan.unchanged.firstIndex(where: { $0.path == f.path }) {
                entries[i].mtimeNanoseconds = f.mtimeNanoseconds
            }
        }
        report.filesTouched += plan.touchedExports.count
        for e in plan.deleted { rebuild.formUnion(e.months) }
        report.filesDeleted = plan.deleted.count

        // Parse the new and changed files; a rewrite with identical content is not a change.
        var fresh: [(index: Int, file: RawFile, parsed: ParsedDayFile)] = []
        let results = parse(plan.candidates)
        for (i, (file, result)) in zip(plan.candidates, results).enumerated() {
            let old = plan.candidateEntries[i]
            if case .success(let parsed) = result, let old, old.contentHash == parsed.contentHash, old.size == file.size
            {
                var e = old
                e.mtimeNanoseconds = file.mtimeNanoseconds
                candidateEntries[i] = e
                touchedOnly = true
                report.filesTouched += 1
                continue
            }
            if let old { rebuild.formUnion(old.months) }  // its old samples must go
            guard let parsed = accept(file, result) else { continue }
            if old != nil {
                rebuild.formUnion(parsed.months)
                report.filesChanged += 1
            } else {
                report.filesAdded += 1
            }
            fresh.append((i, file, parsed))
        }
        var append = Set<MonthIndex>()
        for f in fresh { append.formUnion(f.parsed.months) }
        append.subtract(rebuild)
        // Stored samples do not say which came from the export, so a month an unchanged export
        // contributes to is rebuilt from its inputs rather than appended to (segment-v3 §5.4).
        let exportMonths = Set((entries + candidateEntries.compactMap { $0 }).filter(\.isExport).flatMap(\.months))
        let fromExport = append.intersection(exportMonths)
        rebuild.formUnion(fromExport)
        append.subtract(fromExport)
        report.filesUnchanged = plan.unchanged.count - plan.touchedExports.count
        report.exportsUnchanged = plan.unchanged.count { $0.isExport } - plan.touchedExports.count
        guard !rebuild.isEmpty || !append.isEmpty || !plan.deleted.isEmpty else {
            if !touchedOnly { return nil }
            var m = previous
            m.rawFiles = Self.inPathOrder(entries, candidateEntries.compactMap { $0 })
            return m
        }

        // Months with a change or deletion are rebuilt from every raw file that contributes
        // to them; months that only gained files keep their stored samples.
        let contributors = zip(plan.unchanged, entries).filter { !rebuild.isDisjoint(with: $1.months) }.map(\.0)
        var done = 0
        let total = fresh.count + contributors.count
        progress?(CompactionProgress(filesDone: 0, filesTotal: total, bytesDone: 0, bytesTotal: 0))
        for (i, file, parsed) in fresh {
            let months = merge(parsed, keep: { rebuild.contains($0) || append.contains($0) })
            candidateEntries[i] = entry(file, parsed, months)
            done += 1
        }
        for export in contributors where export.isExport {
            _ = try mergeExport(export, keep: { rebuild.contains($0) }, flushing: false)
        }
        let dayFileContributors = contributors.filter { !$0.isExport }
        if !dayFileContributors.isEmpty {
            for result in parse(dayFileContributors) {
                // Unchanged on disk but unreadable now (e.g. permissions): its months cannot be rebuilt
                // faithfully, so the whole change is refused rather than silently losing samples.
                guard case .success(let parsed) = result else {
                    if case .failure(let e) = result { throw e }
                    continue
                }
                _ = merge(parsed, keep: { rebuild.contains($0) })
                done += 1
                progress?(CompactionProgress(filesDone: done, filesTotal: total, bytesDone: 0, bytesTotal: 0))
            }
        }
        // Only the (type, month) pairs that received new samples are rewritten.
        let appended = Set(
            pending.keys.filter { append.contains($0.month) }.map { MonthKey(type: $0.type, month: $0.month) })
        var carried: [Manifest.SegmentEntry] = []
        for segment in previous.segments where append.contains(segment.monthIndex) {
            let key = MonthKey(type: strings.intern(segment.type), month: segment.monthIndex)
            if appended.contains(key) {
                extending[key] = try segment.bytes(in: layout.storeDirectory, files: &storedFiles)
            } else {
                carried.append(try moveIntoPack(segment))
            }
        }
        // Encoded and written on both cores: one new day rewrites a segment per type for each of
        // its months (18 here), 3 ms on this thread alone (perf trace).
        writes = SegmentWrites()
        defer {
            if let writes { _ = writes.finish() }
            writes = nil
        }
        try flush(before: .max)
        try finishWrites()
        writes = nil
        report.monthsRebuilt = rebuild.count
        report.monthsAppended = append.count

        var manifest = Manifest()
        let replaced = rebuild.union(append)
        manifest.segments = (previous.segments.filter { !replaced.contains($0.monthIndex) } + carried + written.values)
            .sorted { ($0.year, $0.month, $0.type) < ($1.year, $1.month, $1.type) }
        manifest.rawFiles = Self.inPathOrder(entries, candidateEntries.compactMap { $0 })
        return manifest
    }

    /// `segment`'s bytes copied into this run's pack, after checking them against its entry's CRC:
    /// every segment of a month the run writes goes into its file, so an older run's file is left
    /// holding no segment of that month (its replaced bytes go with it: manifest-v4.md, Files).
    func moveIntoPack(_ segment: Manifest.SegmentEntry) throws(TSDBError) -> Manifest.SegmentEntry {
        let file = try segment.bytes(in: layout.storeDirectory, files: &storedFiles)
        let crc = file.withBytes { CRC32C.checksum($0) }
        guard crc == segment.crc else {
            DamageLog.record(layout, segment: segment.path)
            throw TSDBError.corrupt(
                "segment CRC is \(hex32(crc)), the manifest says \(hex32(segment.crc))", path: file.path,
                offset: segment.offset)
        }
        var moved = segment
        moved.path = pack!.relativePath
        moved.offset = try file.withBytes { (bytes) throws(TSDBError) in try pack!.append(bytes) }
        return moved
    }

    /// Two lists of entries, each in path order, merged into one.
    static func inPathOrder(_ a: [Manifest.RawFileEntry], _ b: [Manifest.RawFileEntry]) -> [Manifest.RawFileEntry] {
        guard !b.isEmpty else { return a }
        var out: [Manifest.RawFileEntry] = []
        out.reserveCapacity(a.count + b.count)
        var (i, j) = (0, 0)
        while i < a.count && j < b.count {
            if b[j].place < a[i].place {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
            }
        }
        return out + a[i...] + b[j...]
    }

    /// Adds a stored segment's samples to the pending buffers.
    func loadStored(_ entry: Manifest.SegmentEntry) throws(TSDBError) {
        let reader = try SegmentReader(file: entry.bytes(in: layout.storeDirectory, files: &storedFiles))
        let key = MonthKey(type: strings.intern(entry.type), month: entry.monthIndex)
        var samples = pending.removeValue(forKey: key) ?? []
        try reader.appendSamples(fromBlock: 0, type: key.type, strings: &strings, to: &samples)
        pending[key] = samples
    }
}

extension SegmentReader {
    /// Appends the samples of blocks `first...` as samples of `type`, their strings interned into
    /// `strings`. Dictionary ids are mapped to interned ids once per segment, so samples are rebuilt
    /// straight from the decoded columns without creating strings per sample.
    func appendSamples(
        fromBlock first: Int, type: Int32, strings: inout ByteInterner, to samples: inout [PackedSample]
    ) throws(TSDBError) {
        func ids(_ table: [OptionalText]) -> [Int32] {
            table.map { t in
                switch t {
                case .absent: PackedSample.absent
                case .null: PackedSample.null
                case .text(let s): strings.intern(s)
                }
            }
        }
        let units = ids(self.units)
        let sources = ids(self.sources)
        let devices = ids(self.devices)
        let metadata = ids(self.metadata)
        let texts = dictionary.numberTexts.map { Int64(strings.intern($0)) }
        samples.reserveCapacity(samples.count + summaries[first...].reduce(0) { $0 + $1.sampleCount })
        let block = DecodedBlock()
        for b in first..<blockCount {
            try decode(block: b, into: block)
            for i in 0..<block.count {
                let tag = UInt8(truncatingIfNeeded: block.valueTags[i])
                samples.append(
                    PackedSample(
                        start: block.starts[i], end: block.ends[i],
                        mantissa: tag == ValueTag.numberText ? texts[Int(block.mantissas[i])] : block.mantissas[i],
                        forms: dictionary.forms[Int(block.forms[i])], type: type,
                        unit: units[Int(block.units[i])], source: sources[Int(block.sources[i])],
                        device: devices[Int(block.devices[i])], metadata: metadata[Int(block.metadata[i])],
                        valueTag: tag))
            }
        }
    }
}

extension Array {
    /// The elements in the order `less` gives: the array itself when it is already in that order.
    fileprivate func inOrder(by less: (Element, Element) -> Bool) -> [Element] {
        for i in indices.dropFirst() where less(self[i], self[i - 1]) { return sorted(by: less) }
        return self
    }
}
