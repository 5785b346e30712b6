#!/usr/bin/env python3
"""Writes the manifest-v4 test vectors (Formats/manifest-v4.md §5) from this file alone: a second
implementation of the layout, CRC-32C and the content hash, so the Swift tests check tsdb against
something it did not write.

    python3 Formats/vectors/manifest-v4/make-vectors.py

- manifest.json: the fields of one manifest (three segments in two files, three raw files, one of
  them the kept Apple Health export); MANIFEST: its bytes. Fields that may pass 2^53 are strings (JSON readers
  often hold numbers as doubles): `mtimeNanoseconds` in decimal, `contentHash` in hex.
- content-hash.json: inputs of 0 to 100 bytes (lanes, words, tails) and their content hashes (hex).
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MASK = (1 << 64) - 1


def crc32c(data):
    """CRC-32C (Castagnoli), reflected 0x82F63B78, bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def content_hash(data):
    """manifest-v4.md §2."""
    k0, k1, k2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
    lanes = [k0 ^ len(data), k1, k2, (k0 * k1) & MASK]
    mults = [k1, k2, k1, k2]
    i = 0
    while i + 32 <= len(data):
        for lane in range(4):
            word = struct.unpack_from("<Q", data, i + 8 * lane)[0]
            x = ((lanes[lane] ^ word) * mults[lane]) & MASK
            lanes[lane] = x ^ (x >> 29)
        i += 32
    a, b, c, d = lanes
    h = a ^ ((b * 31) & MASK) ^ ((c * 127) & MASK) ^ ((d * 8191) & MASK)
    while i + 8 <= len(data):
        h = ((h ^ struct.unpack_from("<Q", data, i)[0]) * k1) & MASK
        h ^= h >> 31
        i += 8
    tail = int.from_bytes(data[i:], "little")
    h = ((h ^ tail) * k2) & MASK
    return h ^ (h >> 32)


def uvarint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def zvarint(n):
    return uvarint((n << 1) ^ (n >> 63) if n < 0 else n << 1)


def string(text):
    raw = text.encode()
    return uvarint(len(raw)) + raw


def encode(m):
    out = bytearray(b"TSDBMAN\0") + struct.pack("<HHQ", 4, 0, m["generation"])
    files = []  # (path, size) in the order the segments first name them
    for s in m["segments"]:
        if (s["path"], s["fileSize"]) not in files:
            files.append((s["path"], s["fileSize"]))
    out += uvarint(len(files))
    for path, size in files:
        out += string(path) + struct.pack("<Q", size)
    out += uvarint(len(m["segments"]))
    for s in m["segments"]:
        out += string(s["type"]) + struct.pack("<HB", s["year"], s["month"])
        out += uvarint(files.index((s["path"], s["fileSize"])))
        out += struct.pack("<QQIQqqq", s["offset"], s["size"], s["crc"], s["sampleCount"], s["firstStart"],
                           s["lastStart"], s["maxEnd"])
    out += uvarint(len(m["rawFiles"]))
    for r in m["rawFiles"]:
        out += string(r["path"]) + struct.pack("<QqQQ", r["size"], int(r["mtimeNanoseconds"]),
                                               int(r["contentHash"], 16), r["sampleCount"])
        out += uvarint(len(r["months"])) + b"".join(zvarint(month) for month in r["months"])
    return bytes(out + struct.pack("<I", crc32c(out)))


def hex64(n):
    return f"{n:016x}"


def month(year, mon):
    return year * 12 + mon - 1


def main():
    day = b'{"date":"2025-03-01","samples":[]}\n'
    manifest = {
        "generation": 7,
        "segments": [
            {"type": "HKQuantityTypeIdentifierStepCount", "year": 2025, "month": 2,
             "path": "segments/pack.g5.seg", "fileSize": 90112, "offset": 1024, "size": 11348,
             "crc": 0xE3069283, "sampleCount": 2240, "firstStart": 1738368000000000,
             "lastStart": 1740783600000000, "maxEnd": 1740787260000000},
            {"type": "HKQuantityTypeIdentifierHeartRate", "year": 2025, "month": 3,
             "path": "segments/pack.g7.seg", "fileSize": 60328, "offset": 0, "size": 48976,
             "crc": 0x1CE4E5B9, "sampleCount": 31234, "firstStart": 1740787220000000,
             "lastStart": 1743465540000000, "maxEnd": 1743465540000000},
            {"type": "HKQuantityTypeIdentifierStepCount", "year": 2025, "month": 3,
             "path": "segments/pack.g7.seg", "fileSize": 60328, "offset": 48976, "size": 11352,
             "crc": 0x5BD1E995, "sampleCount": 2480, "firstStart": 1740787200000000,
             "lastStart": 1743462000000000, "maxEnd": 1743465600000000},
        ],
        "rawFiles": [
            {"path": "2025/02/2025-02-28.json", "size": 517283, "mtimeNanoseconds": "1740790861123456789",
             "contentHash": hex64(content_hash(b"a day file's bytes")), "sampleCount": 1402,
             "months": [month(2025, 2), month(2025, 3)]},
            {"path": "2025/03/2025-03-01.json", "size": len(day), "mtimeNanoseconds": "-1",
             "contentHash": hex64(content_hash(day)), "sampleCount": 0, "months": []},
            {"path": "../exports/export.zip", "size": 412954, "mtimeNanoseconds": "1764000000000000000",
             "contentHash": hex64(0xFFFFFFFFFFFFFFFF), "sampleCount": 33210,
             "months": [month(2019, 9), month(2020, 12), month(2021, 4)]},
        ],
    }
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, "MANIFEST"), "wb") as f:
        f.write(encode(manifest))
    inputs = [bytes(range(n)) for n in (0, 1, 7, 8, 9, 31, 32, 33, 40, 64, 100)] + [b"123456789"]
    hashes = [{"bytes": data.hex(), "hash": hex64(content_hash(data))} for data in inputs]
    with open(os.path.join(HERE, "content-hash.json"), "w") as f:
        json.dump(hashes, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
