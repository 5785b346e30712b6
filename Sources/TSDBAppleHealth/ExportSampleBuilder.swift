import TSDB

extension ExportSamples {
    /// Builds samples element by element as the scanner streams the export.
    struct Builder {
        var parsed = ParsedDayFile()
        /// The Record, Workout or Correlation being read, its metadata and nested elements so far.
        var open: Open?
        /// Elements open inside it (a workout's statistics, route, activity; a correlation's record).
        var nested: [ExportNode] = []
        /// Inside a record's beat list: its elements are beats, not nested nodes.
        var inBeats = false
        /// The offset of the export date (the phone's at export): activity summaries' days use it.
        var exportOffset = 0
        /// Each route file a workout names (`/workout-routes/route_….gpx`) → its `WorkoutRoute`.
        var routeReferences: [String: ExportNode] = [:]
        /// Consecutive records mostly repeat these: a hit costs a byte comparison, not a new string.
        var types = RecentIDs()
        var units = RecentIDs()
        var sources = RecentIDs()
        var devices = RecentIDs()
        var dates = HealthDates()
        /// The heartbeat series' type and unit in this chunk's string table, once a beat needed them.
        var heartbeatIDs: (type: Int32, unit: Int32)?
        /// Elements left out, by why: how many, and the line of the first.
        var skipped: [String: (count: Int, line: Int)] = [:]
        /// The open sample's metadata members, and scratch for its JSON.
        var members = MetadataMembers()
        var json: [UInt8] = []

        struct Open {
            var sample: InternedSample
            /// Workouts and correlations keep their nested elements; records have none but beats.
            var keepsNested: Bool
            var children: [ExportNode] = []
        }

        /// Takes `e`; true when a chunk of `size` samples is ready to hand over (between elements).
        /// Asked here rather than by the caller: reading the count through the caller's captured
        /// builder copied the chunk (retaining its tables) at every element.
        mutating func take(_ e: HealthXMLScanner.Element, fillingChunkOf size: Int) -> Bool {
            take(e)
            return open == nil && parsed.sampleCount >= size
        }

        mutating func take(_ e: HealthXMLScanner.Element) {
            let name = ExportElementName(e)
            if open?.keepsNested == true, !nested.isEmpty || !(name == .workout || name == .correlation) {
                return takeNested(e)
            }
            switch (e.kind, name) {
            case (.end, .record), (.end, .workout), (.end, .correlation): close()
            case (.end, .beatList): inBeats = false
            case (.end, _): break
            case (_, .record): begin(record(e), e)
            case (_, .workout): begin(workout(e), e, keepsNested: true)
            case (_, .correlation): begin(correlation(e), e, keepsNested: true)
            case (_, .metadataEntry):
                if open != nil, let key = e.rawAttribute("key") {
                    members.append(xmlKey: key, xmlValue: e.rawAttribute("value") ?? Self.noBytes)
                }
            case (_, .beatList): inBeats = e.kind == .start
            case (_, .beat): if inBeats, let record = open?.sample { beat(e, of: record) }
            case (_, .activitySummary): activitySummary(e)
            case (_, .exportDate):
                if let p = e.rawAttribute("value").flatMap(HealthDate.parse) { exportOffset = p.offsetMinutes }
            case (_, .other): break
            }
        }

        /// Notes `count` elements left out for `why`; `line` is the first's (0 outside the XML).
        mutating func skip(_ why: String, line: Int, count: Int = 1) {
            skipped[why, default: (0, line)].count += count
        }

        /// Starts the next chunk: a new string table, so the remembered ids go too.
        mutating func newChunk() {
            parsed = ParsedDayFile(roomLike: parsed)
            for keyPath in [\Self.types, \.units, \.sources, \.devices] { self[keyPath: keyPath].forget() }
            heartbeatIDs = nil
        }

        /// `s` with its strings interned in this chunk's table.
        mutating func interned(_ s: Sample) -> InternedSample {
            func id(_ t: OptionalText) -> Int32 {
                switch t {
                case .absent: ParsedDayFile.absentText
                case .null: ParsedDayFile.nullText
                case .text(let v): parsed.intern(v)
                }
            }
            return InternedSample(
                start: s.start, end: s.end, value: s.value, type: parsed.intern(s.type), unit: id(s.unit),
                source: id(s.source), device: id(s.device))
        }

        static var noBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

        /// Opens `s`, whose metadata so far is in ``members``.
        mutating func begin(_ s: InternedSample?, _ e: HealthXMLScanner.Element, keepsNested: Bool = false) {
            guard let s else { return }
            open = Open(sample: s, keepsNested: keepsNested)
            if e.kind == .empty { close() }
        }

        /// An element inside a workout or correlation: kept as a node of its parent.
        mutating func takeNested(_ e: HealthXMLScanner.Element) {
            switch e.kind {
            case .end:
                if let node = nested.popLast() {
                    attach(node)
                } else {
                    close()  // the workout's or correlation's own end
                }
            case .start, .empty:
                if e.isNamed("MetadataEntry"), let key = e.rawAttribute("key") {
                    let value = e.rawAttribute("value") ?? Self.noBytes
                    if nested.isEmpty {
                        members.append(xmlKey: key, xmlValue: value)
                    } else {
                        nested[nested.count - 1].metadata.append(
                            (HealthXMLScanner.decode(key), HealthXMLScanner.decode(value)))
                    }
                    return
                }
                let node = ExportNode(e)
                if e.kind == .start { nested.append(node) } else { attach(node) }
            }
        }

        mutating func attach(_ node: ExportNode) {
            if nested.isEmpty {
                open!.children.append(node)
                if node.name == "WorkoutRoute" {
                    for ref in node.children where ref.name == "FileReference" {
                        if let path = ref.attributes.first(where: { $0.0 == "path" })?.1 {
                            routeReferences[path] = node
                        }
                    }
                }
            } else {
                nested[nested.count - 1].children.append(node)
            }
        }

        /// Metadata keys of a workout's and a correlation's nested elements.
        static let nestedKeys = [
            "WorkoutEvent": "HKWorkoutEvents", "WorkoutStatistics": "HKWorkoutStatistics",
            "WorkoutRoute": "HKWorkoutRoutes", "WorkoutActivity": "HKWorkoutActivities",
            "Record": "HKCorrelationObjects",
        ]

        mutating func close() {
            // Moved out, not copied: a copy retains each of the sample's strings once more.
            guard let o = open.take() else { return }
            nested.removeAll()
            inBeats = false
            for (name, nodes) in ExportNode.grouped(o.children) {
                json.removeAll(keepingCapacity: true)
                JSONText.nodes(nodes).append(to: &json)
                members.append(Self.nestedKeys[name] ?? name, json: json)
            }
            var metadata = ParsedDayFile.absentText
            if !members.isEmpty {
                json.removeAll(keepingCapacity: true)
                members.writeJSON(into: &json)
                metadata = json.withUnsafeBytes { parsed.intern($0) }
                members.removeAll()
            }
            let s = o.sample
            parsed.add(
                s.start, s.end, s.value, type: s.type, unit: s.unit, source: s.source, device: s.device,
                metadata: metadata)
        }

        static let heartbeatType = "HKDataTypeIdentifierHeartbeatSeries"

        mutating func beat(_ e: HealthXMLScanner.Element, of record: InternedSample) {
            guard let bpm = e.attribute("bpm").flatMap(ExportSamples.number), let time = e.attribute("time"),
                let (micros, fraction) = ExportSamples.timeOfDay(time)
            else {
                skip("heartbeats without a readable bpm or time", line: e.line)
                return
            }
            let ids = heartbeatIDs ?? (parsed.intern(Self.heartbeatType), parsed.intern("count/min"))
            heartbeatIDs = ids
            let offset = Int64(record.start.form.offsetMinutes) * 60_000_000
            let localStart = record.start.microseconds + offset
            let midnight = localStart - ((localStart % 86_400_000_000) + 86_400_000_000) % 86_400_000_000
            var local = midnight + micros
            if local < localStart - 3_600_000_000 { local += 86_400_000_000 }  // past midnight
            let at = Timestamp(
                microseconds: local - offset,
                form: TimeForm(offsetMinutes: record.start.form.offsetMinutes, fractionDigits: fraction))
            parsed.add(
                at, at, bpm, type: ids.type, unit: ids.unit, source: record.source, device: record.device,
                metadata: ParsedDayFile.absentText)
        }

        mutating func activitySummary(_ e: HealthXMLScanner.Element) {
            guard let date = e.attribute("dateComponents"), DayFileParser.isCalendarDate(date) else {
                skip("ActivitySummary elements without a readable dateComponents", line: e.line)
                return
            }
            let u = Array(date.utf8)
            func num(_ r: Range<Int>) -> Int { r.reduce(0) { $0 * 10 + Int(u[$1] - 48) } }
            let day = ISO8601.days(year: num(0..<4), month: num(5..<7), day: num(8..<10))
            let start = day * 86_400_000_000 - Int64(exportOffset) * 60_000_000
            let form = TimeForm(offsetMinutes: Int16(exportOffset))
            members.removeAll()
            for (k, v) in e.attributes where k != "dateComponents" { members.append(k, string: v) }
            let sample = Sample(
                type: "HKActivitySummaryTypeIdentifier", start: Timestamp(microseconds: start, form: form),
                end: Timestamp(microseconds: start + 86_400_000_000, form: form), value: .null, unit: .null)
            open = Open(sample: interned(sample), keepsNested: false)
            close()
        }

        mutating func span(_ e: HealthXMLScanner.Element) -> (Timestamp, Timestamp)? {
            span(start: e.rawAttribute("startDate"), end: e.rawAttribute("endDate"))
        }

        /// The span of a `startDate` and `endDate` written as Health writes them, end not before start.
        mutating func span(start: UnsafeRawBufferPointer?, end: UnsafeRawBufferPointer?) -> (Timestamp, Timestamp)? {
            guard let start, let end, let s = dates.parse(start), let t = dates.parse(end), t.micros >= s.micros
            else { return nil }
            func stamp(_ p: (micros: Int64, offsetMinutes: Int)) -> Timestamp {
                Timestamp(microseconds: p.micros, form: TimeForm(offsetMinutes: Int16(p.offsetMinutes)))
            }
            return (stamp(s), stamp(t))
        }

        /// Starts the metadata of a record, workout or correlation with what they all carry.
        mutating func common(_ e: HealthXMLScanner.Element) {
            common(sourceVersion: e.rawAttribute("sourceVersion"), creationDate: e.rawAttribute("creationDate"))
        }

        mutating func common(sourceVersion: UnsafeRawBufferPointer?, creationDate: UnsafeRawBufferPointer?) {
            members.removeAll()
            if let v = sourceVersion { members.append("HKSourceVersion", xmlValue: v) }
            if let v = creationDate { members.append("HKCreationDate", xmlValue: v) }
        }

        mutating func record(_ e: HealthXMLScanner.Element) -> InternedSample? {
            let a = RecordAttributes(e)
            guard let type = types.id(a.type, &parsed) else {
                skip("Record elements without a type", line: e.line)
                return nil
            }
            guard let (start, end) = span(start: a.startDate, end: a.endDate) else {
                skip("Record elements without readable startDate and endDate (end not before start)", line: e.line)
                return nil
            }
            common(sourceVersion: a.sourceVersion, creationDate: a.creationDate)
            var value = SampleValue.absent
            if let raw = a.value {
                if let number = ExportSamples.number(raw: raw) {
                    value = number
                } else {
                    let label = HealthXMLScanner.decode(raw)
                    if let category = ExportSamples.categoryValues[label] {
                        value = .decimal(ExactDecimal(mantissa: category, scale: 0))
                    } else {
                        value = .null
                        members.append("HKCategoryValueLabel", string: label)
                    }
                }
            }
            // A missing attribute is null, as `OptionalText(nil)` makes it for the other elements.
            let null = ParsedDayFile.nullText
            let sample = InternedSample(
                start: start, end: end, value: value, type: type,
                unit: units.id(a.unit, &parsed) ?? null, source: sources.id(a.sourceName, &parsed) ?? null,
                device: devices.id(a.device, &parsed) ?? null)
            return sample
        }

        /// A correlation (blood pressure, food): its records are nested in its metadata
        /// (`HKCorrelationObjects`), and stored as samples of their own from the top level.
        mutating func correlation(_ e: HealthXMLScanner.Element) -> InternedSample? {
            guard let type = e.attribute("type"), let (start, end) = span(e) else {
                skip("Correlation elements without a type or readable dates", line: e.line)
                return nil
            }
            let sample = Sample(
                type: type, start: start, end: end, value: .null, unit: .null,
                source: OptionalText(e.attribute("sourceName")), device: OptionalText(e.attribute("device")))
            common(e)
            return interned(sample)
        }

        mutating func workout(_ e: HealthXMLScanner.Element) -> InternedSample? {
            guard let (start, end) = span(e) else {
                skip("Workout elements without readable dates", line: e.line)
                return nil
            }
            common(e)
            if let label = e.attribute("workoutActivityType") {
                if let id = ExportSamples.activityTypes[label] {
                    members.append("workoutActivityType", json: Array(String(id).utf8))
                } else {
                    members.append("workoutActivityTypeName", string: label)
                }
            }
            for key: StaticString in ["duration", "totalDistance", "totalEnergyBurned"] {
                if let v = e.attribute(key), ExportSamples.number(v) != nil {
                    members.append("\(key)", json: Array(v.utf8))
                }
            }
            for key: StaticString in ["durationUnit", "totalDistanceUnit", "totalEnergyBurnedUnit"] {
                if let v = e.attribute(key) { members.append("\(key)", string: v) }
            }
            let sample = Sample(
                type: "HKWorkoutTypeIdentifier", start: start, end: end, value: .null, unit: .null,
                source: OptionalText(e.attribute("sourceName")), device: OptionalText(e.attribute("device")))
            return interned(sample)
        }
    }
}

/// A sample being read, its strings ids in the chunk's table (``ParsedDayFile/intern(_:)``).
struct InternedSample {
    var start: Timestamp
    var end: Timestamp
    var value: SampleValue
    var type: Int32
    var unit: Int32
    var source: Int32
    var device: Int32
}
