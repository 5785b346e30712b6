import TSDB

/// Daily summaries as JSON, YAML front matter + Markdown, and CSV.
enum SummaryRendering {
    /// Marks files written by `tsdb summary --out` (front matter key, or JSON member).
    static let marker = "generator: tsdb summary"

    static func number(_ v: Double) -> String { human(v) }

    // MARK: JSON

    static func json(_ day: DailySummary, generator: Bool = false) -> String {
        var members = [(key: "date", value: SummaryValue.text(day.date))] + day.figures
        if generator { members.insert((key: "generator", value: .text("tsdb summary")), at: 0) }
        return json(.group(members))
    }

    static func json(_ v: SummaryValue) -> String {
        switch v {
        case .number(let n): number(n)
        case .text(let s): jsonString(s)
        case .group(let g): "{" + g.map { jsonString($0.key) + ":" + json($0.value) }.joined(separator: ",") + "}"
        case .list(let l): "[" + l.map(json).joined(separator: ",") + "]"
        }
    }

    // MARK: Markdown with YAML front matter

    /// Written as bytes into one buffer as it goes: a year of notes made a string per line and
    /// joined them, ~190 K instructions a note (callgrind).
    static func markdown(_ day: DailySummary) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(1_024)
        out += "---\n\(marker)\ndate: \(day.date)\n".utf8
        for (key, value) in day.figures { yaml(key, value, indent: 0, lead: nil, into: &out) }
        out += "---\n\n# \(day.date)\n\n".utf8
        for line in body(day) {
            out += "- ".utf8
            out += line.utf8
            out.append(UInt8(ascii: "\n"))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Block-style YAML of `key` and `value` added to `out`, indented by `indent` spaces, strings
    /// as JSON strings (valid YAML double-quoted scalars); its first line starts with `lead`
    /// instead (a list item's first member follows its dash).
    private static func yaml(
        _ key: String, _ value: SummaryValue, indent: Int, lead: String?, into out: inout [UInt8]
    ) {
        if let lead { out += lead.utf8 } else { out += repeatElement(UInt8(ascii: " "), count: indent) }
        out += key.utf8
        switch value {
        case .number(let n):
            out += ": ".utf8
            RowBytes.append(to: &out, capacity: AggregateLines.numberLength) { writeHuman(n, to: &$0) }
            out.append(UInt8(ascii: "\n"))
        case .text(let s):
            out += ": ".utf8
            out += jsonString(s).utf8
            out.append(UInt8(ascii: "\n"))
        case .group(let g):
            out += ":\n".utf8
            for member in g { yaml(member.key, member.value, indent: indent + 2, lead: nil, into: &out) }
        case .list(let items):
            out += ":\n".utf8
            let dash = String(repeating: " ", count: indent) + "  - "
            for item in items {
                guard case .group(let g) = item else {
                    out += (dash + json(item) + "\n").utf8
                    continue
                }
                for (i, member) in g.enumerated() {
                    yaml(member.key, member.value, indent: indent + 4, lead: i == 0 ? dash : nil, into: &out)
                }
            }
        }
    }

    /// Readable lines for the note's body.
    static func body(_ day: DailySummary) -> [String] {
        var lines: [String] = []
        func n(_ key: String) -> Double? { if case .number(let v)? = day[key] { v } else { nil } }
        func minutes(_ m: Double) -> String { "\(Int(m) / 60) h \(Int(m.rounded()) % 60) min" }
        if let steps = n("steps") { lines.append("Steps: \(formatCount(Int(steps.rounded())))") }
        if let d = n("distance") { lines.append("Walking and running: \(human(d))") }
        if let a = n("active_energy") { lines.append("Active energy: \(human(a.rounded())) kcal") }
        if let e = n("exercise_min") { lines.append("Exercise: \(human(e.rounded())) min") }
        if let s = n("stand_hours") { lines.append("Stand hours: \(human(s))") }
        if case .group(let hr)? = day["heart_rate"] {
            let v = FirstMembers(hr)
            if case .number(let lo)? = v["min"], case .number(let mean)? = v["mean"], case .number(let hi)? = v["max"] {
                lines.append("Heart rate: \(human(lo))–\(human(hi)) bpm, mean \(human(mean.rounded()))")
            }
        }
        if let r = n("resting_heart_rate") { lines.append("Resting heart rate: \(human(r.rounded())) bpm") }
        if let h = n("hrv") { lines.append("HRV: \(human(h.rounded())) ms") }
        if case .group(let s)? = day["sleep"] {
            let v = FirstMembers(s)
            if case .text(let bed)? = v["bedtime"], case .text(let wake)? = v["wake"],
                case .number(let asleep)? = v["asleep_min"]
            {
                let (from, until) = (bed.dropFirst(11).prefix(5), wake.dropFirst(11).prefix(5))
                lines.append("Sleep: \(from) → \(until), asleep \(minutes(asleep))")
            }
        }
        if case .list(let workouts)? = day["workouts"] {
            for case .group(let w) in workouts {
                let v = FirstMembers(w)
                guard case .text(let type)? = v["type"], case .number(let minutes)? = v["duration_min"] else {
                    continue
                }
                lines.append("Workout: \(type), \(human(minutes.rounded())) min")
            }
        }
        if let m = n("body_mass") { lines.append("Body mass: \(human(m))") }
        if let m = n("mindful_min") { lines.append("Mindful: \(human(m.rounded())) min") }
        return lines
    }

    // MARK: CSV

    /// One row per day; groups flatten to `group_member`, workouts to a count and total minutes.
    /// Columns are numbered as they are first met and rows hold cells by number (their order is
    /// the figures', ``rank(_:)``): a year of rows as dictionaries, with a look along every column for
    /// each key, took ~200 K instructions a day (callgrind).
    static func csv(_ days: [DailySummary]) -> String {
        var columns = ["date"]
        var place = ["date": 0]
        var rows: [[String?]] = []
        rows.reserveCapacity(days.count)
        for day in days {
            let cells = csvCells(day)
            for (key, _) in cells where place[key] == nil {
                place[key] = columns.count
                columns.append(key)
            }
            var row = [String?](repeating: nil, count: columns.count)
            for (key, text) in cells { row[place[key]!] = text }
            rows.append(row)
        }
        let ranks = columns.map(rank)
        let order = [0] + columns.indices.dropFirst().sorted { ranks[$0] < ranks[$1] }
        var out: [UInt8] = []
        out += order.map { columns[$0] }.joined(separator: ",").utf8
        out.append(UInt8(ascii: "\n"))
        for row in rows {
            for (i, c) in order.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if c < row.count, let text = row[c] { out += csvQuoted(text).utf8 }
            }
            out.append(UInt8(ascii: "\n"))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A day's cells by column name; a later cell of the same name replaces an earlier one.
    private static func csvCells(_ day: DailySummary) -> [(key: String, text: String)] {
        var cells: [(key: String, text: String)] = [("date", day.date)]
        for (key, value) in day.figures {
            switch value {
            case .number(let n): cells.append((key, number(n)))
            case .text(let s): cells.append((key, s))
            case .group(let g):
                for (member, v) in g { cells.append((key + "_" + member, json(v).trimmingQuotes)) }
            case .list(let l):
                cells.append((key, String(l.count)))
                let total = l.reduce(0.0) { sum, w in
                    guard case .group(let g) = w,
                        case .number(let m)? = g.first(where: { $0.key == "duration_min" })?.value
                    else { return sum }
                    return sum + m
                }
                cells.append((key + "_min", number(total)))
            }
        }
        return cells
    }

    /// Columns in the order of the figures, then member names.
    static func rank(_ column: String) -> (Int, String) {
        let names = Store.summaryFigures.map(\.name) + ["sleep", "workouts"]
        let i = names.firstIndex { column == $0 || column.hasPrefix($0 + "_") } ?? names.count
        return (i, column)
    }
}

extension String {
    var trimmingQuotes: String {
        hasPrefix("\"") && hasSuffix("\"") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}

/// A group's members by key, the first of each key: what a dictionary of them kept, without
/// making one per group (three a note).
private struct FirstMembers {
    let members: [(key: String, value: SummaryValue)]
    init(_ members: [(key: String, value: SummaryValue)]) { self.members = members }
    subscript(key: String) -> SummaryValue? { members.first { $0.key == key }?.value }
}
