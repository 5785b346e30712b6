import TSDB
import TSDBAppleHealth

/// Writes the same generated person as Apple Health's own `export.zip` would hold them: records
/// dated in the phone's zone at export time, category values as labels, metadata as entries,
/// workouts with events, statistics and GPX routes, blood-pressure correlations (their records
/// also at top level, as real exports do), daily activity summaries, heartbeat series with
/// decimal-comma times, and the known breakages of real exports: iOS 16's unclosed `ATTLIST`, a
/// `\x0b` in a source name, a translated member name, an invalid `export_cda.xml`.
public struct AppleExportGenerator {
    public var options: HealthDataGenerator.Options
    /// The XML member's name (`exportar.xml` on a Spanish phone).
    public var xmlName = "apple_health_export/export.xml"

    public init(options: HealthDataGenerator.Options) { self.options = options }

    /// What was written: records per type identifier, and the other elements' counts.
    public struct Written: Sendable {
        public var records: [String: Int] = [:]
        public var workouts = 0
        public var correlations = 0
        public var activitySummaries = 0
        public var heartbeats = 0
        public var electrocardiograms = 0
        public var xmlBytes = 0
    }

    static let sleepLabels = [
        "HKCategoryValueSleepAnalysisInBed", "HKCategoryValueSleepAnalysisAsleepUnspecified",
        "HKCategoryValueSleepAnalysisAwake", "HKCategoryValueSleepAnalysisAsleepCore",
        "HKCategoryValueSleepAnalysisAsleepDeep", "HKCategoryValueSleepAnalysisAsleepREM",
    ]

    /// Writes `path` (a new file: an existing one is never replaced).
    @discardableResult
    public func write(to path: String, progress: ((Int, Int) -> Void)? = nil) throws(TSDBError) -> Written {
        guard !FileSystem.exists(path) else {
            throw TSDBError.invalidInput(
                "already exists; the generated export is written only as a new file", path: path)
        }
        let zip = try ZipWriter(path: path)
        var written = Written()
        let exportOffset = 60  // the phone is in Paris in winter when the export is made
        try zip.begin(xmlName)
        var xml = XMLText()
        xml.raw(Self.prologue)
        // Health writes the export date first: the morning after the last generated day.
        let first = HealthDataGenerator.firstDay(options.startDate) ?? 0
        let exported = (first + Int64(options.days)) * 86_400_000_000 + 7 * 3_600_000_000
        xml.raw(" <ExportDate value=\"\(Self.date(exported, exportOffset))\"/>\n")
        var day = 0
        var routes: [(path: String, start: Int64, end: Int64)] = []
        var ecgs: [(date: String, start: Int64)] = []
        try HealthDataGenerator(options: options).forEachDay { (date, dayStart, samples) throws(TSDBError) in
            for s in samples where s.start.microseconds >= dayStart {  // each sample once
                if s.type == "HKWorkoutTypeIdentifier" {
                    let route = workout(s, &xml, exportOffset)
                    routes.append((route, s.start.microseconds, s.end.microseconds))
                    written.workouts += 1
                } else {
                    record(s, &xml, exportOffset, edge: day == 0 && written.records.isEmpty)
                    written.records[s.type, default: 0] += 1
                    if s.type == "HKQuantityTypeIdentifierHeartRateVariabilitySDNN" {
                        written.heartbeats += 5
                    }
                }
            }
            if day % 30 == 2 { ecgs.append((date, dayStart + 10 * 3_600_000_000)) }
            if day % 7 == 3 {
                bloodPressure(at: dayStart + 8 * 3_600_000_000, &xml, exportOffset)
                written.correlations += 1
                // Each reading is in the correlation and again at top level.
                written.records["HKQuantityTypeIdentifierBloodPressureSystolic", default: 0] += 2
                written.records["HKQuantityTypeIdentifierBloodPressureDiastolic", default: 0] += 2
            }
            xml.raw(
                " <ActivitySummary dateComponents=\"\(date)\" activeEnergyBurned=\"\(400 + day % 200)\" "
                    + "activeEnergyBurnedGoal=\"500\" activeEnergyBurnedUnit=\"kcal\" "
                    + "appleExerciseTime=\"\(20 + day % 40)\" "
                    + "appleExerciseTimeGoal=\"30\" appleStandHours=\"\(8 + day % 6)\" appleStandHoursGoal=\"12\"/>\n")
            written.activitySummaries += 1
            day += 1
            written.xmlBytes += xml.count
            try zip.write(xml.take())
            progress?(day, options.days)
        }
        xml.raw("</HealthData>\n")
        written.xmlBytes += xml.count
        try zip.write(xml.take())
        for r in routes {
            try zip.begin("apple_health_export" + r.path)
            try zip.write(Array(Self.gpx(from: r.start, to: r.end).utf8))
        }
        for (date, start) in ecgs {
            try zip.begin("apple_health_export/electrocardiograms/ecg_\(date).csv")
            try zip.write(Array(Self.electrocardiogram(at: start, exportOffset).utf8))
            written.electrocardiograms += 1
        }
        try zip.begin("apple_health_export/export_cda.xml")
        try zip.write(Array("<?xml version=\"1.0\"?>\n<ClinicalDocument><component>".utf8))  // cut short, as seen
        try zip.finish()
        return written
    }

    static let prologue = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
        >
        ]>
        <HealthData locale="fr_FR">
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-04-12"
          HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"
          HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet"/>

        """

    /// `yyyy-MM-dd HH:mm:ss ±hhmm` in the phone's offset at export time.
    static func date(_ micros: Int64, _ offset: Int) -> String {
        let text = ISO8601.format(micros, TimeForm(offsetMinutes: Int16(offset), fractionDigits: 0, isZulu: false))
        // 2025-03-01T08:00:00+01:00 → 2025-03-01 08:00:00 +0100
        let u = Array(text.utf8)
        return String(decoding: u[0..<10], as: UTF8.self) + " " + String(decoding: u[11..<19], as: UTF8.self) + " "
            + String(decoding: u[19..<22] + u[23..<25], as: UTF8.self)
    }

    func common(_ s: Sample, _ offset: Int, edge: Bool) -> String {
        var source = s.source.string ?? "iPhone"
        if edge { source += "\u{0B}" }  // real exports carry control characters in names
        let device = s.device.string.map {
            " device=\"&lt;&lt;HKDevice: 0x283e5c9b0&gt;, name:\(XMLText.escape($0)), manufacturer:Apple Inc.&gt;&gt;\""
        }
        return "sourceName=\"\(XMLText.escape(source))\" sourceVersion=\"17.1\"\(device ?? "")"
            + " creationDate=\"\(Self.date(s.end.microseconds, offset))\""
            + " startDate=\"\(Self.date(s.start.microseconds, offset))\""
            + " endDate=\"\(Self.date(s.end.microseconds, offset))\""
    }

    func record(_ s: Sample, _ xml: inout XMLText, _ offset: Int, edge: Bool) {
        var value = s.value.description
        if s.type == "HKCategoryTypeIdentifierSleepAnalysis", let v = s.value.doubleValue,
            Int(v) < Self.sleepLabels.count
        {
            value = Self.sleepLabels[Int(v)]
        } else if s.type == "HKCategoryTypeIdentifierAppleStandHour" {
            value =
                s.value.doubleValue == 1 ? "HKCategoryValueAppleStandHourStood" : "HKCategoryValueAppleStandHourIdle"
        } else if s.type.hasPrefix("HKCategoryTypeIdentifier") {
            value = "HKCategoryValueNotApplicable"
        }
        let unit = s.unit.string.map { " unit=\"\(XMLText.escape($0))\"" } ?? ""
        let head = " <Record type=\"\(s.type)\" \(common(s, offset, edge: edge))\(unit) value=\"\(value)\""
        let entries = metadataEntries(s)
        let hrv = s.type == "HKQuantityTypeIdentifierHeartRateVariabilitySDNN"
        if entries.isEmpty && !hrv {
            xml.raw(head + "/>\n")
            return
        }
        xml.raw(head + ">\n" + entries)
        if hrv {
            xml.raw("  <HeartRateVariabilityMetadataList>\n")
            // Times of day only, in the phone's locale (decimal comma), possibly past midnight.
            let local = (s.start.microseconds / 1_000_000 + Int64(offset) * 60) % 86_400
            for k in 0..<5 {
                let t = (local + Int64(k)) % 86_400
                let time = two(t / 3600) + ":" + two(t % 3600 / 60) + ":" + two(t % 60) + "," + two(Int64(k * 17 % 100))
                xml.raw("   <InstantaneousBeatsPerMinute bpm=\"\(60 + k * 3)\" time=\"\(time)\"/>\n")
            }
            xml.raw("  </HeartRateVariabilityMetadataList>\n")
        }
        xml.raw(" </Record>\n")
    }

    func span(_ s: Sample, _ offset: Int) -> String {
        "startDate=\"\(Self.date(s.start.microseconds, offset))\" endDate=\"\(Self.date(s.end.microseconds, offset))\""
    }

    func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// The day file's metadata object as entries (top-level keys; values as text).
    func metadataEntries(_ s: Sample) -> String {
        guard case .text(var json) = s.metadata,
            let object = json.withUTF8({ try? JSONValue.parse(UnsafeRawBufferPointer($0)) })?.object
        else { return "" }
        return object.keys.sorted().compactMap { key -> String? in
            guard let v = object[key] else { return nil }
            let text: String
            switch v {
            case .string(let s): text = s
            case .number(let n): text = n
            default: return nil
            }
            return "  <MetadataEntry key=\"\(XMLText.escape(key))\" value=\"\(XMLText.escape(text))\"/>\n"
        }.joined()
    }

    /// Writes the workout; returns its route's path in the archive (under apple_health_export).
    func workout(_ s: Sample, _ xml: inout XMLText, _ offset: Int) -> String {
        let w = WorkoutSummary(s, catalog: TypeCatalog())
        let name = w.name.prefix(1).uppercased() + w.name.dropFirst()
        let minutes = Double(s.durationMicroseconds) / 60e6
        var head =
            " <Workout workoutActivityType=\"HKWorkoutActivityType\(name)\" duration=\"\(minutes)\""
            + " durationUnit=\"min\""
        if let d = w.distance, let u = w.distanceUnit { head += " totalDistance=\"\(d)\" totalDistanceUnit=\"\(u)\"" }
        if let e = w.energy, let u = w.energyUnit {
            head += " totalEnergyBurned=\"\(e)\" totalEnergyBurnedUnit=\"\(u)\""
        }
        xml.raw(head + " " + common(s, offset, edge: false) + ">\n")
        let mid = s.start.microseconds + s.durationMicroseconds / 2
        xml.raw("  <WorkoutEvent type=\"HKWorkoutEventTypePause\" date=\"\(Self.date(mid, offset))\"/>\n")
        xml.raw("  <WorkoutEvent type=\"HKWorkoutEventTypeResume\" date=\"\(Self.date(mid + 60_000_000, offset))\"/>\n")
        xml.raw(
            "  <WorkoutStatistics type=\"HKQuantityTypeIdentifierHeartRate\" \(span(s, offset)) average=\"142\" "
                + "minimum=\"98\" maximum=\"171\" unit=\"count/min\"/>\n"
        )
        xml.raw(
            "  <WorkoutEvent type=\"HKWorkoutEventTypeLap\" date=\"\(Self.date(s.start.microseconds, offset))\" "
                + "duration=\"\(minutes / 2)\" durationUnit=\"min\"/>\n")
        if let e = w.energy, let u = w.energyUnit {
            xml.raw(
                "  <WorkoutStatistics type=\"HKQuantityTypeIdentifierActiveEnergyBurned\" \(span(s, offset)) "
                    + "sum=\"\(e)\" unit=\"\(u)\"/>\n")
        }
        xml.raw("  <WorkoutRoute sourceName=\"Apple Watch\" \(span(s, offset))>\n")
        // A route's own metadata belongs to the route, not to its workout.
        xml.raw("   <MetadataEntry key=\"HKMetadataKeySyncVersion\" value=\"2\"/>\n")
        let stamp = Self.date(s.start.microseconds, offset)
        let clock = String(stamp.dropFirst(11).prefix(5).map { $0 == ":" ? "." : $0 })
        let path = "/workout-routes/route_\(stamp.prefix(10))_\(clock).gpx"
        xml.raw("   <FileReference path=\"\(path)\"/>\n")
        xml.raw("  </WorkoutRoute>\n </Workout>\n")
        return path
    }

    /// A GPX track every 10 s on a loop by the Seine, with elevation, speed, course and accuracies
    /// in Apple's extensions, as the Health export writes them.
    static func gpx(from start: Int64, to end: Int64) -> String {
        var out =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"Apple Health Export\" "
            + "xmlns=\"http://www.topografix.com/GPX/1/1\">\n <trk><name>Route</name><trkseg>\n"
        var t = start
        var k = 0.0
        while t <= end {
            let lat = 48.8566 + 0.01 * (k / 50).truncatingRemainder(dividingBy: 1)
            let lon = 2.3522 + 0.005 * (k / 70).truncatingRemainder(dividingBy: 1)
            let time = ISO8601.format(t, TimeForm.zulu)
            out +=
                "  <trkpt lon=\"\(lon)\" lat=\"\(lat)\"><ele>\(35 + Int(k) % 7)</ele><time>\(time)</time>"
                + "<extensions><speed>2.8</speed><course>\(Int(k * 3) % 360)</course><hAcc>4.1</hAcc><vAcc>3.2</vAcc>"
                + "</extensions></trkpt>\n"
            t += 10_000_000
            k += 1
        }
        return out + " </trkseg></trk>\n</gpx>\n"
    }

    /// A 30-second single-lead recording at 512 Hz as the export writes it: header lines (these in
    /// English), lead and unit, then one voltage a line (a beat a second).
    static func electrocardiogram(at start: Int64, _ offset: Int) -> String {
        var out =
            "Name,Alex Martin\nDate of Birth,\"12 Apr 1985\"\nRecorded Date,\(date(start, offset))\n"
            + "Classification,Sinus Rhythm\nSymptoms,\nSoftware Version,2\nDevice,\"Watch6,2\"\n"
            + "Sample Rate,512 hertz\n\nLead,Lead I\nUnit,µV\n\n"
        for i in 0..<(30 * 512) {
            let phase = i % 512
            let spike = phase < 12 ? (6 - abs(phase - 6)) * 180_000 : 0
            let mantissa = spike - 20_000 + (i * 7919 % 4001)
            out += ExactDecimal(mantissa: Int64(mantissa), scale: 3).description + "\n"
        }
        return out
    }

    func bloodPressure(at t: Int64, _ xml: inout XMLText, _ offset: Int) {
        let d = Self.date(t, offset)
        let dates =
            "sourceName=\"Omron Connect\" sourceVersion=\"7.9\" unit=\"mmHg\" creationDate=\"\(d)\" startDate=\"\(d)\" "
            + "endDate=\"\(d)\""
        let systolic = " <Record type=\"HKQuantityTypeIdentifierBloodPressureSystolic\" \(dates) value=\"121\"/>\n"
        let diastolic = " <Record type=\"HKQuantityTypeIdentifierBloodPressureDiastolic\" \(dates) value=\"79\"/>\n"
        xml.raw(
            " <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"Omron Connect\" "
                + "sourceVersion=\"7.9\" creationDate=\"\(d)\" startDate=\"\(d)\" endDate=\"\(d)\">\n")
        xml.raw(" " + systolic + " " + diastolic + " </Correlation>\n")
        // Real exports list a correlation's records at top level too.
        xml.raw(systolic + diastolic)
    }
}

/// XML text built a day at a time.
struct XMLText {
    private var bytes: [UInt8] = []
    var count: Int { bytes.count }

    mutating func raw(_ s: String) { bytes += s.utf8 }

    mutating func take() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
