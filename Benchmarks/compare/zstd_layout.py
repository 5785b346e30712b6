#!/usr/bin/env python3
"""Whether zstd over a byte layout could stand in for an entropy coder: heart rate's three costly
block columns (start gaps, zigzag mantissa deltas, motion context) as a byte each (255 escaping to
5 raw bytes), compressed per block with zstd at LEVEL (default 19): the three in one frame
(plain3), one frame each (sep3), split by context as coder_model.py splits them, a frame each (ctx)
or all in one (ctx_one_frame). Bytes a sample of the three columns; segment-v3 packs them in
1.370 (the year) and 1.300 (five heavy years). The measurement behind NOTES.md's "≤ 1.3 B".

    python3 Benchmarks/compare/zstd_layout.py STORE_FOLDER [LEVEL]
"""
import collections
import ctypes
import os
import struct
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import segment_columns as sc
z = ctypes.CDLL("libzstd.so.1")
z.ZSTD_compressBound.restype = ctypes.c_size_t
z.ZSTD_compress.restype = ctypes.c_size_t
z.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
def zlen(data, level):
    if not data: return 0
    cap = z.ZSTD_compressBound(len(data)); out = ctypes.create_string_buffer(cap)
    return z.ZSTD_compress(out, cap, data, len(data), level)
def zz(v): return 2 * v if v >= 0 else -2 * v - 1
def bytestream(values, esc):
    out = bytearray()
    for v in values:
        if v < 255: out.append(v)
        else: out.append(255); esc += struct.pack("<Q", v)[:5]
    return out
store = sys.argv[1]; level = int(sys.argv[2]) if len(sys.argv) > 2 else 19
t = "HKQuantityTypeIdentifierHeartRate"
tot = collections.Counter(); samples = 0
for path, offset, size in sc.live_segments(store, t):
    with open(path, "rb") as w: w.seek(offset); f = w.read(size)
    io, bc = struct.unpack_from("<QI", f[-80:], 24)
    for k in range(bc):
        off, stored, raw, _, count, codec = struct.unpack_from("<QIIIIB", f, io + 88 * k)
        block = sc.decompress(codec, f[off:off + stored], raw)
        cols, j = {}, 0
        for name in sc.COLUMNS: cols[name], j = sc.column_values(block, j, count)
        samples += count
        st, ma, mo = cols["start"], cols["mantissa"], cols["metadata"]
        gaps = [b - a for a, b in zip(st, st[1:])]
        dm = [zz(b - a) for a, b in zip(ma, ma[1:])]
        esc = bytearray()
        g, m, o = bytestream(gaps, esc), bytestream(dm, esc), bytestream(mo, esc)
        tot["plain3"] += zlen(bytes(g + m + o + esc), level)
        tot["sep3"] += zlen(bytes(g), level) + zlen(bytes(m), level) + zlen(bytes(o), level) + len(esc)
        # context split: gaps by previous gap class, mantissa by gap class
        gs = collections.defaultdict(bytearray); ms = collections.defaultdict(bytearray); os_ = collections.defaultdict(bytearray)
        prev = 0
        for x, gap in zip(g, gaps):
            gs[0 if prev < 8 else 1 if prev < 48 else 2].append(x); prev = gap
        for x, gap in zip(m, gaps): ms[0 if gap < 8 else 1].append(x)
        prevo = 0
        for x in o: os_[prevo].append(x); prevo = x
        tot["ctx"] += sum(zlen(bytes(s), level) for s in list(gs.values()) + list(ms.values()) + list(os_.values())) + len(esc)
        tot["ctx_one_frame"] += zlen(b"".join(bytes(s) for s in list(gs.values()) + list(ms.values()) + list(os_.values())) + bytes(esc), level)
for k, v in tot.items(): print(f"{k:14} {v / samples:.3f} B/sample")
print(samples, "samples")
