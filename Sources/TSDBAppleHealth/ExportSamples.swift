import TSDB

/// Turns an Apple Health export into samples for compaction (`tsdb import`): each `Record` (a
/// correlation's records once, from the top level where real exports repeat them) and each
/// `Workout`, in the day files' form so that every query, chart and export treats them alike.
///
/// - Dates keep the offset written in the export (the phone's at export time).
/// - Values keep their digits; category labels become HealthKit's integers (an unknown label is
///   kept in the metadata as `HKCategoryValueLabel`, value null).
/// - Metadata: every `MetadataEntry` as written (strings), plus `sourceVersion` and `creationDate`
///   as `HKSourceVersion` and `HKCreationDate`; workouts carry the day files' keys
///   (`workoutActivityType` as HealthKit's integer, totals and units as numbers and strings).
/// - A heart-rate-variability record's beats (`InstantaneousBeatsPerMinute`, times of day only)
///   become `HKDataTypeIdentifierHeartbeatSeries` samples at absolute instants, anchored on the
///   record's start (a beat before it by more than an hour is on the next day).
/// - Each `ActivitySummary` becomes an `HKActivitySummaryTypeIdentifier` sample spanning its day
///   (at the export's offset), its figures and goals in the metadata as written.
public enum ExportSamples {
    package static func read(_ path: String) throws(TSDBError) -> ParsedDayFile {
        var inventory = ExportInventory(source: path)
        var builder = Builder()
        let take: (HealthXMLScanner.Element, inout ExportInventory) throws(TSDBError) -> Void = { e, _ in
            builder.take(e)
        }
        try ExportReader.stream(path, into: &inventory, progress: { _, _ in }, take)
        return builder.parsed
    }

    static let categoryValues: [String: Int64] = [
        "HKCategoryValueSleepAnalysisInBed": 0, "HKCategoryValueSleepAnalysisAsleepUnspecified": 1,
        "HKCategoryValueSleepAnalysisAsleep": 1, "HKCategoryValueSleepAnalysisAwake": 2,
        "HKCategoryValueSleepAnalysisAsleepCore": 3, "HKCategoryValueSleepAnalysisAsleepDeep": 4,
        "HKCategoryValueSleepAnalysisAsleepREM": 5, "HKCategoryValueAppleStandHourIdle": 0,
        "HKCategoryValueAppleStandHourStood": 1, "HKCategoryValueNotApplicable": 0,
        "HKCategoryValueLowCardioFitnessEventLowFitness": 1, "HKCategoryValueAudioExposureEventLoudEnvironment": 1,
        "HKCategoryValueEnvironmentalAudioExposureEventMomentaryLimit": 1,
    ]

    /// `HKWorkoutActivityTypeRunning` → 37, from the catalog's names (`running`).
    static let activityTypes: [String: Int64] = Dictionary(
        TypeCatalog.builtInWorkoutActivities.map { id, name in
            ("HKWorkoutActivityType" + name.prefix(1).uppercased() + name.dropFirst(), id)
        }, uniquingKeysWith: min)

    struct Builder {
        var parsed = ParsedDayFile()
        /// The element being read (a Record or Workout with children), and its metadata so far.
        var open: (sample: Sample, metadata: [(String, JSONValueText)])?
        var correlationDepth = 0
        /// The offset of the export date (the phone's at export): activity summaries' days use it.
        var exportOffset = 0

        enum JSONValueText {
            case string(String)
            case number(String)
        }

        mutating func take(_ e: HealthXMLScanner.Element) {
            switch e.kind {
            case .end:
                if e.isNamed("Correlation") { correlationDepth = max(0, correlationDepth - 1) }
                if e.isNamed("Record") || e.isNamed("Workout") { close() }
            case .start, .empty:
                if e.isNamed("Correlation") {
                    if e.kind == .start { correlationDepth += 1 }
                } else if e.isNamed("Record") {
                    // A correlation's records appear again at top level: take those only.
                    guard correlationDepth == 0, let s = record(e) else { return }
                    open = s
                    if e.kind == .empty { close() }
                } else if e.isNamed("Workout") {
                    guard let s = workout(e) else { return }
                    open = s
                    if e.kind == .empty { close() }
                } else if e.isNamed("MetadataEntry"), open != nil, let key = e.attribute("key") {
                    open!.metadata.append((key, .string(e.attribute("value") ?? "")))
                } else if e.isNamed("InstantaneousBeatsPerMinute"), let record = open?.sample {
                    beat(e, of: record)
                } else if e.isNamed("ActivitySummary") {
                    activitySummary(e)
                } else if e.isNamed("ExportDate"), let p = e.rawAttribute("value").flatMap(HealthDate.parse) {
                    exportOffset = p.offsetMinutes
                }
            }
        }

        mutating func close() {
            guard var (sample, metadata) = open else { return }
            open = nil
            if !metadata.isEmpty {
                var seen = Set<String>()
                var json: [UInt8] = [UInt8(ascii: "{")]
                for (k, v) in metadata.sorted(by: { $0.0 < $1.0 }) where seen.insert(k).inserted {
                    if json.count > 1 { json.append(UInt8(ascii: ",")) }
                    DayFileWriter.appendJSONString(k, to: &json)
                    json.append(UInt8(ascii: ":"))
                    switch v {
                    case .string(let s): DayFileWriter.appendJSONString(s, to: &json)
                    case .number(let n): json += Array(n.utf8)
                    }
                }
                json.append(UInt8(ascii: "}"))
                sample.metadata = .text(String(decoding: json, as: UTF8.self))
            }
            parsed.add(sample)
        }

        static let heartbeatType = "HKDataTypeIdentifierHeartbeatSeries"

        mutating func beat(_ e: HealthXMLScanner.Element, of record: Sample) {
            guard let bpm = e.attribute("bpm").flatMap(ExportSamples.number), let time = e.attribute("time"),
                let (micros, fraction) = ExportSamples.timeOfDay(time)
            else { return }
            let offset = Int64(record.start.form.offsetMinutes) * 60_000_000
            let localStart = record.start.microseconds + offset
            let midnight = localStart - ((localStart % 86_400_000_000) + 86_400_000_000) % 86_400_000_000
            var local = midnight + micros
            if local < localStart - 3_600_000_000 { local += 86_400_000_000 }  // past midnight
            let at = Timestamp(
                microseconds: local - offset,
                form: TimeForm(offsetMinutes: record.start.form.offsetMinutes, fractionDigits: fraction))
            parsed.add(
                Sample(
                    type: Self.heartbeatType, start: at, end: at, value: bpm, unit: .text("count/min"),
                    source: record.source, device: record.device))
        }

        mutating func activitySummary(_ e: HealthXMLScanner.Element) {
            guard let date = e.attribute("dateComponents"), DayFileParser.isCalendarDate(date) else { return }
            let u = Array(date.utf8)
            func num(_ r: Range<Int>) -> Int { r.reduce(0) { $0 * 10 + Int(u[$1] - 48) } }
            let day = ISO8601.days(year: num(0..<4), month: num(5..<7), day: num(8..<10))
            let start = day * 86_400_000_000 - Int64(exportOffset) * 60_000_000
            let form = TimeForm(offsetMinutes: Int16(exportOffset))
            var metadata: [(String, JSONValueText)] = []
            for (k, v) in e.attributes where k != "dateComponents" { metadata.append((k, .string(v))) }
            open = (
                Sample(
                    type: "HKActivitySummaryTypeIdentifier", start: Timestamp(microseconds: start, form: form),
                    end: Timestamp(microseconds: start + 86_400_000_000, form: form), value: .null, unit: .null),
                metadata
            )
            close()
        }

        func span(_ e: HealthXMLScanner.Element) -> (Timestamp, Timestamp)? {
            guard let s = e.rawAttribute("startDate").flatMap(HealthDate.parse),
                let t = e.rawAttribute("endDate").flatMap(HealthDate.parse), t.micros >= s.micros
            else { return nil }
            func stamp(_ p: (micros: Int64, offsetMinutes: Int)) -> Timestamp {
                Timestamp(microseconds: p.micros, form: TimeForm(offsetMinutes: Int16(p.offsetMinutes)))
            }
            return (stamp(s), stamp(t))
        }

        func common(_ e: HealthXMLScanner.Element) -> [(String, JSONValueText)] {
            var m: [(String, JSONValueText)] = []
            if let v = e.attribute("sourceVersion") { m.append(("HKSourceVersion", .string(v))) }
            if let v = e.attribute("creationDate") { m.append(("HKCreationDate", .string(v))) }
            return m
        }

        func record(_ e: HealthXMLScanner.Element) -> (Sample, [(String, JSONValueText)])? {
            guard let type = e.attribute("type"), let (start, end) = span(e) else { return nil }
            var metadata = common(e)
            var value = SampleValue.absent
            if let text = e.attribute("value") {
                if let number = ExportSamples.number(text) {
                    value = number
                } else if let category = ExportSamples.categoryValues[text] {
                    value = .decimal(ExactDecimal(mantissa: category, scale: 0))
                } else {
                    value = .null
                    metadata.append(("HKCategoryValueLabel", .string(text)))
                }
            }
            let sample = Sample(
                type: type, start: start, end: end, value: value, unit: OptionalText(e.attribute("unit")),
                source: OptionalText(e.attribute("sourceName")), device: OptionalText(e.attribute("device")))
            return (sample, metadata)
        }

        func workout(_ e: HealthXMLScanner.Element) -> (Sample, [(String, JSONValueText)])? {
            guard let (start, end) = span(e) else { return nil }
            var metadata = common(e)
            if let label = e.attribute("workoutActivityType") {
                if let id = ExportSamples.activityTypes[label] {
                    metadata.append(("workoutActivityType", .number(String(id))))
                } else {
                    metadata.append(("workoutActivityTypeName", .string(label)))
                }
            }
            for key: StaticString in ["duration", "totalDistance", "totalEnergyBurned"] {
                if let v = e.attribute(key), ExportSamples.number(v) != nil {
                    metadata.append(("\(key)", .number(v)))
                }
            }
            for key: StaticString in ["durationUnit", "totalDistanceUnit", "totalEnergyBurnedUnit"] {
                if let v = e.attribute(key) { metadata.append(("\(key)", .string(v))) }
            }
            let sample = Sample(
                type: "HKWorkoutTypeIdentifier", start: start, end: end, value: .null, unit: .null,
                source: OptionalText(e.attribute("sourceName")), device: OptionalText(e.attribute("device")))
            return (sample, metadata)
        }
    }

    /// A number written in the export, kept digit for digit as the day-file parser keeps one (a
    /// short decimal, else its text); nil for anything that is not a JSON number.
    static func number(_ text: String) -> SampleValue? {
        guard isJSONNumber(text) else { return nil }
        var t = text
        let decimal = t.withUTF8 { DayFileParser.exactDecimal(UnsafeRawBufferPointer($0)) }
        return decimal.map(SampleValue.decimal) ?? .numberText(text)
    }

    /// JSON's number grammar: `-? int frac? exp?` (so the text can be written back as JSON).
    static func isJSONNumber(_ text: String) -> Bool {
        var u = Array(text.utf8)[...]
        func digits() -> Int {
            var n = 0
            while let c = u.first, c >= 48 && c <= 57 {
                u = u.dropFirst()
                n += 1
            }
            return n
        }
        if u.first == UInt8(ascii: "-") { u = u.dropFirst() }
        guard let first = u.first, first >= 48 && first <= 57 else { return false }
        if first == 48 { u = u.dropFirst() } else { _ = digits() }
        if u.first == UInt8(ascii: ".") {
            u = u.dropFirst()
            guard digits() > 0 else { return false }
        }
        if u.first == UInt8(ascii: "e") || u.first == UInt8(ascii: "E") {
            u = u.dropFirst()
            if u.first == UInt8(ascii: "+") || u.first == UInt8(ascii: "-") { u = u.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return u.isEmpty
    }

    /// A beat's time of day in the phone's locale: `00:20:37,80`, `0:20:37.80`, `12:20:37.80 AM`,
    /// `1:05:02 PM` → µs since midnight and the fraction's digits.
    static func timeOfDay(_ text: String) -> (Int64, UInt8)? {
        var t = text.uppercased()
        var pm: Bool?
        for (suffix, isPM) in [("PM", true), ("AM", false), ("P.M.", true), ("A.M.", false)] where t.hasSuffix(suffix) {
            pm = isPM
            t = String(t.dropLast(suffix.count))
            while let last = t.last, last == " " || last == "\u{202F}" || last == "\u{A0}" { t.removeLast() }
            break
        }
        let parts = t.split(separator: ":")
        guard parts.count == 3, let h = Int(parts[0]), let m = Int(parts[1]), m < 60 else { return nil }
        let secondsParts = parts[2].split(whereSeparator: { $0 == "," || $0 == "." })
        guard (1...2).contains(secondsParts.count), let s = Int(secondsParts[0]), s < 60 else { return nil }
        var fraction: Int64 = 0
        var digits: UInt8 = 0
        if secondsParts.count == 2 {
            let f = secondsParts[1].prefix(6)
            guard let v = Int64(f) else { return nil }
            digits = UInt8(f.count)
            fraction = v * [1, 100_000, 10_000, 1000, 100, 10, 1][f.count]
        }
        var hour = h
        if let pm {
            guard (1...12).contains(h) else { return nil }
            hour = h % 12 + (pm ? 12 : 0)
        }
        guard hour < 24 else { return nil }
        return ((Int64(hour) * 3600 + Int64(m) * 60 + Int64(s)) * 1_000_000 + fraction, digits)
    }
}
