/// Entry points for the package-benchmark suite (`@_spi(Benchmarks) import TSDB`): the internal
/// stages measured on their own. Not API.
@_spi(Benchmarks)
public enum BenchmarkHooks {
    /// Parses a day file as the compactor does; returns the number of samples.
    public static func parseDayFile(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        try DayFileParser.parse(bytes).samples.count
    }

    /// Encodes `values` as one integer column (segment-v3 §5.1); returns the bytes.
    public static func encodeColumn(_ values: [Int64]) -> [UInt8] {
        var w = ByteWriter()
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        return w.bytes + [UInt8](repeating: 0, count: IntColumn.readSlack)
    }

    /// Decodes a column made by ``encodeColumn(_:)`` into `out` (which must hold `count` values).
    public static func decodeColumn(_ bytes: [UInt8], count: Int, into out: inout [Int64]) throws {
        try bytes.withUnsafeBytes { b in
            var r = ByteReader(
                UnsafeRawBufferPointer(rebasing: b[0..<(b.count - IntColumn.readSlack)]), context: "benchmark")
            try out.withUnsafeMutableBufferPointer { try IntColumn.decode(&r, count: count, into: $0.baseAddress!) }
        }
    }

    public static func compress(_ codec: BlockCodec, _ bytes: [UInt8]) -> [UInt8]? { codec.compress(bytes) }

    /// Writes `values` as aggregates write a single number (shortest digits by `ShortestDecimal`
    /// where it answers), a newline after each, over `out`'s bytes; returns how many it wrote.
    public static func writeNumbers(_ values: [Double], into out: inout [UInt8]) -> Int {
        write(values, into: &out) { ExactNumberWriter.write($0, to: &$1) }
    }

    /// ``writeNumbers(_:into:)`` by the standard library's `Double.write(to:)`, for comparison.
    public static func writeNumbersByTheStandardLibrary(_ values: [Double], into out: inout [UInt8]) -> Int {
        write(values, into: &out) { $0.write(to: &$1) }
    }

    @inline(__always)
    private static func write(
        _ values: [Double], into out: inout [UInt8], _ number: (Double, inout RowBytes) -> Void
    ) -> Int {
        out.removeAll(keepingCapacity: true)
        RowBytes.append(to: &out, capacity: values.count * 32) { row in
            for v in values {
                number(v, &row)
                row.byte(UInt8(ascii: "\n"))
            }
        }
        return out.count
    }

    public static func decompress(_ codec: BlockCodec, _ stored: [UInt8], into out: inout [UInt8]) throws {
        try stored.withUnsafeBytes { s in try out.withUnsafeMutableBytes { try codec.decompress(s, into: $0) } }
    }
}
