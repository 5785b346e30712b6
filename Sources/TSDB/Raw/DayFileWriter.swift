/// Writes samples as day-file JSON (Formats/raw-json-v1.md), or one sample object per line.
public enum DayFileWriter {
    /// One sample as a JSON object, keys in the seed's order, absent fields left out.
    public static func appendSample(_ s: Sample, to out: inout [UInt8]) {
        out.append(contentsOf: "{\"type\":".utf8)
        appendJSONString(s.type, to: &out)
        out.append(contentsOf: ",\"start\":\"".utf8)
        ISO8601.append(s.start.microseconds, s.start.form, to: &out)
        out.append(contentsOf: "\",\"end\":\"".utf8)
        ISO8601.append(s.end.microseconds, s.end.form, to: &out)
        out.append(UInt8(ascii: "\""))
        switch s.value {
        case .absent: break
        case .null: out.append(contentsOf: ",\"value\":null".utf8)
        case .decimal, .numberText:
            out.append(contentsOf: ",\"value\":".utf8)
            appendValue(s.value, to: &out)
        }
        for (key, field) in [("unit", s.unit), ("source", s.source), ("device", s.device)] {
            switch field {
            case .absent: continue
            case .null: out.append(contentsOf: ",\"\(key)\":null".utf8)
            case .text(let t):
                out.append(contentsOf: ",\"\(key)\":".utf8)
                appendJSONString(t, to: &out)
            }
        }
        switch s.metadata {
        case .absent: break
        case .null: out.append(contentsOf: ",\"metadata\":null".utf8)
        case .text(let t): out.append(contentsOf: ",\"metadata\":\(t)".utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON string literal; plain ASCII text (the common case) is copied without escaping work.
    public static func appendJSONString(_ s: String, to out: inout [UInt8]) {
        var text = s
        text.withUTF8 { appendJSONString(utf8: UnsafeRawBufferPointer($0), to: &out) }
    }

    /// Whether `bytes` go into a JSON string as they are: no control character, quote or backslash.
    /// Eight bytes a step: metadata texts are tested by the million on import (a byte at a time,
    /// ~5 instructions a byte).
    package static func needsNoEscaping(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i + 8 <= bytes.count {
            if mayNeedEscaping(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return false }
            i += 8
        }
        if i < bytes.count && bytes.count >= 8 {  // the last word again, overlapping: no byte loop
            return !mayNeedEscaping(bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
        }
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return false }
            i += 1
        }
        return true
    }

    /// Whether any of the eight bytes of `w` is below 0x20, a quote or a backslash. The classic
    /// tests, exact as a yes or no: `(x - 0x01…) & ~x & 0x80…` is nonzero iff a byte of `x` is zero,
    /// and with `0x20…` subtracted, iff a byte is below 0x20.
    @inline(__always)
    static func mayNeedEscaping(_ w: UInt64) -> Bool { escapingFlags(w) != 0 }

    /// Nonzero when ``mayNeedEscaping(_:)``: the tests' high bits, so flags of words can be or-ed.
    @inline(__always)
    static func escapingFlags(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let below20 = (w &- ones &* 0x20) & ~w & highs
        return below20 | hasZero(w ^ (ones &* 0x22)) | hasZero(w ^ (ones &* 0x5C))
    }

    /// ``appendJSONString(utf8:to:)`` into a row with room for the worst case, `6 * bytes.count + 2`.
    package static func writeJSONString(utf8 bytes: UnsafeRawBufferPointer, to row: inout RowBytes) {
        if bytes.count >= 8 {
            if copiedWithoutEscaping(bytes, to: &row) { return }
        } else if needsNoEscaping(bytes) {
            row.byte(0x22)
            row.write(bytes)
            row.byte(0x22)
            return
        }
        var escaped: [UInt8] = []
        appendJSONString(utf8: bytes, to: &escaped)
        escaped.withUnsafeBytes { row.write($0) }
    }

    /// Writes `bytes` (at least eight) quoted, testing each word as it is copied: one pass, where a
    /// test and then a copy were two (~170 instructions a metadata string). False, with nothing
    /// written, when a byte needs escaping.
    private static func copiedWithoutEscaping(_ bytes: UnsafeRawBufferPointer, to row: inout RowBytes) -> Bool {
        let n = bytes.count
        let out = UnsafeMutableRawPointer(row.claim(n + 2))
        out.storeBytes(of: 0x22, as: UInt8.self)
        var flags: UInt64 = 0
        var i = 0
        while i + 8 <= n {
            let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            flags |= escapingFlags(word)
            out.storeBytes(of: word, toByteOffset: 1 + i, as: UInt64.self)
            i += 8
        }
        if i < n {  // the last word again, overlapping: no byte loop
            let word = bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            flags |= escapingFlags(word)
            out.storeBytes(of: word, toByteOffset: 1 + n - 8, as: UInt64.self)
        }
        out.storeBytes(of: 0x22, toByteOffset: 1 + n, as: UInt8.self)
        if flags == 0 { return true }
        row.unclaim(n + 2)
        return false
    }

    /// ``appendJSONString(_:to:)`` for text already in UTF-8 bytes.
    package static func appendJSONString(utf8 bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        if needsNoEscaping(bytes) {
            out.append(0x22)
            out.append(contentsOf: bytes)
            out.append(0x22)
            return
        }
        var w = ByteWriter()
        JSONScanner.writeString(bytes, into: &w)
        out.append(contentsOf: w.bytes)
    }

    /// A whole day file: `date`, optional `exported_at` and `device_info`, then one sample per line.
    public static func dayFile(
        date: String, exportedAt: String? = nil, deviceInfo: [(String, String)] = [], samples: [Sample]
    ) -> [UInt8] {
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

extension DayFileWriter {
    public static let csvHeader = "type,start,end,value,unit,source,device,metadata\n"

    /// A value's JSON number text (nothing for null or absent).
    public static func appendValue(_ v: SampleValue, to out: inout [UInt8]) {
        switch v {
        case .absent, .null: break
        case .numberText(let t): out.append(contentsOf: t.utf8)
        case .decimal(let d):
            if d.scale == 0 {
                appendInteger(d.mantissa, to: &out)
            } else {
                out.append(contentsOf: d.description.utf8)
            }
        }
    }

    static func appendInteger(_ v: Int64, to out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var m = v.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            repeat {
                buf[23 - n] = UInt8(48 + m % 10)
                m /= 10
                n += 1
            } while m > 0
            out.append(contentsOf: buf[(24 - n)...])
        }
    }

    public static func appendCSVField(_ s: String, to out: inout [UInt8]) {
        let needsQuotes = s.utf8.contains {
            $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D
        }
        guard needsQuotes else {
            out.append(contentsOf: s.utf8)
            return
        }
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }
}
