/// Checks a store against itself (quick) and against the raw files (deep).
///
/// Quick: the manifest reads; every segment it names exists with the recorded size and CRC-32C,
/// opens, and every block decodes with its checksum and invariants. Deep: also re-reads every
/// raw file and compares, for every (type, month), the distinct samples the raw files hold with
/// the samples stored, naming the raw file of a missing sample. Deep works month by month, so
/// memory holds one month of samples.
public struct StoreVerifier {
    public let layout: StoreLayout

    /// Reads an Apple Health export kept in `exports/` (the import subsystem's reader).
    package var exportReader: ExportSampleReader?

    public init(layout: StoreLayout) { self.layout = layout }

    /// One problem found.
    public struct Finding: Sendable, CustomStringConvertible {
        public enum Kind: String, Sendable {
            case damagedSegment = "damaged segment"
            case missingSegment = "missing segment"
            case unexpectedSegment = "unexpected segment"
            case missingSamples = "missing samples"
            case unexpectedSamples = "unexpected samples"
            case rawFileChanged = "raw file changed since the last compaction"
            case rawFileUnreadable = "raw file not compacted"
            case damagedManifest = "damaged manifest"
        }
        public var kind: Kind
        public var type: String?
        /// The UTC month.
        public var month: MonthIndex?
        public var path: String?
        public var detail: String

        /// Whether `tsdb verify --repair` (rebuilding the month from raw files) fixes it.
        public var isRepairable: Bool { kind != .rawFileUnreadable && kind != .rawFileChanged }

        public var description: String {
            var parts = [kind.rawValue]
            if let type { parts.append(TypeNames.shortName(type)) }
            if let month { parts.append(month.description) }
            if let path { parts.append(path) }
            return parts.joined(separator: " · ") + ": " + detail
        }
    }

    public struct Report: Sendable {
        public var findings: [Finding] = []
        public var segmentsChecked = 0
        public var blocksChecked = 0
        public var samplesChecked = 0
        public var rawFilesChecked = 0
        /// Problems that make the store disagree with itself or with the raw files.
        public var problems: [Finding] { findings.filter { $0.kind != .rawFileChanged } }
        /// Months `--repair` rebuilds.
        public var monthsToRepair: Set<MonthIndex> { Set(findings.filter(\.isRepairable).compactMap(\.month)) }
    }

    /// An error without its path (the finding names the file), with line and offset.
    static func reason(_ error: TSDBError) -> String {
        var place: [String] = []
        if let line = error.line { place.append("line \(line)") }
        if let offset = error.offset { place.append("offset \(offset)") }
        return (place.isEmpty ? "" : place.joined(separator: ", ") + ": ") + error.message
    }

    public func verify(deep: Bool, progress: ((Int, Int) -> Void)? = nil) throws(TSDBError) -> Report {
        var report = Report()
        let manifest: Manifest
        do {
            manifest = try Manifest.read(at: layout.manifestPath)
        } catch {
            report.findings.append(
                Finding(
                    kind: .damagedManifest, path: layout.manifestPath,
                    detail: "\(error.message); `tsdb compact --rebuild` rebuilds it"))
            return report
        }
        var readable: [String: SegmentReader] = [:]
        for (i, entry) in manifest.segments.enumerated() {
            let month = entry.monthIndex
            let path = layout.storeDirectory + "/" + entry.path
            func damaged(_ detail: String) {
                report.findings.append(
                    Finding(kind: .damagedSegment, type: entry.type, month: month, path: path, detail: detail))
            }
            do throws(TSDBError) {
                let file = try MappedFile(path: path, offset: entry.offset, count: entry.size)
                let fileSize = try FileSystem.status(path).size
                guard fileSize == entry.fileSize else {
                    damaged("file is \(fileSize) bytes, the manifest says \(entry.fileSize)")
                    continue
                }
                let crc = file.withBytes { CRC32C.checksum($0) }
                guard crc == entry.crc else {
                    damaged(
                        "the \(entry.size) bytes at offset \(entry.offset) have CRC \(hex32(crc)), "
                            + "the manifest says \(hex32(entry.crc))")
                    continue
                }
                let reader = try SegmentReader(file: file)
                guard reader.type == entry.type, reader.year == entry.year, reader.month == entry.month,
                    reader.sampleCount == entry.sampleCount
                else {
                    damaged(
                        "holds \(reader.sampleCount) samples of \(reader.type) "
                            + "for \(monthKey(year: reader.year, month: reader.month)), the manifest "
                            + "says \(entry.sampleCount)"
                    )
                    continue
                }
                let block = DecodedBlock()
                let slots = try reader.slotTable()
                for b in 0..<reader.blockCount {
                    try reader.decode(block: b, into: block)
                    try reader.checkSlots(of: b, decoded: block, in: slots)
                    report.blocksChecked += 1
                }
                report.samplesChecked += reader.sampleCount
                readable[entry.place] = reader
            } catch {
                damaged(error.description)
            }
            report.segmentsChecked += 1
            progress?(i + 1, manifest.segments.count)
        }
        if deep {
            try compareWithRaw(manifest, readable, &report)
        } else {
            noteChangedRawFiles(manifest, &report)
        }
        return report
    }

    /// Raw files added, changed or removed since the manifest was written (not errors: the
    /// store is simply behind until the next compaction), and raw files that cannot be compacted
    /// (errors: their samples are not in the store). Only files the manifest does not match are
    /// read.
    private func noteChangedRawFiles(_ manifest: Manifest, _ report: inout Report) {
        guard let listing = try? RawFileDiscovery.find(layout) else { return }
        for e in listing.skipped {
            report.findings.append(Finding(kind: .rawFileUnreadable, path: e.path, detail: e.message))
        }
        let plan = Compactor.IncrementalPlan(files: listing.files, previous: manifest)
        for (f, old) in zip(plan.candidates, plan.candidateEntries) {
            do throws(TSDBError) {
                _ = try parse(f)
                let detail = old == nil ? "added" : "modified"
                report.findings.append(Finding(kind: .rawFileChanged, path: f.absolutePath, detail: detail))
            } catch {
                report.findings.append(
                    Finding(kind: .rawFileUnreadable, path: f.absolutePath, detail: Self.reason(error)))
            }
        }
        for e in plan.deleted {
            report.findings.append(
                Finding(kind: .rawFileChanged, path: layout.rawDirectory + "/" + e.path, detail: "deleted"))
        }
    }

    private func compareWithRaw(_ manifest: Manifest, _ readable: [String: SegmentReader], _ report: inout Report)
        throws(TSDBError)
    {
        let listing = try RawFileDiscovery.find(layout)
        let files = listing.files
        for e in listing.skipped {
            report.findings.append(Finding(kind: .rawFileUnreadable, path: e.path, detail: e.message))
        }
        // Pass 1: which months each raw file's samples start in.
        var filesByMonth: [MonthIndex: [RawFile]] = [:]
        // The export spans every month: read once and kept, not once a month.
        var exportSamples: [String: ParsedDayFile] = [:]
        for f in files {
            do throws(TSDBError) {
                let parsed = try parse(f)
                if f.isExport { exportSamples[f.relativePath] = parsed }
                for m in Compactor.months(of: parsed.samples) { filesByMonth[m, default: []].append(f) }
                report.rawFilesChecked += 1
            } catch {
                report.findings.append(
                    Finding(kind: .rawFileUnreadable, path: f.absolutePath, detail: Self.reason(error)))
            }
        }
        // Pass 2: month by month, expected (from raw) against stored.
        var storedByMonth: [MonthIndex: [Manifest.SegmentEntry]] = [:]
        for s in manifest.segments { storedByMonth[s.monthIndex, default: []].append(s) }
        for month in Set(filesByMonth.keys).union(storedByMonth.keys).sorted() {
            var expected: [String: [Sample: String]] = [:]
            for f in filesByMonth[month] ?? [] {
                guard let parsed = exportSamples[f.relativePath] ?? (try? parse(f)) else { continue }
                var strings = parsed.strings
                for p in parsed.samples where MonthIndex.containing(p.start).month == month {
                    let s = Sample(p, strings: &strings)
                    if expected[s.type, default: [:]][s] == nil { expected[s.type, default: [:]][s] = f.absolutePath }
                }
            }
            var storedTypes = Set<String>()
            for entry in storedByMonth[month] ?? [] {
                storedTypes.insert(entry.type)
                guard let reader = readable[entry.place] else { continue }
                var stored = Set<Sample>()
                let block = DecodedBlock()
                for b in 0..<reader.blockCount {
                    try reader.decode(block: b, into: block)
                    for i in 0..<block.count { stored.insert(reader.sample(i, of: block)) }
                }
                let readings = Set(stored.map(Sample.Reading.init))
                let want = expected[entry.type] ?? [:]
                if want.isEmpty {
                    report.findings.append(
                        Finding(
                            kind: .unexpectedSegment, type: entry.type, month: month,
                            path: layout.storeDirectory + "/" + entry.path,
                            detail: "no raw file has samples of this type in this month"))
                    continue
                }
                // A copy of a stored reading (a day file's and the export's) is accounted for.
                let missing = want.keys.filter { !stored.contains($0) && !readings.contains(Sample.Reading($0)) }
                let extra = stored.filter { want[$0] == nil }
                if let example = missing.min(by: { $0.start < $1.start }) {
                    report.findings.append(
                        Finding(
                            kind: .missingSamples, type: entry.type, month: month, path: want[example],
                            detail:
                                "\(missing.count) samples in the raw files are not stored, e.g. one "
                                + "starting \(example.start)"
                        ))
                }
                if let example = extra.min(by: { $0.start < $1.start }) {
                    report.findings.append(
                        Finding(
                            kind: .unexpectedSamples, type: entry.type, month: month,
                            path: layout.storeDirectory + "/" + entry.path,
                            detail:
                                "\(extra.count) stored samples are in no raw file, e.g. one starting \(example.start)"))
                }
            }
            for (type, want) in expected where !storedTypes.contains(type) {
                let example = want.min { $0.key.start < $1.key.start }!
                report.findings.append(
                    Finding(
                        kind: .missingSegment, type: type, month: month, path: example.value,
                        detail: "\(want.count) samples in the raw files, no segment stores them"))
            }
        }
    }

    func parse(_ f: RawFile) throws(TSDBError) -> ParsedDayFile {
        let mapped = try MappedFile(path: f.absolutePath)
        let reader = exportReader
        let parsed = try mapped.withBytes { (b) throws(TSDBError) in try f.parse(b, exportReader: reader) }
        if let date = parsed.date, date != f.dateText {
            throw TSDBError.invalidInput(
                "\"date\" is \"\(date)\" but the file name says \(f.dateText)", path: f.absolutePath)
        }
        return parsed
    }
}

extension Sample {
    /// What identifies a reading across exporters (see `Compactor.mergeSameReadings`).
    struct Reading: Hashable {
        var start: Int64
        var end: Int64
        var source: OptionalText
        var value: SampleValue

        init(_ s: Sample) {
            start = s.start.microseconds
            end = s.end.microseconds
            source = s.source
            value = s.value
            if case .decimal(let d) = s.value {
                let (tag, m) = Compactor.ReadingIdentity.normalised(ValueTag.decimalBase + d.scale, d.mantissa)
                value = .decimal(ExactDecimal(mantissa: m, scale: tag - ValueTag.decimalBase))
            }
        }
    }

    /// A packed sample with its strings resolved through `strings`.
    init(_ p: PackedSample, strings: inout ByteInterner) {
        func text(_ id: Int32) -> OptionalText {
            id == PackedSample.absent ? .absent : id == PackedSample.null ? .null : .text(strings.string(id))
        }
        let value: SampleValue
        switch p.valueTag {
        case ValueTag.absent: value = .absent
        case ValueTag.null: value = .null
        case ValueTag.numberText: value = .numberText(strings.string(Int32(p.mantissa)))
        default: value = .decimal(ExactDecimal(mantissa: p.mantissa, scale: p.valueTag - ValueTag.decimalBase))
        }
        let (sf, ef) = TimeForm.unpair(p.forms)
        self.init(
            type: strings.string(p.type), start: Timestamp(microseconds: p.start, form: sf),
            end: Timestamp(microseconds: p.end, form: ef), value: value, unit: text(p.unit),
            source: text(p.source), device: text(p.device), metadata: text(p.metadata))
    }
}
