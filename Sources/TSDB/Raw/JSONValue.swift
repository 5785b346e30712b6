/// A parsed JSON document, for small auxiliary files such as `types.json` (the day files are
/// never materialised this way).
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var object: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Parses a complete JSON text with the engine's validating scanner.
    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(TSDBError) -> JSONValue {
        var s = JSONScanner(bytes)
        do throws(JSONScanner.Failure) {
            let v = try value(&s, depth: 0)
            s.skipWhitespace()
            guard s.atEnd else { throw s.fail("unexpected content after the JSON value") }
            return v
        } catch {
            throw TSDBError.invalidInput(
                error.message, path: path, offset: error.offset, line: s.line(of: error.offset))
        }
    }

    private static func value(_ s: inout JSONScanner, depth: Int) throws(JSONScanner.Failure) -> JSONValue {
        s.skipWhitespace()
        guard depth < JSONScanner.maxDepth else { throw s.fail("nesting deeper than \(JSONScanner.maxDepth) levels") }
        switch s.peek() {
        case UInt8(ascii: "{"):
            s.position += 1
            var o: [String: JSONValue] = [:]
            if !s.consume(UInt8(ascii: "}")) {
                repeat {
                    s.skipWhitespace()
                    let at = s.position
                    let key = s.text(try s.string("object key"))
                    try s.expect(UInt8(ascii: ":"), "':'")
                    guard o[key] == nil else { throw s.fail("duplicate key \"\(key)\"", at: at) }
                    o[key] = try value(&s, depth: depth + 1)
                } while s.consume(UInt8(ascii: ","))
                try s.expect(UInt8(ascii: "}"), "',' or '}'")
            }
            return .object(o)
        case UInt8(ascii: "["):
            s.position += 1
            var a: [JSONValue] = []
            if !s.consume(UInt8(ascii: "]")) {
                repeat { a.append(try value(&s, depth: depth + 1)) } while s.consume(UInt8(ascii: ","))
                try s.expect(UInt8(ascii: "]"), "',' or ']'")
            }
            return .array(a)
        case UInt8(ascii: "\""): return .string(s.text(try s.string("string")))
        case UInt8(ascii: "t"):
            try s.literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try s.literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try s.literal("null")
            return .null
        default:
            let r = try s.number()
            return .number(String(decoding: UnsafeRawBufferPointer(rebasing: s.bytes[r]), as: UTF8.self))
        }
    }
}
