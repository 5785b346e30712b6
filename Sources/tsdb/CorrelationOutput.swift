import TSDB

/// `tsdb query BloodPressure`: one row per reading, its members side by side (systolic and
/// diastolic, or a meal's nutrients), instead of the correlation samples' raw metadata.
enum CorrelationOutput {
    static func write(_ readings: [CorrelationReading], zone: TimeZoneRules?, format: AggregateFormat) {
        var columns: [String] = []
        var units: [String: Set<String>] = [:]
        for r in readings {
            for m in r.members {
                if !columns.contains(m.type) { columns.append(m.type) }
                units[m.type, default: []].insert(m.unit ?? "")
            }
        }
        columns.sort { order($0) < order($1) }
        let names = headers(columns)
        let allUnits = Set(units.values.flatMap { $0 })
        let oneUnit = allUnits.count == 1 ? allUnits.first : nil
        var header = ["start", "end"]
        for (type, name) in zip(columns, names) {
            let u = units[type] ?? []
            header.append(oneUnit == nil && u.count == 1 && u.first != "" ? "\(name) (\(u.first!))" : name)
        }
        if let oneUnit, !oneUnit.isEmpty { header.append("unit") }
        header.append("source")
        let rows = readings.map { r -> [String] in
            func time(_ t: Timestamp) -> String { zone.map { localTimestamp(t.microseconds, $0) } ?? t.description }
            var row = [time(r.start), r.end == r.start ? "" : time(r.end)]
            for type in columns {
                row.append(r.members.filter { $0.type == type }.map(\.value).joined(separator: " "))
            }
            if let oneUnit, !oneUnit.isEmpty { row.append(oneUnit) }
            row.append([r.source, r.device.map(DeviceName.display)].compactMap { $0 }.joined(separator: " / "))
            return row
        }
        printRows(header, rows, format: format)
    }

    /// Systolic before diastolic, as readings are spoken; other members by name.
    static func order(_ type: String) -> (Int, String) {
        if type.hasSuffix("Systolic") { return (0, type) }
        if type.hasSuffix("Diastolic") { return (1, type) }
        return (2, type)
    }

    /// Short names without their common prefix, lower-cased: `systolic`, `diastolic`.
    static func headers(_ types: [String]) -> [String] {
        let short = types.map(TypeNames.shortName)
        guard short.count > 1 else { return short }
        var prefix = short[0]
        for s in short.dropFirst() { while !s.hasPrefix(prefix) { prefix.removeLast() } }
        return short.map { s in
            let rest = s.dropFirst(prefix.count)
            return rest.isEmpty ? s : rest.prefix(1).lowercased() + rest.dropFirst()
        }
    }
}
