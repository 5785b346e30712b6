import ArgumentParser
import TSDB
import TSDBAppleHealth

struct Types: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "types", abstract: "List the stored sample types.")

    @OptionGroup var zoneOption: ZoneOption

    @OptionGroup var storeOption: StoreOption

    var request: LookupRequest { LookupRequest(tz: zoneOption.tz, store: storeOption.store) }

    func run() throws { try Self.run(request) }

    static func run(_ request: LookupRequest) throws {
        let store = try StoreOption.open(request.store)
        let zone = try ZoneOption.rules(request.tz)
        if store.types.isEmpty { printError("the store holds no samples yet") }
        let rows = store.types.map { t in
            [
                TypeNames.shortName(t.type), formatCount(t.sampleCount), day(t.firstStart, zone),
                day(t.lastStart, zone), t.type,
            ]
        }
        output(renderTable(["type", "samples", "first", "last", "identifier"], rows), terminator: "")
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Storage figures per type: samples, segments, bytes, bytes per sample.")

    @Option(help: "Output: table, or csv with exact byte counts (current generation only).")
    var format: String = "table"

    @OptionGroup var zoneOption: ZoneOption

    @OptionGroup var storeOption: StoreOption

    var request: LookupRequest { LookupRequest(tz: zoneOption.tz, format: format, store: storeOption.store) }

    func run() throws { try Self.run(request) }

    static func run(_ request: LookupRequest) throws {
        let store = try StoreOption.open(request.store)
        let zone = try ZoneOption.rules(request.tz)
        let format = request.format
        let types = store.types
        if format == "csv" {
            output("type,samples,segments,bytes")
            for t in types { output("\(t.type),\(t.sampleCount),\(t.segmentCount),\(t.bytes)") }
            return
        }
        guard format == "table" else { throw ValidationError("--format must be table or csv") }
        var rows = types.map { t in
            [
                TypeNames.shortName(t.type), formatCount(t.sampleCount), day(t.firstStart, zone),
                day(t.lastStart, zone),
                String(t.segmentCount), formatBytes(t.bytes), fixed(t.bytesPerSample, 2),
            ]
        }
        let samples = types.reduce(0) { $0 + $1.sampleCount }
        let bytes = types.reduce(0) { $0 + $1.bytes }
        rows.append([
            "total", formatCount(samples), "", "", String(types.reduce(0) { $0 + $1.segmentCount }), formatBytes(bytes),
            fixed(samples == 0 ? 0 : Double(bytes) / Double(samples), 2),
        ])
        output(
            renderTable(["type", "samples", "first", "last", "segments", "bytes", "bytes/sample"], rows), terminator: ""
        )
        let manifest = store.manifest
        let raw = manifest.dayFiles.reduce(0) { $0 + $1.size }
        output(
            "raw JSON: \(plural(manifest.dayFiles.count, "day file")), \(formatBytes(raw)); store "
                + "is \(fixed(bytes == 0 ? 0 : Double(raw) / Double(bytes), 1))× smaller"
        )
        for export in manifest.rawFiles where export.isExport {
            output("Apple Health export: \(export.path.dropFirst(3)), \(formatBytes(export.size))")
            let head = try? ExportReader.head(of: store.layout.rawDirectory + "/" + export.path)
            if let date = head?.exportDate { output("  exported \(date)") }
            if let me = head?.me, !me.isEmpty { output("  me: " + me.map(Self.characteristic).joined(separator: ", ")) }
        }
        let gaps = store.missingDays
        if gaps.isEmpty {
            output("missing days: none")
        } else {
            let count = gaps.reduce(0) { n, g in n + daysBetween(g.lowerBound, g.upperBound) + 1 }
            let shown = gaps.prefix(20).map {
                $0.lowerBound == $0.upperBound ? $0.lowerBound : "\($0.lowerBound)..\($0.upperBound)"
            }
            output("missing days: \(count) (\(shown.joined(separator: ", "))\(gaps.count > 20 ? ", …" : ""))")
        }
    }
}

extension Stats {
    /// `HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"` → `biological sex Female`.
    static func characteristic(_ pair: (String, String)) -> String {
        let key = pair.0.hasPrefix("HKCharacteristicTypeIdentifier") ? String(pair.0.dropFirst(30)) : pair.0
        var value = pair.1
        for prefix in ["HKBiologicalSex", "HKBloodType", "HKFitzpatrickSkinType", "HKCardioFitnessMedicationsUse"]
        where value.hasPrefix(prefix) && value.count > prefix.count {
            value = String(value.dropFirst(prefix.count))
        }
        let words = key.reduce(into: "") { s, c in
            s += c.isUppercase && !s.isEmpty ? " " + c.lowercased() : c.lowercased()
        }
        return "\(words) \(value)"
    }
}

/// The local date of an instant in `zone`.
func day(_ micros: Int64, _ zone: TimeZoneRules) -> String {
    String(localTimestamp(micros, zone).prefix(10))
}

func daysBetween(_ a: String, _ b: String) -> Int {
    guard let x = Timestamp(a + "T00:00:00Z"), let y = Timestamp(b + "T00:00:00Z") else { return 0 }
    return Int((y.microseconds - x.microseconds) / 86_400_000_000)
}
