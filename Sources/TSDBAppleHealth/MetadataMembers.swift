import TSDB

/// A sample's metadata members while its element is read: keys and values as bytes in one
/// buffer, reused from record to record, written as canonical JSON (Formats/segment-v3.md §4.1).
/// Records are read by the million, and a `String` per member made allocation and reference
/// counting most of the cost of building them.
struct MetadataMembers {
    private var bytes: [UInt8] = []
    /// Each member's key and value in `bytes`; the value is JSON already, or a string's content.
    private var members: [(key: Range<Int>, value: Range<Int>, isJSON: Bool)] = []

    var isEmpty: Bool { members.isEmpty }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        members.removeAll(keepingCapacity: true)
    }

    /// A string member whose value is an attribute's bytes as written in the XML (entities are decoded).
    mutating func append(_ key: StaticString, xmlValue raw: UnsafeRawBufferPointer) {
        let k = appendKey(key)
        members.append((k, appendDecoded(raw), false))
    }

    /// A string member whose key and value are both an attribute's bytes as written in the XML.
    mutating func append(xmlKey: UnsafeRawBufferPointer, xmlValue: UnsafeRawBufferPointer) {
        let k = appendDecoded(xmlKey)
        members.append((k, appendDecoded(xmlValue), false))
    }

    mutating func append(_ key: String, string value: String) {
        let k = append(key.utf8)
        members.append((k, append(value.utf8), false))
    }

    /// A member whose value is JSON text (a number as written, an array of nested elements).
    mutating func append(_ key: String, json value: [UInt8]) {
        let k = append(key.utf8)
        members.append((k, append(value), true))
    }

    private mutating func appendKey(_ key: StaticString) -> Range<Int> {
        append(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }

    private mutating func append<S: Sequence<UInt8>>(_ s: S) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: s)
        return start..<bytes.count
    }

    /// Decodes entities, then repairs invalid UTF-8 as `String(decoding:)` does, so the stored
    /// text is the same as a `String` would have given.
    private mutating func appendDecoded(_ raw: UnsafeRawBufferPointer) -> Range<Int> {
        let start = bytes.count
        HealthXMLScanner.decode(raw, into: &bytes)
        if bytes[start...].contains(where: { $0 >= 0x80 }) {
            let repaired = String(decoding: bytes[start...], as: UTF8.self)
            bytes.removeSubrange(start...)
            bytes.append(contentsOf: repaired.utf8)
        }
        return start..<bytes.count
    }

    /// Keys are the same as `String`s are: canonically equivalent texts (`é` and `e` + U+0301) are
    /// one key, as `JSONText` and the day files' metadata take them.
    private static func sameKey(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        if a.elementsEqual(b) { return true }
        guard a.contains(where: { $0 >= 0x80 }) || b.contains(where: { $0 >= 0x80 }) else { return false }
        return String(decoding: a, as: UTF8.self) == String(decoding: b, as: UTF8.self)
    }

    /// Canonical JSON: keys in the order of their UTF-8 bytes, a repeated key's first member
    /// kept (``sameKey(_:_:)``), strings escaped (§4.1).
    func writeJSON(into out: inout [UInt8]) {
        bytes.withUnsafeBytes { b in
            func key(_ i: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: b[members[i].key]) }
            out.append(UInt8(ascii: "{"))
            var previous: Int?
            JSONText.inStableOrder(members.count, { key($0).lexicographicallyPrecedes(key($1)) }) { i in
                if let previous {
                    if Self.sameKey(key(i), key(previous)) { return }
                    out.append(UInt8(ascii: ","))
                }
                previous = i
                DayFileWriter.appendJSONString(utf8: key(i), to: &out)
                out.append(UInt8(ascii: ":"))
                let value = UnsafeRawBufferPointer(rebasing: b[members[i].value])
                if members[i].isJSON {
                    out.append(contentsOf: value)
                } else {
                    DayFileWriter.appendJSONString(utf8: value, to: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
