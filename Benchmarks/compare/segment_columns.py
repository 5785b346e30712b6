#!/usr/bin/env python3
"""Where a store's bytes go: per-region and per-column sizes of segment files.

Reads segment-v3 files (Formats/segment-v3.md) directly: header and footer, the block index (§6),
each block's nine integer columns (§5.1) after decompressing it with the system liblz4/libzstd,
the dictionary and the slot region (§6.1). Prints bytes per sample for each, and what zstd at a
few levels would make of the blocks' raw bytes. For design work on the format; it checks no CRC.

    python3 Benchmarks/compare/segment_columns.py STORE [TYPE]

STORE is a store's folder (the one holding tsdb/); TYPE defaults to heart rate. Only the
segments the store's MANIFEST names are read.
"""
import collections
import ctypes
import os
import struct
import sys

LZ4 = ctypes.CDLL("liblz4.so.1")
ZSTD = ctypes.CDLL("libzstd.so.1")
ZSTD.ZSTD_decompress.restype = ctypes.c_size_t
ZSTD.ZSTD_compress.restype = ctypes.c_size_t
ZSTD.ZSTD_compressBound.restype = ctypes.c_size_t
COLUMNS = ["start", "duration", "time form", "value tag", "mantissa", "unit", "source", "device", "metadata"]
ENCODINGS = ["FOR", "delta-FOR", "miniblocks"]


def decompress(codec, data, raw_length):
    """§4.2: 0 none, 1 zstd frame, 2 lz4 block."""
    if codec == 0:
        return data
    out = ctypes.create_string_buffer(raw_length)
    if codec == 2:
        n = LZ4.LZ4_decompress_safe(data, out, len(data), raw_length)
    else:
        n = ZSTD.ZSTD_decompress(out, raw_length, data, len(data))
    if n != raw_length:
        raise ValueError(f"codec {codec}: {n} bytes, expected {raw_length}")
    return out.raw


def varint(b, i):
    value = shift = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 127) << shift
        shift += 7
        if c < 128:
            return value, i


def column_end(b, i, count):
    """Where the §5.1 column starting at `i` ends, and its encoding."""
    encoding = b[i]
    i += 1
    if encoding == 0:
        _, i = varint(b, i)
        return i + 1 + (count * b[i] + 7) // 8, encoding
    _, i = varint(b, i)
    if encoding == 1:
        _, i = varint(b, i)
        return i + 1 + ((count - 1) * b[i] + 7) // 8, encoding
    left = count - 1
    while left > 0:
        run = min(128, left)
        _, i = varint(b, i)
        i += 1 + (run * b[i] + 7) // 8
        left -= run
    return i, encoding


def string(b, i):
    n, i = varint(b, i)
    return b[i:i + n].decode(), i + n


def live_segments(store, type_name):
    """The segments of `type_name` that the store's MANIFEST names (manifest-v4.md §1), as
    (file path, offset, size)."""
    m = open(os.path.join(store, "tsdb", "MANIFEST"), "rb").read()
    if m[:8] != b"TSDBMAN\0" or struct.unpack_from("<H", m, 8)[0] != 4:
        raise ValueError("not a tsdb MANIFEST of version 4")
    file_count, i = varint(m, 20)
    files = []
    for _ in range(file_count):
        path, i = string(m, i)
        files.append(os.path.join(store, "tsdb", path))
        i += 8  # file size
    count, i = varint(m, i)
    segments = []
    for _ in range(count):
        name, i = string(m, i)
        i += 3  # year, month
        file, i = varint(m, i)
        offset, size = struct.unpack_from("<QQ", m, i)
        i += 16 + 4 + 8 + 8 + 8 + 8  # offset, size, CRC, sample count, first start, last start, max end
        if name == type_name:
            segments.append((files[file], offset, size))
    return segments


def main():
    store = sys.argv[1]
    type_name = sys.argv[2] if len(sys.argv) > 2 else "HKQuantityTypeIdentifierHeartRate"
    regions = collections.Counter()
    columns = collections.Counter()
    encodings = collections.Counter()
    raw_blocks = []
    samples = 0
    paths = live_segments(store, type_name)
    for path, offset, size in paths:
        with open(path, "rb") as whole:
            whole.seek(offset)
            f = whole.read(size)
        footer = f[-80:]
        _, dictionary_length = struct.unpack_from("<QI", footer, 0)
        index_offset, block_count = struct.unpack_from("<QI", footer, 24)
        (slot_length,) = struct.unpack_from("<I", footer, 48)
        regions["header and footer"] += 96
        regions["dictionary"] += dictionary_length
        regions["slot summaries"] += slot_length
        regions["block index"] += 88 * block_count
        for k in range(block_count):
            offset, stored, raw, _, count, codec = struct.unpack_from("<QIIIIB", f, index_offset + 88 * k)
            regions["blocks"] += stored
            samples += count
            block = decompress(codec, f[offset:offset + stored], raw)
            raw_blocks.append(block)
            i = 0
            for name in COLUMNS:
                end, encoding = column_end(block, i, count)
                columns[name] += end - i
                encodings[(name, ENCODINGS[encoding])] += 1
                i = end
    print(f"{type_name}: {samples:,} samples in {len(paths)} segments ({store})")
    total = sum(regions.values())
    print(f"  {'all':18} {total:>10,} B  {total / samples:.3f} B/sample")
    for name, size in regions.most_common():
        print(f"  {name:18} {size:>10,} B  {size / samples:.3f} B/sample")
    raw_total = sum(len(b) for b in raw_blocks)
    print(f"  block columns before compression: {raw_total / samples:.3f} B/sample")
    for name in COLUMNS:
        used = ", ".join(f"{e} {n}" for (c, e), n in sorted(encodings.items()) if c == name)
        print(f"    {name:10} {columns[name] / samples:.3f} B/sample  ({used})")
    for level in (1, 3, 19):
        size = 0
        for block in raw_blocks:
            out = ctypes.create_string_buffer(ZSTD.ZSTD_compressBound(len(block)))
            size += min(len(block), ZSTD.ZSTD_compress(out, len(out), block, len(block), level))
        print(f"  blocks with zstd level {level}: {size / samples:.3f} B/sample")


if __name__ == "__main__":
    main()
