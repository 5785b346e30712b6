import TSDB

/// A JSON value written as text: the API's answers are small and flat, so a tiny writer does.
indirect enum JSONText {
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null
    case array([JSONText])
    case object([(String, JSONText)])

    var text: String {
        var out: [UInt8] = []
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .string(let s): DayFileWriter.appendJSONString(s, to: &out)
        case .number(let v):
            // JSON has no NaN or infinity; integers print without a fraction, like the CLI.
            if !v.isFinite {
                out += Array("null".utf8)
            } else if v == v.rounded() && abs(v) < 1e15 {
                out += Array(String(Int64(v)).utf8)
            } else {
                out += Array(String(v).utf8)
            }
        case .integer(let n): out += Array(String(n).utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (k, (key, value)) in fields.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                DayFileWriter.appendJSONString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func optional(_ v: Double?) -> JSONText { v.map(JSONText.number) ?? .null }
    static func optional(_ s: String?) -> JSONText { s.map(JSONText.string) ?? .null }
}
