import CTSDBZstd

/// One zstd compression context used for frame after frame. `ZSTD_compress` makes, clears and
/// frees a context per call: a Parquet export of the generated year compresses ~3,350 small pages,
/// and setting up a context for each was ~70 M of its 1,716 M instructions (callgrind). Not
/// `Sendable`: one per thread (``BlockCodec`` makes one per block, as `ZSTD_compress` did).
package final class ZstdCompressor {
    private let context: OpaquePointer

    package init() {
        // Only an allocation failure makes this nil, as for any other allocation.
        guard let context = ZSTD_createCCtx() else { fatalError("zstd could not allocate a compression context") }
        self.context = context
    }

    deinit { ZSTD_freeCCtx(context) }

    /// One zstd frame of `input`, whatever its size (formats that declare zstd for every page,
    /// such as Parquet column chunks, cannot fall back to raw bytes): the same bytes as
    /// `ZSTD_compress` at `level`.
    package func frame(_ input: [UInt8], level: Int32 = 3) -> [UInt8] {
        let bound = ZSTD_compressBound(input.count)
        return input.withUnsafeBytes { src in
            [UInt8](unsafeUninitializedCapacity: bound) { dst, count in
                let written = ZSTD_compressCCtx(context, dst.baseAddress, bound, src.baseAddress, src.count, level)
                // Only a destination smaller than ZSTD_compressBound can make it fail.
                precondition(ZSTD_isError(written) == 0, "zstd failed with a buffer of its own bound")
                count = written
            }
        }
    }
}
