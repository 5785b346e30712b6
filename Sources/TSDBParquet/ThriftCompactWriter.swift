import TSDB

/// Writes Apache Thrift's compact protocol, the encoding of every Parquet metadata structure
/// (Formats/parquet-v1.md §3): field headers carry the field-id delta and type in one byte,
/// integers are zigzag varints, strings are a varint length and the bytes.
struct ThriftCompactWriter {
    /// Compact-protocol type ids (§3.1).
    enum FieldType: UInt8 {
        case boolTrue = 1
        case boolFalse = 2
        case byte = 3
        case i16 = 4
        case i32 = 5
        case i64 = 6
        case double = 7
        case binary = 8
        case list = 9
        case set = 10
        case map = 11
        case structure = 12
    }

    private var out = ByteWriter()
    var bytes: [UInt8] { out.bytes }
    /// The last field id written in each open struct: headers hold the delta from it.
    private var lastFieldIDs: [Int16] = [0]

    init() {}

    mutating func writeVarint(_ value: UInt64) { out.uvarint(value) }

    mutating func writeZigzag(_ value: Int64) { out.varint(value) }

    mutating func fieldHeader(_ id: Int16, _ type: FieldType) {
        let delta = Int(id) - Int(lastFieldIDs[lastFieldIDs.count - 1])
        if delta > 0 && delta <= 15 {
            out.u8(UInt8(delta) << 4 | type.rawValue)
        } else {
            out.u8(type.rawValue)
            writeZigzag(Int64(id))
        }
        lastFieldIDs[lastFieldIDs.count - 1] = id
    }

    mutating func field(_ id: Int16, i32 value: Int32) {
        fieldHeader(id, .i32)
        writeZigzag(Int64(value))
    }

    mutating func field(_ id: Int16, i64 value: Int64) {
        fieldHeader(id, .i64)
        writeZigzag(value)
    }

    mutating func field(_ id: Int16, byte value: Int8) {
        fieldHeader(id, .byte)
        out.u8(UInt8(bitPattern: value))
    }

    /// Booleans live in the field header's type nibble.
    mutating func field(_ id: Int16, bool value: Bool) {
        fieldHeader(id, value ? .boolTrue : .boolFalse)
    }

    mutating func field(_ id: Int16, binary value: [UInt8]) {
        fieldHeader(id, .binary)
        writeBinary(value)
    }

    mutating func field(_ id: Int16, string value: String) {
        field(id, binary: Array(value.utf8))
    }

    /// A struct-valued field: `body` writes the nested struct's fields.
    mutating func field(_ id: Int16, struct body: (inout ThriftCompactWriter) -> Void) {
        fieldHeader(id, .structure)
        writeStruct(body)
    }

    /// A list field: the element type, then `body` writes `count` elements (nested structs
    /// through ``writeStruct(_:)``, integers through ``writeZigzag(_:)``).
    mutating func field(
        _ id: Int16, listOf element: FieldType, count: Int, _ body: (inout ThriftCompactWriter) -> Void
    ) {
        fieldHeader(id, .list)
        if count < 15 {
            out.u8(UInt8(count) << 4 | element.rawValue)
        } else {
            out.u8(0xF0 | element.rawValue)
            writeVarint(UInt64(count))
        }
        body(&self)
    }

    /// A struct's fields and its stop byte.
    mutating func writeStruct(_ body: (inout ThriftCompactWriter) -> Void) {
        lastFieldIDs.append(0)
        body(&self)
        out.u8(0)  // stop
        lastFieldIDs.removeLast()
    }

    mutating func writeBinary(_ value: [UInt8]) {
        out.uvarint(UInt64(value.count))
        out.append(value)
    }
}
