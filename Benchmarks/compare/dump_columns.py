#!/usr/bin/env python3
"""For rans_experiment.swift: dumps heart rate's start gaps, zigzag mantissa deltas and motion
context per block, segment by segment: u32 segments; per segment u32 blocks; per block u32
count, then count-1 u32 gaps, count-1 u32 zigzag deltas, count u32 motion values.

    python3 Benchmarks/compare/dump_columns.py STORE_FOLDER OUT_FILE
"""
import os
import struct
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import segment_columns as sc
def zz(v): return 2 * v if v >= 0 else -2 * v - 1
store, out = sys.argv[1], sys.argv[2]
t = "HKQuantityTypeIdentifierHeartRate"
segs = sc.live_segments(store, t)
with open(out, "wb") as o:
    o.write(struct.pack("<I", len(segs)))
    for path, offset, size in segs:
        with open(path, "rb") as w: w.seek(offset); f = w.read(size)
        io, bc = struct.unpack_from("<QI", f[-80:], 24)
        o.write(struct.pack("<I", bc))
        for k in range(bc):
            off, stored, raw, _, count, codec = struct.unpack_from("<QIIIIB", f, io + 88 * k)
            block = sc.decompress(codec, f[off:off + stored], raw)
            cols, j = {}, 0
            for name in sc.COLUMNS: cols[name], j = sc.column_values(block, j, count)
            st, ma, mo = cols["start"], cols["mantissa"], cols["metadata"]
            gaps = [b - a for a, b in zip(st, st[1:])]
            dm = [zz(b - a) for a, b in zip(ma, ma[1:])]
            assert all(0 <= g < 2**32 for g in gaps) and all(d < 2**32 for d in dm) and all(0 <= m < 2**32 for m in mo)
            o.write(struct.pack(f"<I{count-1}I{count-1}I{count}I", count, *gaps, *dm, *mo))
