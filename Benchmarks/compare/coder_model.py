#!/usr/bin/env python3
"""What an entropy coder could make of heart rate's three costly block columns (start, mantissa,
motion context), as a size model rather than a coder: static rANS-style tables per segment and
context, frequencies quantized to 12 bits (each used symbol at least 1), ~12 bits a used symbol and
2 bytes a table to store them, and a 4-byte final state per column and block. Symbols are values
below 32 as they are, larger ones their bit length with the bits below the top one stored raw.
Contexts: start deltas by the previous delta (7 classes), mantissa deltas (zigzag) by the time gap
(3 classes) and the previous delta's magnitude (0, 1, 2+), the motion context by the previous
value. The measurement behind NOTES.md's "≤ 1.3 B per heart-rate sample".

    python3 Benchmarks/compare/coder_model.py STORE_FOLDER [TYPE]
"""
import collections
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import segment_columns as sc  # noqa: E402

PRECISION = 12


def symbol(v, direct=32):
    """(symbol, raw bits) of an unsigned value."""
    if v < direct:
        return v, 0
    b = v.bit_length()
    return direct + b, b - 1


def zigzag(v):
    return 2 * v if v >= 0 else -2 * v - 1


def context_class(previous, edges):
    for i, e in enumerate(edges):
        if previous < e:
            return i
    return len(edges)


def coded_bits(counts):
    """Bits to code the symbols with their frequencies quantized, plus the table."""
    total = sum(counts.values())
    if total == 0:
        return 0
    q = {s: max(1, round(c * (1 << PRECISION) / total)) for s, c in counts.items()}
    top = max(q, key=q.get)
    q[top] = max(1, q[top] + (1 << PRECISION) - sum(q.values()))
    bits = -sum(c * math.log2(q[s] / (1 << PRECISION)) for s, c in counts.items())
    return bits + 12 * len(counts) + 16


def main():
    store = sys.argv[1]
    type_name = sys.argv[2] if len(sys.argv) > 2 else "HKQuantityTypeIdentifierHeartRate"
    samples = blocks = 0
    bits = collections.Counter()
    state_bytes = 0
    segments = sc.live_segments(store, type_name)
    for path, offset, size in segments:
        with open(path, "rb") as whole:
            whole.seek(offset)
            f = whole.read(size)
        index_offset, block_count = struct.unpack_from("<QI", f[-80:], 24)
        tables = collections.defaultdict(collections.Counter)
        for k in range(block_count):
            off, stored, raw, _, count, codec = struct.unpack_from("<QIIIIB", f, index_offset + 88 * k)
            block = sc.decompress(codec, f[off:off + stored], raw)
            columns, j = {}, 0
            for name in sc.COLUMNS:
                columns[name], j = sc.column_values(block, j, count)
            samples += count
            blocks += 1
            state_bytes += 3 * 4
            start, mantissa, motion = columns["start"], columns["mantissa"], columns["metadata"]
            gaps = [b - a for a, b in zip(start, start[1:])]
            previous = 0
            for gap in gaps:
                s, extra = symbol(gap)
                tables[("start", context_class(previous, (2, 4, 8, 16, 48, 96)))][s] += 1
                bits["start"] += extra
                previous = gap
            previous = 0
            for gap, delta in zip(gaps, [b - a for a, b in zip(mantissa, mantissa[1:])]):
                s, extra = symbol(zigzag(delta))
                tables[("mantissa", context_class(gap, (8, 48)), min(2, abs(previous)))][s] += 1
                bits["mantissa"] += extra
                previous = delta
            previous = -1
            for value in motion:
                s, extra = symbol(value)
                tables[("motion", min(previous, 4))][s] += 1
                bits["motion"] += extra
                previous = value
        for key, counts in tables.items():
            bits[key[0]] += coded_bits(counts)
    print(f"{type_name}: {samples:,} samples, {len(segments)} segments, {blocks} blocks ({store})")
    for name in ("start", "mantissa", "motion"):
        print(f"  {name:9} {bits[name] / 8 / samples:.3f} B/sample")
    print(f"  states    {state_bytes / samples:.3f} B/sample")
    print(f"  the three columns coded: {sum(bits.values()) / 8 / samples + state_bytes / samples:.3f} B/sample")


if __name__ == "__main__":
    main()
