import TSDB

/// A sample's metadata members while its element is read: keys and values as bytes in one
/// buffer, reused from record to record, written as canonical JSON (Formats/segment-v3.md §4.1).
/// Records are read by the million, and a `String` per member made allocation and reference
/// counting most of the cost of building them.
struct MetadataMembers {
    private var bytes: [UInt8] = []
    /// Each member's key and value in `bytes`; the value is JSON already, or a string's content.
    /// Whether the key is ASCII is kept for ``sameKey(_:_:in:)``, which asks it of every adjacent pair.
    private var members: [(key: Range<Int>, value: Range<Int>, isJSON: Bool, keyIsASCII: Bool)] = []

    var isEmpty: Bool { members.isEmpty }

    /// Costs nothing when already empty: a record's members are emptied when it closes and again
    /// when the next one starts, and emptying the two arrays in place was ~150 instructions even then.
    mutating func removeAll() {
        guard !(members.isEmpty && bytes.isEmpty) else { return }
        bytes.removeAll(keepingCapacity: true)
        members.removeAll(keepingCapacity: true)
    }

    /// A string member whose value is an attribute's bytes as written in the XML (entities are decoded).
    mutating func append(_ key: StaticString, xmlValue raw: UnsafeRawBufferPointer) {
        let k = appendKey(key)
        members.append((k, appendDecoded(raw).range, false, key.isASCII))
    }

    /// A string member whose key and value are both an attribute's bytes as written in the XML.
    mutating func append(xmlKey: UnsafeRawBufferPointer, xmlValue: UnsafeRawBufferPointer) {
        let k = appendDecoded(xmlKey)
        members.append((k.range, appendDecoded(xmlValue).range, false, k.isASCII))
    }

    mutating func append(_ key: String, string value: String) {
        let k = append(key.utf8)
        members.append((k, append(value.utf8), false, isASCII(k)))
    }

    /// A member whose value is JSON text (a number as written, an array of nested elements).
    mutating func append(_ key: String, json value: [UInt8]) {
        let k = append(key.utf8)
        members.append((k, append(value), true, isASCII(k)))
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
    private mutating func appendDecoded(_ raw: UnsafeRawBufferPointer) -> (range: Range<Int>, isASCII: Bool) {
        let start = bytes.count
        HealthXMLScanner.decode(raw, into: &bytes)
        if isASCII(start..<bytes.count) { return (start..<bytes.count, true) }
        let repaired = String(decoding: bytes[start...], as: UTF8.self)
        bytes.removeSubrange(start...)
        bytes.append(contentsOf: repaired.utf8)
        return (start..<bytes.count, false)
    }

    private func isASCII(_ range: Range<Int>) -> Bool {
        bytes.withUnsafeBytes { ByteReader.isASCII(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Keys are the same as `String`s are: canonically equivalent texts (`é` and `e` + U+0301) are
    /// one key, as `JSONText` and the day files' metadata take them.
    /// Two ASCII keys are the same only byte for byte (but `K` is the same as KELVIN SIGN).
    private func sameKey(_ i: Int, _ j: Int, in b: UnsafeRawBufferPointer) -> Bool {
        let x = UnsafeRawBufferPointer(rebasing: b[members[i].key])
        let y = UnsafeRawBufferPointer(rebasing: b[members[j].key])
        if x.count == y.count && x.elementsEqual(y) { return true }
        guard !members[i].keyIsASCII || !members[j].keyIsASCII else { return false }
        return String(decoding: x, as: UTF8.self) == String(decoding: y, as: UTF8.self)
    }

    /// Canonical JSON: keys in the order of their UTF-8 bytes, a repeated key's first member
    /// kept (``sameKey(_:_:in:)``), strings escaped (§4.1). Written in place, in room for the worst
    /// case (every byte escaped): appended piece by piece, the pieces' calls were a quarter of
    /// building a record.
    func writeJSON(into out: inout [UInt8]) {
        var room = 2
        for m in members { room += 6 * (m.key.count + m.value.count) + 6 }
        bytes.withUnsafeBytes { b in
            func key(_ i: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: b[members[i].key]) }
            RowBytes.append(to: &out, capacity: room) { row in
                row.byte(UInt8(ascii: "{"))
                var previous: Int?
                JSONText.inStableOrder(members.count, { key($0).lexicographicallyPrecedes(key($1)) }) { i in
                    if let previous {
                        if sameKey(i, previous, in: b) { return }
                        row.byte(UInt8(ascii: ","))
                    }
                    previous = i
                    DayFileWriter.writeJSONString(utf8: key(i), to: &row)
                    row.byte(UInt8(ascii: ":"))
                    let value = UnsafeRawBufferPointer(rebasing: b[members[i].value])
                    if members[i].isJSON {
                        row.write(value)
                    } else {
                        DayFileWriter.writeJSONString(utf8: value, to: &row)
                    }
                }
                row.byte(UInt8(ascii: "}"))
            }
        }
    }
}
