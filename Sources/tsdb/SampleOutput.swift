import TSDB

enum OutputFormat: String, CaseIterable {
    case table, csv, json, ndjson
}

/// Streams samples to stdout in one of the output formats.
struct SampleWriter {
    let format: OutputFormat
    let out = OutputBuffer()
    private var count = 0

    init(format: OutputFormat) {
        self.format = format
        switch format {
        case .csv: out.write("type,start,end,value,unit,source,device,metadata\n")
        case .json: out.write("[")
        case .table: out.write(pad("start", 26) + pad("end", 26) + pad("value", 10) + pad("unit", 10) + pad("source / device", 28) + "metadata\n")
        case .ndjson: break
        }
    }

    mutating func write(_ s: Sample) {
        count += 1
        switch format {
        case .ndjson:
            var b: [UInt8] = []
            DayFileWriter.appendSample(s, to: &b)
            b.append(0x0A)
            out.write(bytes: b)
        case .json:
            var b: [UInt8] = Array((count == 1 ? "\n  " : ",\n  ").utf8)
            DayFileWriter.appendSample(s, to: &b)
            out.write(bytes: b)
        case .csv:
            let fields = [s.type, s.start.description, s.end.description, valueText(s.value), s.unit.string ?? "",
                          s.source.string ?? "", s.device.string ?? "", s.metadata.string ?? ""]
            out.write(fields.map(csvField).joined(separator: ",") + "\n")
        case .table:
            let who = [s.source.string, s.device.string].compactMap { $0 }.joined(separator: " / ")
            out.write(pad(s.start.description, 26) + pad(s.end == s.start ? "" : s.end.description, 26)
                      + pad(valueText(s.value), 10) + pad(s.unit.string ?? "", 10) + pad(shorten(who, 26), 28) + (s.metadata.string ?? "") + "\n")
        }
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

func shorten(_ s: String, _ width: Int) -> String {
    s.count <= width ? s : String(s.prefix(width - 1)) + "…"
}

func csvField(_ s: String) -> String {
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
    return "\"" + s.replacingAll("\"", with: "\"\"") + "\""
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
