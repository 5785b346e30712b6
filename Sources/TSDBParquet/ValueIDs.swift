/// A value column's dictionary ids by (value tag, mantissa), looked up once per row: open
/// addressing with linear probing over a multiplicative hash. Swift's `Dictionary` hashes every
/// key with SipHash: ~300 instructions a row of the year's Parquet export (callgrind).
struct ValueIDs {
    private var tags: [Int64]
    private var mantissas: [Int64]
    /// The id at each slot; `empty` where no key is.
    private var ids: [Int32]
    private var shift: UInt64
    private(set) var count = 0

    private static let empty = Int32.min
    /// log2 of the first table's slots.
    private static let initialBits = 8

    init() {
        let slots = 1 << Self.initialBits
        tags = [Int64](repeating: 0, count: slots)
        mantissas = [Int64](repeating: 0, count: slots)
        ids = [Int32](repeating: Self.empty, count: slots)
        shift = UInt64(64 - Self.initialBits)
    }

    /// The id of `(tag, mantissa)`, nil if none was given. Ids must not be `Int32.min`.
    subscript(tag: Int64, mantissa: Int64) -> Int32? {
        get {
            let slot = find(tag, mantissa)
            return ids[slot] == Self.empty ? nil : ids[slot]
        }
        set {
            guard let id = newValue else { preconditionFailure("ids are only added") }
            precondition(id != Self.empty, "Int32.min marks an empty slot")
            var slot = find(tag, mantissa)
            if ids[slot] == Self.empty {
                // At most half full, so a probe always ends at an empty slot.
                if (count + 1) * 2 > ids.count {
                    grow()
                    slot = find(tag, mantissa)
                }
                count += 1
                (tags[slot], mantissas[slot]) = (tag, mantissa)
            }
            ids[slot] = id
        }
    }

    /// The slot holding `(tag, mantissa)`, or the empty slot where it would go.
    private func find(_ tag: Int64, _ mantissa: Int64) -> Int {
        let mixed = (UInt64(bitPattern: mantissa) ^ UInt64(bitPattern: tag) &<< 56) &* 0x9E37_79B9_7F4A_7C15
        let mask = ids.count - 1
        var slot = Int(truncatingIfNeeded: mixed >> shift)
        while ids[slot] != Self.empty && (tags[slot] != tag || mantissas[slot] != mantissa) {
            slot = (slot + 1) & mask
        }
        return slot
    }

    private mutating func grow() {
        let old = (tags: tags, mantissas: mantissas, ids: ids)
        let slots = ids.count * 2
        tags = [Int64](repeating: 0, count: slots)
        mantissas = [Int64](repeating: 0, count: slots)
        ids = [Int32](repeating: Self.empty, count: slots)
        shift -= 1
        for i in old.ids.indices where old.ids[i] != Self.empty {
            let slot = find(old.tags[i], old.mantissas[i])
            (tags[slot], mantissas[slot], ids[slot]) = (old.tags[i], old.mantissas[i], old.ids[i])
        }
    }
}
