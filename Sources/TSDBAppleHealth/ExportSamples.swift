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
    /// Samples read so far are handed to `chunk` in pieces of about this many.
    static let chunkSamples = 16_384

    /// Streams the export's samples to `chunk`, a bounded piece at a time, in the export's order
    /// (Health writes records type by type, each in time order), then route points and
    /// electrocardiograms.
    package static func read(
        _ path: String, chunkSamples: Int = chunkSamples, chunk: (inout ParsedDayFile) throws(TSDBError) -> Void
    ) throws(TSDBError) {
        var builder = Builder()
        var progress = (done: 0, total: 0)
        func handOver(atLeast n: Int) throws(TSDBError) {
            guard builder.parsed.sampleCount >= n else { return }
            builder.parsed.readProgress = progress
            try chunk(&builder.parsed)
            builder.newChunk()
        }
        // Inflating and scanning run on a thread of their own; building samples runs on this one.
        try ExportReader.streamBatches(path) { (batch) throws(TSDBError) in
            progress = batch.progress
            try batch.withElements { (e) throws(TSDBError) in
                if builder.take(e, fillingChunkOf: chunkSamples) { try handOver(atLeast: chunkSamples) }
            }
        }
        // A route's file is named in its workout as `/workout-routes/route_….gpx`.
        try ExportReader.forEachFile(in: path, folder: "workout-routes/", suffix: ".gpx") {
            (relative, bytes) throws(TSDBError) in
            let reference = "/" + relative
            let unreadable = RoutePoints.add(
                gpx: bytes, file: reference, route: builder.routeReferences[reference], to: &builder.parsed)
            if unreadable > 0 {
                builder.skip("route points without a time or position", line: 0, count: unreadable)
            }
            try handOver(atLeast: chunkSamples)
        }
        try ExportReader.forEachFile(in: path, folder: "electrocardiograms/", suffix: ".csv") {
            (relative, bytes) throws(TSDBError) in
            if !Electrocardiograms.add(csv: bytes, file: "/" + relative, to: &builder.parsed) {
                builder.skip("electrocardiogram files this does not read", line: 0)
            }
            try handOver(atLeast: chunkSamples)
        }
        // What was left out, once, with the last chunk.
        for (why, seen) in builder.skipped.sorted(by: { $0.key < $1.key }) {
            builder.parsed.warn(
                "\(why): \(seen.count) left out" + (seen.line > 0 ? " (the first at line \(seen.line))" : ""))
        }
        try handOver(atLeast: builder.skipped.isEmpty ? 1 : 0)
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

    /// A number written in the export, kept digit for digit as the day-file parser keeps one (a
    /// short decimal, else its text); nil for anything that is not a JSON number.
    static func number(_ text: String) -> SampleValue? {
        var t = text
        return t.withUTF8 { number(raw: UnsafeRawBufferPointer($0)) }
    }

    /// ``number(_:)`` straight from an attribute's bytes (a number holds no entity to decode).
    static func number(raw: UnsafeRawBufferPointer) -> SampleValue? {
        guard isJSONNumber(raw) else { return nil }
        return DayFileParser.exactDecimal(raw).map(SampleValue.decimal)
            ?? .numberText(String(decoding: raw, as: UTF8.self))
    }

    /// JSON's number grammar: `-? int frac? exp?` (so the text can be written back as JSON).
    static func isJSONNumber(_ text: String) -> Bool {
        var t = text
        return t.withUTF8 { isJSONNumber(UnsafeRawBufferPointer($0)) }
    }

    static func isJSONNumber(_ raw: UnsafeRawBufferPointer) -> Bool {
        let n = raw.count
        var i = 0
        func isDigit(_ k: Int) -> Bool { k < n && raw[k] &- 48 < 10 }
        func digits() -> Int {
            let first = i
            while isDigit(i) { i += 1 }
            return i - first
        }
        if i < n && raw[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return false }
        if raw[i] == UInt8(ascii: "0") { i += 1 } else { _ = digits() }
        if i < n && raw[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < n && (raw[i] == UInt8(ascii: "e") || raw[i] == UInt8(ascii: "E")) {
            i += 1
            if i < n && (raw[i] == UInt8(ascii: "+") || raw[i] == UInt8(ascii: "-")) { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == n
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
