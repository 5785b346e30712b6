import CTSDBLZ4
import CTSDBZstd

/// The general-purpose compressor applied to a whole block payload or section.
/// Ids are on-disk values (Formats/segment-v3.md §4.2); never renumber them.
public enum BlockCodec: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case none = 0
    case zstd = 1
    case lz4 = 2

    public var description: String {
        switch self {
        case .none: "none"
        case .zstd: "zstd"
        case .lz4: "lz4"
        }
    }

    /// Compresses `input`; returns nil when the codec cannot make it smaller.
    func compress(_ input: [UInt8], level: Int32 = 3) -> [UInt8]? {
        switch self {
        case .none:
            return input
        case .zstd:
            let frame = ZstdCompressor().frame(input, level: level)
            return frame.count < input.count ? frame : nil
        case .lz4:
            guard input.count < Int(Int32.max) else { return nil }
            let bound = Int(LZ4_compressBound(Int32(input.count)))
            var out = [UInt8](repeating: 0, count: bound)
            let written = input.withUnsafeBytes { src in
                out.withUnsafeMutableBytes { dst in
                    LZ4_compress_default(
                        src.baseAddress?.assumingMemoryBound(to: CChar.self),
                        dst.baseAddress?.assumingMemoryBound(to: CChar.self),
                        Int32(src.count), Int32(dst.count))
                }
            }
            guard written > 0, Int(written) < input.count else { return nil }
            out.removeSubrange(Int(written)...)
            return out
        }
    }

    /// Decompresses `input` into exactly `destination.count` bytes, or throws corruption.
    func decompress(_ input: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws(TSDBError)
    {
        switch self {
        case .none:
            guard input.count == destination.count else {
                throw TSDBError.corrupt("stored length \(input.count) differs from raw length \(destination.count)")
            }
            if input.count > 0 { destination.copyMemory(from: input) }
        case .zstd:
            let n = ZSTD_decompress(destination.baseAddress, destination.count, input.baseAddress, input.count)
            if ZSTD_isError(n) != 0 {
                let name = String(cString: ZSTD_getErrorName(n))
                throw TSDBError.corrupt("zstd could not decompress \(input.count) bytes: \(name)")
            }
            guard n == destination.count else {
                throw TSDBError.corrupt("zstd produced \(n) bytes, expected \(destination.count)")
            }
        case .lz4:
            guard input.count <= Int(Int32.max), destination.count <= Int(Int32.max) else {
                throw TSDBError.corrupt("lz4 block larger than 2 GiB")
            }
            let n = LZ4_decompress_safe(
                input.baseAddress?.assumingMemoryBound(to: CChar.self),
                destination.baseAddress?.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(destination.count))
            guard n == Int32(destination.count) else {
                throw TSDBError.corrupt(
                    "lz4 produced \(n < 0 ? "an error" : "\(n) bytes"), expected \(destination.count)")
            }
        }
    }
}
