import Testing

@testable import TSDB
@testable import TSDBSynthetic
@testable import tsdb

/// `tsdb summary --format csv` and the CSV quoting of `sleep` and `summary` against plain
/// reference versions: rows as dictionaries, columns found by a look along them, and quoting
/// decided character by character.
@Suite struct SummaryCSVTests {
    /// The quoting as a look at each character: a field with a comma, a quote or a newline is
    /// quoted, its quotes doubled ("\r\n" is one character, not "\n").
    static func referenceQuoted(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return s }
        return "\"" + s.map { $0 == "\"" ? "\"\"" : String($0) }.joined() + "\""
    }

    @Test func quotingIsTheCharacterByCharacterOne() {
        let pieces = ["a", "7", " ", ",", "\"", "\n", "\r", "\r\n", "é", "e\u{301}", ",\u{301}", "\"\u{301}", "🏃"]
        var rng = SplitMix64(seed: 3)
        for _ in 0..<3_000 {
            let text = (0..<Int(rng.next() % 6)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            #expect(csvQuoted(text) == Self.referenceQuoted(text), "\(Array(text.unicodeScalars))")
        }
    }

    /// The rows as dictionaries, each day's new columns added in name order after a look along
    /// those there: what the rendering did before it numbered its columns.
    static func referenceCSV(_ days: [DailySummary]) -> String {
        var columns: [String] = []
        var rows: [[String: String]] = []
        for day in days {
            var row = ["date": day.date]
            for (key, value) in day.figures {
                switch value {
                case .number(let n): row[key] = SummaryRendering.number(n)
                case .text(let s): row[key] = s
                case .group(let g):
                    for (member, v) in g { row[key + "_" + member] = SummaryRendering.json(v).trimmingQuotes }
                case .list(let l):
                    row[key] = String(l.count)
                    var total = 0.0
                    for case .group(let g) in l {
                        if case .number(let m)? = g.first(where: { $0.key == "duration_min" })?.value { total += m }
                    }
                    row[key + "_min"] = SummaryRendering.number(total)
                }
            }
            for key in row.keys.sorted() where !columns.contains(key) { columns.append(key) }
            rows.append(row)
        }
        let order =
            ["date"] + columns.filter { $0 != "date" }.sorted { SummaryRendering.rank($0) < SummaryRendering.rank($1) }
        return order.joined(separator: ",") + "\n"
            + rows.map { r in order.map { Self.referenceQuoted(r[$0] ?? "") }.joined(separator: ",") + "\n" }.joined()
    }

    /// Days holding a random few of the figures, some twice, groups with members in any order,
    /// texts that need quoting, workouts with and without minutes, and figures no list names.
    static func days(_ rng: inout SplitMix64, count: Int) -> [DailySummary] {
        let names = Store.summaryFigures.map(\.name) + ["sleep", "workouts", "zzz_unknown", "aaa_unknown"]
        let texts = ["plain", "a,b", "say \"hi\"", "two\nlines", "é"]
        return (0..<count).map { d in
            var figures: [(key: String, value: SummaryValue)] = []
            for _ in 0..<Int(rng.next() % 8) {
                let name = names[Int(rng.next() % UInt64(names.count))]
                let text = texts[Int(rng.next() % UInt64(texts.count))]
                switch rng.next() % 4 {
                case 0: figures.append((name, .number(Double(rng.next() % 10_000) / 8)))
                case 1: figures.append((name, .text(text)))
                case 2:
                    let members = ["min", "max", "mean", "bedtime"].shuffled(using: &rng).prefix(Int(rng.next() % 4))
                    figures.append(
                        (name, .group(members.map { ($0, rng.next() % 2 == 0 ? .number(7.5) : .text(text)) })))
                default:
                    let workouts: [SummaryValue] = (0..<Int(rng.next() % 3)).map { _ in
                        .group([("type", .text(text))] + (rng.next() % 3 == 0 ? [] : [("duration_min", .number(31))]))
                    }
                    figures.append((name, .list(workouts)))
                }
            }
            return DailySummary(date: "2025-01-\(d + 10)", figures: figures)
        }
    }

    @Test func rowsAndColumnsAreTheReferenceOnes() {
        var rng = SplitMix64(seed: 8)
        for count in [0, 1, 2, 5, 20] {
            for round in 0..<10 {
                let days = Self.days(&rng, count: count)
                #expect(SummaryRendering.csv(days) == Self.referenceCSV(days), "\(count) days, round \(round)")
            }
        }
        #expect(SummaryRendering.csv([]) == "date\n")
    }
}
