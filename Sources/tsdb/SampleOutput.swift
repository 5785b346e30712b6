import TSDB

enum OutputFormat: String, CaseIterable {
    case table, csv, json, ndjson
}

/// Streams samples to stdout as a table or a JSON array (CSV and NDJSON go through the
/// engine's columnar ``Store/writeSamples(of:from:to:format:source:flush:)``).
struct SampleWriter {
    let format: OutputFormat
    /// When set, timestamps are shown in this zone instead of as written (table only).
    let zone: TimeZoneRules?
    let out = OutputBuffer()
    private var count = 0

    init(format: OutputFormat, zone: TimeZoneRules? = nil) {
        self.format = format
        self.zone = zone
        precondition(format == .json || format == .table, "CSV and NDJSON are written by Store.writeSamples")
        if format == .json {
            out.write("[")
        } else {
            out.write(
                pad("start", 26) + pad("end", 26) + pad("value", 10) + pad("unit", 10) + pad("source / device", 28)
                    + "metadata\n")
        }
    }

    private var line: [UInt8] = []

    mutating func write(_ s: Sample) {
        count += 1
        line.removeAll(keepingCapacity: true)
        if format == .json {
            line.append(contentsOf: (count == 1 ? "\n  " : ",\n  ").utf8)
            DayFileWriter.appendSample(s, to: &line)
        } else {
            let who = [s.source.string, s.device.string.map(DeviceName.display)].compactMap { $0 }.joined(
                separator: " / ")
            var value: [UInt8] = []
            DayFileWriter.appendValue(s.value, to: &value)
            let start = zone.map { localTimestamp(s.start.microseconds, $0) } ?? s.start.description
            let end = zone.map { localTimestamp(s.end.microseconds, $0) } ?? s.end.description
            line.append(
                contentsOf: (pad(start, 26) + pad(s.end == s.start ? "" : end, 26)
                    + pad(String(decoding: value, as: UTF8.self), 10) + pad(displaySafe(s.unit.string ?? ""), 10)
                    + pad(displaySafe(who), 28) + displaySafe(s.metadata.string ?? "") + "\n").utf8)
        }
        out.write(bytes: line)
    }

    func finish() {
        if format == .json { out.write(count == 0 ? "]\n" : "\n]\n") }
        out.flush()
    }

    private func valueText(_ v: SampleValue) -> String {
        switch v {
        case .absent: ""
        default: v.description
        }
    }
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
