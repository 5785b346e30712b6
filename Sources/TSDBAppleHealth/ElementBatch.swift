import Dispatch
import TSDB

/// Scanned elements copied out of the scanner's buffer, so that one thread can inflate and scan
/// the XML while another builds samples from it (``ExportReader/streamBatches``).
struct ElementBatch: Sendable {
    /// The tags' bytes, one after another.
    private var bytes: [UInt8] = []
    private var ranges: [(name: Range<Int>, value: Range<Int>)] = []
    private var entries: [Entry] = []
    /// How far into the XML the scanner was when the batch was full (bytes done, total).
    var progress = (done: 0, total: 0)

    private struct Entry {
        var kind: HealthXMLScanner.Kind
        var tag: Range<Int>
        var name: Range<Int>
        var attributes: Range<Int>
        var line: Int
        var offset: Int
    }

    /// Tags of about this many bytes make a batch: big enough that handing over is rare, small
    /// enough that a few waiting stay in the processor's cache.
    static let capacity = 256 << 10

    var isFull: Bool { bytes.count >= Self.capacity }
    var isEmpty: Bool { entries.isEmpty }

    init() {
        bytes.reserveCapacity(Self.capacity + 4096)
    }

    mutating func append(_ e: HealthXMLScanner.Element) {
        let tag = bytes.count..<bytes.count + e.bytes.count
        bytes.append(contentsOf: e.bytes)
        let attributes = ranges.count..<ranges.count + e.ranges.count
        ranges.append(contentsOf: e.ranges)
        entries.append(
            Entry(kind: e.kind, tag: tag, name: e.nameRange, attributes: attributes, line: e.line, offset: e.offset))
    }

    /// Hands each element to `body` as the scanner did, viewing this batch's bytes.
    func withElements(_ body: (HealthXMLScanner.Element) throws(TSDBError) -> Void) throws(TSDBError) {
        let result: Result<Void, TSDBError> = bytes.withUnsafeBytes { b in
            ranges.withUnsafeBufferPointer { r in
                do throws(TSDBError) {
                    for entry in entries {
                        try body(
                            HealthXMLScanner.Element(
                                kind: entry.kind, bytes: UnsafeRawBufferPointer(rebasing: b[entry.tag]),
                                nameRange: entry.name, ranges: UnsafeBufferPointer(rebasing: r[entry.attributes]),
                                line: entry.line, offset: entry.offset))
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
        }
        try result.get()
    }
}

extension ExportReader {
    /// Streams the `<HealthData>` document of `path` to `body` in batches, inflated and scanned on
    /// a thread of its own, at most a few batches ahead. Returns once that thread has stopped.
    static func streamBatches(
        _ path: String, _ body: (ElementBatch) throws(TSDBError) -> Void
    ) throws(TSDBError) {
        let pipe = BoundedPipe<ElementBatch>(capacity: 4)
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            defer { stopped.signal() }
            var inventory = ExportInventory(source: path)
            var batch = ElementBatch()
            var progress = (done: 0, total: 0)
            do throws(TSDBError) {
                try stream(path, into: &inventory, progress: { progress = ($0, $1) }) { (e, _) throws(TSDBError) in
                    batch.append(e)
                    guard batch.isFull else { return }
                    batch.progress = progress
                    try pipe.put(batch)
                    batch = ElementBatch()
                }
                batch.progress = progress
                if !batch.isEmpty { try pipe.put(batch) }
                pipe.finish(nil)
            } catch {
                pipe.finish(error)
            }
        }
        defer { stopped.wait() }
        do throws(TSDBError) {
            while let batch = try pipe.take() { try body(batch) }
        } catch {
            pipe.cancel()
            throw error
        }
    }
}
