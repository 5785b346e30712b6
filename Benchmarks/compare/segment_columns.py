#!/usr/bin/env python3
"""Where a store's bytes go: per-region and per-column sizes of segment files.

Reads segment-v3 files (Formats/segment-v3.md) directly: header and footer, the block index (§6),
each block's nine integer columns (§5.1) after decompressing it with the system liblz4/libzstd,
the dictionary and the slot region (§6.1). Prints bytes per sample for each, and what zstd at a
few levels would make of the blocks' raw bytes. For design work on the format; it checks no CRC.

    python3 Benchmarks/compare/segment_columns.py STORE [TYPE] [--entropy] [--slots] [--layouts]

With --entropy it also decodes the start, mantissa and metadata columns and prints their empirical
entropies in bits a sample, alone and given what came before (the previous delta, the time gap,
the previous value): how far the columns are from what coding them against their context could
reach. Conditional entropies measured on one store flatter a model (each context's counts are
fitted to the data they measure), so read them as bounds.

With --slots it reads each block's slot summaries (§6.1) and prints how many blocks have them,
samples per slot, and the bytes each field takes per slot and per sample: what a cheaper layout of
the summaries would have to beat.

With --layouts it prices layouts this format does not have, on the decoded columns and slots: the
start and mantissa columns as delta miniblocks of other lengths than 128, the metadata column as
frame-of-reference runs (no deltas) of several lengths, and each block's slot fields bit-packed at
one width per field and block: what a change to segment-v3.md §5.1 or §6.1 would buy.

STORE is a store's folder (the one holding tsdb/); TYPE defaults to heart rate. Only the
segments the store's MANIFEST names are read.
"""
import collections
import ctypes
import math
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


def column_values(b, i, count):
    """The §5.1 column starting at `i` decoded (all additions modulo 2^64 as signed), and its end."""
    def signed(u):
        return (u >> 1) ^ -(u & 1)

    def packed(i, n, width):
        end = i + (n * width + 7) // 8
        bits = int.from_bytes(b[i:end], "little")
        return [(bits >> (k * width)) & ((1 << width) - 1) for k in range(n)], end

    encoding = b[i]
    i += 1
    if encoding == 0:
        reference, i = varint(b, i)
        numbers, i = packed(i + 1, count, b[i])
        return [signed(reference) + p for p in numbers], i
    first, i = varint(b, i)
    values = [signed(first)]
    left = count - 1
    while left > 0:
        run = left if encoding == 1 else min(128, left)
        reference, i = varint(b, i)
        numbers, i = packed(i + 1, run, b[i])
        for p in numbers:
            values.append(values[-1] + signed(reference) + p)
        left -= run
    return values, i


def entropy(symbols):
    """Empirical order-0 entropy, bits a symbol."""
    counts = collections.Counter(symbols)
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def conditional_entropy(pairs):
    """Empirical entropy of the second of each (context, symbol) pair given the first, bits a symbol."""
    contexts = collections.Counter(c for c, _ in pairs)
    joint = collections.Counter(pairs)
    total = len(pairs)
    return -sum(n / total * math.log2(n / contexts[c]) for (c, _), n in joint.items())


def print_entropies(blocks):
    """`blocks`: per block, its decoded start, mantissa and metadata columns."""
    starts, values, contexts = [], [], []
    for start, mantissa, metadata in blocks:
        d = [b - a for a, b in zip(start, start[1:])]
        v = [b - a for a, b in zip(mantissa, mantissa[1:])]
        gap = [int(math.log2(x)) if x > 0 else -1 for x in d]
        starts += [(p, x) for p, x in zip(d, d[1:])]
        values += [((g, max(-3, min(3, p))), x) for g, p, x in zip(gap[1:], v, v[1:])]
        contexts += [(p, x) for p, x in zip(metadata, metadata[1:])]
    print("  empirical entropy, bits a sample (alone; given the context):")
    print(f"    start deltas  {entropy([x for _, x in starts]):.2f}; given the previous delta "
          f"{conditional_entropy(starts):.2f}")
    print(f"    value deltas  {entropy([x for _, x in values]):.2f}; given log2 of the time gap and the "
          f"previous delta (clamped to ±3) {conditional_entropy(values):.2f}")
    print(f"    metadata      {entropy([x for _, x in contexts]):.2f}; given the previous value "
          f"{conditional_entropy(contexts):.2f}")


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


SLOT_FIELDS = ["gap", "samples", "valueless", "minimum", "range", "deviations", "squared"]


def varint_length(b, i):
    j = i
    while b[j] >= 128:
        j += 1
    return j + 1 - i


def slot_field_sizes(region, counts, sizes):
    """Adds the bytes of each slot field of one segment's slot region to `sizes`; returns the slots
    read, the samples of blocks that have slots and those blocks. `counts` are its blocks' sample counts."""
    i = slots = slotted = with_slots = 0
    for count in counts:
        n, j = varint(region, i)
        sizes["slot count"] += j - i
        i = j
        if n == 0:
            continue
        slotted += count
        with_slots += 1
        sizes["scale"] += 1
        i += 1
        for _ in range(n):
            slots += 1
            fields = []
            for k, name in enumerate(SLOT_FIELDS):
                if k >= 3 and fields[1] == fields[2]:
                    break  # a slot whose samples all lack values ends after `valueless`
                length = varint_length(region, i)
                sizes[name] += length
                fields.append(varint(region, i)[0])
                i += length
    if i != len(region):
        raise ValueError(f"slot region: read {i} of its {len(region)} bytes")
    return slots, slotted, with_slots


def print_slots(slot_stats, samples):
    sizes, slots, slotted, with_slots, blocks = slot_stats
    total = sum(sizes.values())
    print(f"  slot summaries: {with_slots} of {blocks} blocks ({slotted:,} samples), {slots:,} slots, "
          f"{slotted / max(slots, 1):.1f} samples a slot, {total / max(slots, 1):.2f} B a slot")
    for name, size in sizes.most_common():
        print(f"    {name:10} {size / max(slots, 1):.2f} B/slot  {size / samples:.3f} B/sample")


def slot_region(f, footer):
    """A segment's slot region (§6.1), decompressed, and its blocks' sample counts."""
    dictionary_offset, dictionary_length = struct.unpack_from("<QI", footer, 0)
    index_offset, block_count = struct.unpack_from("<QI", footer, 24)
    slot_length, slot_raw_length = struct.unpack_from("<II", footer, 48)
    start = dictionary_offset + dictionary_length
    region = decompress(footer[21], f[start:start + slot_length], slot_raw_length)
    counts = [struct.unpack_from("<I", f, index_offset + 88 * k + 20)[0] for k in range(block_count)]
    return region, counts


def zvarint_length(v):
    u = (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1
    n = 1
    while u >= 128:
        u >>= 7
        n += 1
    return n


def run_bits(values, run, deltas):
    """Bits of `values` as runs of `run` numbers, each a zvarint reference and a u8 width before its
    packed numbers (values minus the run's smallest, or deltas minus theirs after a first value)."""
    numbers = [b - a for a, b in zip(values, values[1:])] if deltas else values
    bits = 8 * zvarint_length(values[0]) if deltas else 0
    for i in range(0, len(numbers), run):
        part = numbers[i:i + run]
        bits += 8 * (zvarint_length(min(part)) + 1) + len(part) * (max(part) - min(part)).bit_length()
    return bits


def slot_fields(region, counts):
    """Per block with slots, its slots' fields as lists (minimum as the signed delta it is stored as)."""
    i = 0
    for count in counts:
        n, i = varint(region, i)
        if n == 0:
            continue
        i += 1
        fields = collections.defaultdict(list)
        for _ in range(n):
            values = []
            for k in range(len(SLOT_FIELDS)):
                if k >= 3 and values[1] == values[2]:
                    break
                v, i = varint(region, i)
                values.append((v >> 1) ^ -(v & 1) if k == 3 else v)
            for k, v in enumerate(values):
                fields[k].append(v)
        yield n, fields


def print_layouts(blocks, slot_blocks, samples, now):
    """`blocks`: per block, its decoded start, mantissa and metadata columns; `slot_blocks`: per
    block with slots, (slot count, fields); `now`: bytes stored now by column and region."""
    print("  other layouts, B/sample (before compression, as the columns above):")
    for name, index, deltas, runs in (("start", 0, True, (32, 64, 128, 256)),
                                      ("mantissa", 1, True, (32, 64, 128, 256)),
                                      ("metadata", 2, False, (32, 64, 128, 4096))):
        figures = []
        for run in runs:
            bits = sum(run_bits(b[index], run, deltas) for b in blocks if len(b[index]) > 1)
            figures.append(f"{'deltas' if deltas else 'values'} in runs of {run} {bits / 8 / samples:.3f}")
        print(f"    {name:9} now {now[name] / samples:.3f}; " + ", ".join(figures))
    slots = sum(n for n, _ in slot_blocks)
    # A u8 width and a zvarint reference per field and block, then each field's numbers packed.
    bits = sum(16 + sum(8 * (zvarint_length(min(f)) + 1) + len(f) * (max(f) - min(f)).bit_length()
                        for f in fields.values()) for _, fields in slot_blocks)
    print(f"    slots     now {now['slot summaries'] / samples:.3f}; bit-packed a field at a time per block: "
          f"{bits / 8 / samples:.3f} "
          f"({bits / 8 / max(slots, 1):.2f} B a slot)")


def main():
    arguments = [a for a in sys.argv[1:] if a not in ("--entropy", "--slots", "--layouts")]
    store = arguments[0]
    type_name = arguments[1] if len(arguments) > 1 else "HKQuantityTypeIdentifierHeartRate"
    decoded = [] if "--entropy" in sys.argv or "--layouts" in sys.argv else None
    slot_blocks = [] if "--layouts" in sys.argv else None
    regions = collections.Counter()
    columns = collections.Counter()
    encodings = collections.Counter()
    raw_blocks = []
    samples = 0
    slot_stats = [collections.Counter(), 0, 0, 0, 0] if "--slots" in sys.argv else None
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
        if slot_blocks is not None or slot_stats is not None:
            region, counts = slot_region(f, footer)
        if slot_blocks is not None:
            slot_blocks += list(slot_fields(region, counts))
        if slot_stats is not None:
            for k, n in enumerate(slot_field_sizes(region, counts, slot_stats[0]), start=1):
                slot_stats[k] += n
            slot_stats[4] += block_count
        for k in range(block_count):
            offset, stored, raw, _, count, codec = struct.unpack_from("<QIIIIB", f, index_offset + 88 * k)
            regions["blocks"] += stored
            samples += count
            block = decompress(codec, f[offset:offset + stored], raw)
            raw_blocks.append(block)
            if decoded is not None:
                columns_of_block = {}
                j = 0
                for name in COLUMNS:
                    columns_of_block[name], j = column_values(block, j, count)
                if j != len(block):
                    raise ValueError(f"{path}: a block's columns end at {j} of its {len(block)} bytes")
                decoded.append((columns_of_block["start"], columns_of_block["mantissa"], columns_of_block["metadata"]))
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
    if slot_stats is not None:
        print_slots(slot_stats, samples)
    if decoded is not None and "--entropy" in sys.argv:
        print_entropies(decoded)
    if slot_blocks is not None:
        print_layouts(decoded, slot_blocks, samples, columns + regions)


if __name__ == "__main__":
    main()
