#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The attributes a `Record` may carry, found in one pass over its tag: an export holds records
/// by the hundred thousand, and looking up its nine names one by one (`rawAttribute`) was 13% of
/// the thread building samples (~1,800 instructions a record).
///
/// Each is the raw bytes of the first attribute of that name (entities not decoded), as
/// ``HealthXMLScanner/Element/rawAttribute(_:)`` finds it; nil when the record has none.
struct RecordAttributes {
    var type: UnsafeRawBufferPointer?
    var sourceName: UnsafeRawBufferPointer?
    var sourceVersion: UnsafeRawBufferPointer?
    var device: UnsafeRawBufferPointer?
    var unit: UnsafeRawBufferPointer?
    var creationDate: UnsafeRawBufferPointer?
    var startDate: UnsafeRawBufferPointer?
    var endDate: UnsafeRawBufferPointer?
    var value: UnsafeRawBufferPointer?

    init(_ e: HealthXMLScanner.Element) {
        for (name, value) in e.ranges {
            let bytes = UnsafeRawBufferPointer(rebasing: e.bytes[value])
            // The names differ in length but for `type` and `unit`, so the length picks the one
            // name to compare with.
            switch name.count {
            case 4:
                if Self.matches(name, "type", in: e) {
                    Self.keepFirst(&type, bytes)
                } else if Self.matches(name, "unit", in: e) {
                    Self.keepFirst(&unit, bytes)
                }
            case 5: if Self.matches(name, "value", in: e) { Self.keepFirst(&self.value, bytes) }
            case 6: if Self.matches(name, "device", in: e) { Self.keepFirst(&device, bytes) }
            case 7: if Self.matches(name, "endDate", in: e) { Self.keepFirst(&endDate, bytes) }
            case 9: if Self.matches(name, "startDate", in: e) { Self.keepFirst(&startDate, bytes) }
            case 10: if Self.matches(name, "sourceName", in: e) { Self.keepFirst(&sourceName, bytes) }
            case 12: if Self.matches(name, "creationDate", in: e) { Self.keepFirst(&creationDate, bytes) }
            case 13: if Self.matches(name, "sourceVersion", in: e) { Self.keepFirst(&sourceVersion, bytes) }
            default: break
            }
        }
    }

    private static func keepFirst(_ slot: inout UnsafeRawBufferPointer?, _ bytes: UnsafeRawBufferPointer) {
        if slot == nil { slot = bytes }
    }

    /// Whether the name at `range` is `name` (whose length the caller has checked).
    @inline(__always)
    private static func matches(_ range: Range<Int>, _ name: StaticString, in e: HealthXMLScanner.Element) -> Bool {
        memcmp(e.bytes.baseAddress! + range.lowerBound, name.utf8Start, name.utf8CodeUnitCount) == 0
    }
}
