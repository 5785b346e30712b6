#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read-only view of one published generation of a store.
///
/// Opening reads only the manifest. Segments are mapped lazily, the first time a query touches
/// them, and stay mapped for the life of the `Store`: the files of this generation remain
/// readable even if a later compaction replaces them (unlinked files stay mapped).
///
/// ```swift
/// let store = try Store(at: "imports")        // or the folder holding raw/, or …/tsdb
/// var cursor = try store.samples(of: "HKQuantityTypeIdentifierHeartRate",
///                                from: march, to: april)
/// while let sample = try cursor.next() { print(sample.start, sample.value) }
/// ```
public final class Store: Sendable {
    public let layout: StoreLayout
    /// The generation read and the segments opened so far, shared by the threads that query.
    /// Queries need only the manifest's segment entries; its raw-file entries are decoded from
    /// the same mapped bytes the first time ``manifest`` is asked for (a five-year store has
    /// thousands). The mapping is kept rather than copied: a copy's pages are each faulted in, and a
    /// manifest is replaced by a rename, never rewritten in place.
    private struct State {
        var manifest: Manifest
        /// The segments' types, told apart while decoding (never changed: `manifest.segments` isn't).
        let types: SegmentTypes
        let file: MappedFile
        var rawFilesDecoded = false
        /// The segments opened so far, by their index in `manifest.segments` (an array, not a
        /// dictionary by path: a dictionary's storage is instantiated at run time with a search
        /// through every conformance in the program for its key's Hashable).
        var openSegments: [SegmentReader?]
        /// The pack files mapped so far, each once for every type read from it: a mapping per
        /// type touched its neighbours' pages again (a page faulted in maps the few around it),
        /// and five years' summary counted 85 MB of the 15 MB pack as resident.
        var files = MappedFiles()

        init(reading path: String) throws(TSDBError) {
            file = try MappedFile(path: path)
            (manifest, types) = try file.withBytes { (b) throws(TSDBError) in
                try Manifest.decodeWithTypes(b, path: path, rawFiles: false)
            }
            openSegments = Array(repeating: nil, count: manifest.segments.count)
        }
    }

    private let state: Locked<State>
    /// Decoded-block buffers between scans: a fresh one is allocated and faulted in page by page
    /// (~70 KB for a day of heart rate), once per piece of a parallel aggregate. A scan takes one
    /// and gives it back, so each is used by one thread at a time; there are at most as many as
    /// scans ran at once.
    let blockPool = Pool<DecodedBlock>()
    /// Chunks of aggregate rows between aggregates (``ColumnChunk``), for the same reason (a year
    /// of 15-minute buckets into reused columns: 1.229 -> 0.966 ms with them kept). No more than
    /// were in use at once, each of at most ``ColumnChunk/mostWordsKept``.
    let chunkPool = Pool<ColumnChunk>()
    /// Type kinds and names (`types.json` beside `raw/`), read the first time a query needs them.
    public var catalog: TypeCatalog {
        loadedCatalog.withLock { loaded in
            if let loaded { return loaded }
            let catalog = TypeCatalog(layout: layout)
            loaded = catalog
            return catalog
        }
    }
    private let loadedCatalog = Locked<TypeCatalog?>(nil)

    /// The generation this store reads; replaced by a newer one only when a compaction has removed
    /// a file of this one (see ``segments(of:from:to:overlapping:)``).
    public var manifest: Manifest {
        state.withLock { s in
            if !s.rawFilesDecoded {
                // The bytes passed their CRC when the store opened; decoding them again cannot fail
                // unless the writer itself is wrong, and then the entries are left empty.
                let path = layout.manifestPath
                s.manifest.rawFiles =
                    (try? s.file.withBytes { (b) throws(TSDBError) in
                        try Manifest.decode(b, path: path)
                    }.rawFiles) ?? []
                s.rawFilesDecoded = true
            }
            return s.manifest
        }
    }

    /// The segments of the generation this store reads (what queries need, without raw-file entries).
    package var segmentEntries: [Manifest.SegmentEntry] { state.withLock { $0.manifest.segments } }

    /// The segments of `type` (see ``segmentEntries``), in manifest order.
    package func segmentEntries(of type: String) -> [Manifest.SegmentEntry] {
        state.withLock { state in
            let segments = state.manifest.segments
            return state.types.segments(of: type).map { segments[$0] }
        }
    }

    /// Opens the store for `path` (see ``StoreLayout/locate(_:)`` for what `path` may be).
    public convenience init(at path: String) throws(TSDBError) {
        try self.init(layout: StoreLayout.locate(path))
    }

    public init(layout: StoreLayout) throws(TSDBError) {
        self.layout = layout
        guard FileSystem.exists(layout.manifestPath) else {
            throw TSDBError.notFound("no compacted store here yet (no manifest)", path: layout.manifestPath)
        }
        state = Locked(try State(reading: layout.manifestPath))
    }

    /// One stored type with its totals.
    public struct TypeInfo: Sendable, Equatable {
        public var type: String
        public var sampleCount: Int
        /// Start of the first and last sample, µs since the epoch.
        public var firstStart: Int64
        public var lastStart: Int64
        public var segmentCount: Int
        public var bytes: Int
        public var bytesPerSample: Double { sampleCount == 0 ? 0 : Double(bytes) / Double(sampleCount) }
    }

    /// Every stored type, most samples first; answered from the manifest alone.
    public var types: [TypeInfo] {
        var byType: [String: TypeInfo] = [:]
        for s in segmentEntries {
            var t =
                byType[s.type]
                ?? TypeInfo(type: s.type, sampleCount: 0, firstStart: .max, lastStart: .min, segmentCount: 0, bytes: 0)
            t.sampleCount += s.sampleCount
            t.firstStart = min(t.firstStart, s.firstStart)
            t.lastStart = max(t.lastStart, s.lastStart)
            t.segmentCount += 1
            t.bytes += s.size
            byType[s.type] = t
        }
        return byType.values.sorted { ($0.sampleCount, $1.type) > ($1.sampleCount, $0.type) }
    }

    /// The stored type identifiers, in manifest order: what naming a type needs, without the totals.
    public var typeNames: [String] { state.withLock { $0.types.names } }

    /// The segments of `type` that may hold a sample starting in `[from, to)` (or, with
    /// `overlapping`, any sample whose interval reaches into it), in time order.
    public func segments(of type: String, from: Int64 = .min, to: Int64 = .max, overlapping: Bool = false)
        throws(TSDBError) -> [SegmentReader]
    {
        // A compaction keeps the previous generation's files until it publishes the next one, so
        // a file of ours is only gone if two generations were published since we read the
        // manifest. Then we move to the newest generation and take all segments from it: a
        // query never mixes generations.
        var attempt = 0
        while true {
            do throws(TSDBError) {
                // The files not yet open are opened outside the lock, so threads scanning different
                // months open theirs side by side. A path names one file's bytes for good (a rewrite
                // gets a new generation in its name), so a reader opened here is right to keep.
                let (generation, wanted, mapped) = state.withLock { state in
                    let segments = state.manifest.segments
                    let wanted = state.types.segments(of: type).filter { i in
                        let entry = segments[i]
                        return entry.firstStart < to
                            && (overlapping ? entry.maxEnd > from || entry.lastStart >= from : entry.lastStart >= from)
                    }.map { (index: $0, entry: segments[$0], open: state.openSegments[$0]) }
                    return (state.manifest.generation, wanted, state.files)
                }
                var files = mapped
                var out: [SegmentReader] = []
                var opened: [(index: Int, reader: SegmentReader)] = []
                for (index, entry, open) in wanted {
                    if let open {
                        out.append(open)
                    } else {
                        let reader = try openSegment(entry, files: &files)
                        opened.append((index, reader))
                        out.append(reader)
                    }
                }
                if !opened.isEmpty {
                    state.withLock { state in
                        // Indices name entries of the generation they were taken from.
                        guard state.manifest.generation == generation else { return }
                        for (index, reader) in opened where state.openSegments[index] == nil {
                            state.openSegments[index] = reader
                        }
                        state.files = files
                    }
                }
                return out.sorted { ($0.year, $0.month) < ($1.year, $1.month) }
            } catch  where error.errno == ENOENT && attempt < 3 {
                attempt += 1
                let newest = try State(reading: layout.manifestPath)
                state.withLock { $0 = newest }
            }
        }
    }

    /// Segment `entry`, its bytes a slice of its pack file mapped once in `files` for all the
    /// segments opened with it: a mapping is a system call (~2 us here, measured in C) and the
    /// year's heart rate is 13 segments in 3 files.
    private func openSegment(_ entry: Manifest.SegmentEntry, files: inout MappedFiles) throws(TSDBError)
        -> SegmentReader
    {
        let reader: SegmentReader
        let (layout, relative) = (self.layout, entry.path)
        do {
            let bytes = try entry.bytes(in: layout.storeDirectory, files: &files)
            reader = try SegmentReader(file: bytes) { DamageLog.record(layout, segment: relative) }
        } catch  where error.kind == .corruption || error.kind == .unsupportedVersion {
            DamageLog.record(layout, segment: entry.path)
            throw error
        }
        guard reader.type == entry.type, reader.sampleCount == entry.sampleCount else {
            DamageLog.record(layout, segment: entry.path)
            throw TSDBError.corrupt(
                "segment does not match the manifest (type or sample count differ)", path: reader.path,
                offset: entry.offset)
        }
        return reader
    }

    /// Streams the samples of `type` whose start lies in `[from, to)`, in start order.
    ///
    /// Only blocks whose summary overlaps the range are decoded, one block at a time, so memory
    /// stays constant whatever the range. `source`, when given, keeps samples whose source or
    /// device contains it (case-insensitive).
    public func samples(of type: String, from: Int64 = .min, to: Int64 = .max, source: String? = nil) throws(TSDBError)
        -> SampleCursor
    {
        SampleCursor(segments: try segments(of: type, from: from, to: to), from: from, to: to, source: source)
    }
}

/// A forward-only cursor over query results (see ``Store/samples(of:from:to:source:)``).
public struct SampleCursor {
    let segments: [SegmentReader]
    let from: Int64, to: Int64
    let sourceFilter: String?
    private var segmentIndex = 0
    private var blockIndex = -1
    private var row = 0
    private let block = DecodedBlock()
    private var sourceMatches: [Bool] = []

    init(segments: [SegmentReader], from: Int64, to: Int64, source: String?) {
        self.segments = segments
        self.from = from
        self.to = to
        self.sourceFilter = source?.lowercased()
    }

    /// The next sample, or nil at the end. Throws if a segment turns out to be corrupt.
    public mutating func next() throws(TSDBError) -> Sample? {
        while segmentIndex < segments.count {
            let segment = segments[segmentIndex]
            if blockIndex >= 0 {
                while row < block.count {
                    let i = row
                    row += 1
                    let start = block.starts[i]
                    if start < from { continue }
                    if start >= to {
                        segmentIndex = segments.count
                        return nil
                    }
                    if sourceFilter != nil && !sourceMatches[Int(block.sources[i])]
                        && !sourceMatches[segment.sources.count + Int(block.devices[i])]
                    {
                        continue
                    }
                    return segment.sample(i, of: block)
                }
            } else if let filter = sourceFilter {
                sourceMatches = (segment.sources + segment.devices).map {
                    $0.string?.lowercased().containsText(filter) ?? false
                }
            }
            blockIndex += 1
            while blockIndex < segment.blockCount && segment.summaries[blockIndex].lastStart < from { blockIndex += 1 }
            if blockIndex < segment.blockCount && segment.summaries[blockIndex].firstStart < to {
                try segment.decode(block: blockIndex, into: block)
                row = 0
            } else {
                segmentIndex += 1
                blockIndex = -1
                row = 0
            }
        }
        return nil
    }

    /// Calls `body` for every remaining sample.
    public mutating func forEach(_ body: (Sample) throws -> Void) throws {
        while let s = try next() { try body(s) }
    }
}

extension Store {
    /// Columnar access for analytics: calls `body` with every decoded block of `type` that may
    /// hold samples starting in `[from, to)`, in time order.
    ///
    /// Blocks are decoded into one reused ``DecodedBlock``; a block can extend past the range on
    /// either side, so `body` must check `block.starts[i]` itself. The block is only valid
    /// during the call.
    public func forEachBlock(
        of type: String, from: Int64 = .min, to: Int64 = .max,
        _ body: (SegmentReader, DecodedBlock) throws -> Void
    ) throws {
        let block = DecodedBlock()
        for segment in try segments(of: type, from: from, to: to) {
            for b in 0..<segment.blockCount
            where segment.summaries[b].lastStart >= from && segment.summaries[b].firstStart < to {
                try segment.decode(block: b, into: block)
                try body(segment, block)
            }
        }
    }
}

extension Store {
    /// Days with no raw day file between the first and the last one compacted, as ranges of
    /// `YYYY-MM-DD` (the exporter backfills missed days; these are the ones still missing).
    public var missingDays: [ClosedRange<String>] {
        let days = Set(manifest.rawFiles.compactMap(\.place.day))
        guard let first = days.min(), let last = days.max() else { return [] }
        func text(_ d: Int64) -> String {
            let (y, m, dd) = ISO8601.civil(d)
            return monthKey(year: y, month: m) + "-" + (dd < 10 ? "0" : "") + String(dd)
        }
        var gaps: [ClosedRange<String>] = []
        var d = first
        while d <= last {
            if days.contains(d) {
                d += 1
                continue
            }
            let start = d
            while d <= last && !days.contains(d) { d += 1 }
            gaps.append(text(start)...text(d - 1))
        }
        return gaps
    }
}
