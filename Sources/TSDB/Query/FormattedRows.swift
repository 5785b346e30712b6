/// The rows of ``Store/aggregate(_:from:to:options:header:write:)`` formatted into bytes on the
/// calling thread, by a formatter whose type is opened once. Kept in variables the row closure
/// captured, the formatter (an existential in a box) and the bytes cost each row a box uniqueness
/// check and run-time exclusivity checks: ~180 instructions, 11% of a year of minute buckets as
/// CSV (callgrind). Here both sit behind pointers that only this object reaches.
final class FormattedRows<Formatter: AggregateRowFormatter>: RowBytesSink {
    private let formatter: UnsafeMutablePointer<Formatter>
    private let pending: UnsafeMutablePointer<[UInt8]>
    private let write: ([UInt8]) -> Void
    /// Bytes held before they are written.
    private static var chunk: Int { 1 << 16 }

    init(_ formatter: Formatter, write: @escaping ([UInt8]) -> Void) {
        self.formatter = .allocate(capacity: 1)
        self.formatter.initialize(to: formatter)
        pending = .allocate(capacity: 1)
        pending.initialize(to: [])
        pending.pointee.reserveCapacity(Self.chunk)
        self.write = write
    }

    deinit {
        formatter.deinitialize(count: 1)
        formatter.deallocate()
        pending.deinitialize(count: 1)
        pending.deallocate()
    }

    var copyOfFormatter: any AggregateRowFormatter { formatter.pointee }

    func append(_ row: AggregateRow) {
        formatter.pointee.append(row, to: &pending.pointee)
        if pending.pointee.count >= Self.chunk { flush() }
    }

    func flush() {
        guard !pending.pointee.isEmpty else { return }
        write(pending.pointee)
        pending.pointee.removeAll(keepingCapacity: true)
    }
}

/// ``FormattedRows`` of any formatter.
protocol RowBytesSink: AnyObject {
    /// A copy of the formatter, for another thread's rows.
    var copyOfFormatter: any AggregateRowFormatter { get }
    func append(_ row: AggregateRow)
    /// Writes the bytes held.
    func flush()
}

extension AggregateRowFormatter {
    /// Rows formatted by this formatter, opened as its own type.
    func sink(write: @escaping ([UInt8]) -> Void) -> any RowBytesSink { FormattedRows(self, write: write) }
}
