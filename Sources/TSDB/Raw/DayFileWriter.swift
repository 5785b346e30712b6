/// Writes samples as day-file JSON (Formats/raw-json-v1.md), or one sample object per line.
public enum DayFileWriter {
    /// One sample as a JSON object, keys in the seed's order, absent fields left out.
    public static func appendSample(_ s: Sample, to out: inout [UInt8]) {
        var w = ByteWriter()
        w.append(Array("{\"type\":".utf8))
        JSONScanner.writeString(s.type.utf8, into: &w)
        out.append(contentsOf: w.bytes)
        out.append(contentsOf: ",\"start\":\"".utf8)
        ISO8601.append(s.start.microseconds, s.start.form, to: &out)
        out.append(contentsOf: "\",\"end\":\"".utf8)
        ISO8601.append(s.end.microseconds, s.end.form, to: &out)
        out.append(UInt8(ascii: "\""))
        switch s.value {
        case .absent: break
        case .null: out.append(contentsOf: ",\"value\":null".utf8)
        case .decimal, .numberText: out.append(contentsOf: ",\"value\":\(s.value.description)".utf8)
        }
        for (key, field) in [("unit", s.unit), ("source", s.source), ("device", s.device)] {
            switch field {
            case .absent: continue
            case .null: out.append(contentsOf: ",\"\(key)\":null".utf8)
            case .text(let t):
                var w = ByteWriter()
                JSONScanner.writeString(t.utf8, into: &w)
                out.append(contentsOf: ",\"\(key)\":".utf8)
                out.append(contentsOf: w.bytes)
            }
        }
        switch s.metadata {
        case .absent: break
        case .null: out.append(contentsOf: ",\"metadata\":null".utf8)
        case .text(let t): out.append(contentsOf: ",\"metadata\":\(t)".utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A whole day file: `date`, optional `exported_at` and `device_info`, then one sample per line.
    public static func dayFile(date: String, exportedAt: String? = nil, deviceInfo: [(String, String)] = [], samples: [Sample]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(samples.count * 260 + 256)
        out.append(contentsOf: "{\n  \"date\": \"\(date)\",\n".utf8)
        if let exportedAt { out.append(contentsOf: "  \"exported_at\": \"\(exportedAt)\",\n".utf8) }
        if !deviceInfo.isEmpty {
            var w = ByteWriter()
            w.u8(UInt8(ascii: "{"))
            for (i, (k, v)) in deviceInfo.enumerated() {
                if i > 0 { w.u8(UInt8(ascii: ",")) }
                JSONScanner.writeString(k.utf8, into: &w)
                w.u8(UInt8(ascii: ":"))
                JSONScanner.writeString(v.utf8, into: &w)
            }
            w.u8(UInt8(ascii: "}"))
            out.append(contentsOf: "  \"device_info\": ".utf8)
            out.append(contentsOf: w.bytes)
            out.append(contentsOf: ",\n".utf8)
        }
        out.append(contentsOf: "  \"samples\": [".utf8)
        for (i, s) in samples.enumerated() {
            out.append(contentsOf: i == 0 ? "\n    ".utf8 : ",\n    ".utf8)
            appendSample(s, to: &out)
        }
        out.append(contentsOf: (samples.isEmpty ? "]\n}\n" : "\n  ]\n}\n").utf8)
        return out
    }

    /// The local calendar date (`YYYY-MM-DD`) of a timestamp in its own UTC offset.
    public static func localDate(_ t: Timestamp) -> String {
        let local = t.microseconds + Int64(t.form.offsetMinutes) * 60_000_000
        let (y, m, d) = ISO8601.civil(ISO8601.floorDivide(local, ISO8601.microsPerDay).0)
        return monthKey(year: y, month: m) + "-" + (d < 10 ? "0" : "") + String(d)
    }
}
