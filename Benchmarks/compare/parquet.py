"""Parquet export, side by side: `tsdb export --format parquet` against pyarrow writing the same
table with ZSTD, on one machine in one run (Formats/parquet-v1.md; issue #14).

    Benchmarks/compare/parquet.py [--quick] [--tsdb PATH]

For each data set (a generated year and, without --quick, a heavy year: ~1.6 M heart-rate samples)
it compacts a store, exports it with tsdb (median of 3 runs, each into a fresh folder, fsyncs
included), then gives pyarrow the very same rows already in memory (read back from tsdb's files,
not timed) and times `pyarrow.parquet.write_table` per partition in two configurations:
  - defaults: compression='zstd' (dictionary for every column, PLAIN fallback);
  - tuned:    compression='zstd', DELTA_BINARY_PACKED for the four integer columns, dictionary for
              the others, as tsdb does.
Both write the same partitions (one file per type and month). pyarrow's time excludes getting
the data into memory, which favours it. Results: Benchmarks/results/parquet.{md,json}.
"""
import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow
import pyarrow.parquet as pq

from common import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTEGER_COLUMNS = ["start", "end", "utc_offset_minutes", "end_utc_offset_minutes"]


def tree_bytes(folder):
    return sum(os.path.getsize(f) for f in glob.glob(folder + "/**/*.parquet", recursive=True))


def tsdb_export(tsdb, store, work):
    times = []
    for k in range(3):
        out = os.path.join(work, f"tsdb-{k}")
        t = time.perf_counter()
        run([tsdb, "export", "--store", store, "--format", "parquet", "--out", out])
        times.append(time.perf_counter() - t)
    return statistics.median(times), os.path.join(work, "tsdb-0")


def pyarrow_export(tables, out, tuned):
    options = {"compression": "zstd"}
    if tuned:
        options.update(use_dictionary=[c for c in tables[0][1].column_names if c not in INTEGER_COLUMNS],
                       column_encoding={c: "DELTA_BINARY_PACKED" for c in INTEGER_COLUMNS})
    t = time.perf_counter()
    for relative, table in tables:
        target = os.path.join(out, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        pq.write_table(table, target, **options)
    return time.perf_counter() - t


def measure(label, tsdb, generate_args, work):
    store = os.path.join(work, label)
    run([tsdb, "generate", store, *generate_args])
    run([tsdb, "compact", "--store", store])
    seconds, ours = tsdb_export(tsdb, store, work)
    files = sorted(glob.glob(ours + "/type=*/year=*/month=*/part-0.parquet"))
    tables = [(os.path.relpath(f, ours), pq.read_table(f)) for f in files]
    samples = sum(t.num_rows for _, t in tables)
    r = {"label": label, "generate": " ".join(generate_args), "samples": samples, "files": len(files),
         "tsdb_seconds": seconds, "tsdb_bytes": tree_bytes(ours + "/type=*")}
    hr = lambda folder: tree_bytes(folder + "/type=HeartRate")
    r["tsdb_hr_bytes"] = hr(ours)
    for tuned, key in [(False, "pyarrow"), (True, "pyarrow_tuned")]:
        out = os.path.join(work, key)
        r[key + "_seconds"] = pyarrow_export(tables, out, tuned)
        r[key + "_bytes"] = tree_bytes(out)
        r[key + "_hr_bytes"] = hr(out)
        shutil.rmtree(out)
    r["hr_samples"] = sum(t.num_rows for rel, t in tables if rel.startswith("type=HeartRate/"))
    return r


def report(results, machine):
    lines = ["# Parquet export: tsdb vs pyarrow (ZSTD), one run", "",
             f"Machine: {machine}. pyarrow {pyarrow.__version__}. Rerun: `Benchmarks/compare/parquet.py`.",
             "tsdb: `tsdb export --format parquet` (whole process, median of 3, fsyncs included). pyarrow: "
             "`write_table(compression='zstd')` per partition from tables already in memory (defaults; tuned = "
             "DELTA_BINARY_PACKED integers, dictionary elsewhere).", ""]
    for r in results:
        mb = r["tsdb_bytes"] / 1e6
        lines += [f"## {r['label']}: {r['samples']:,} samples in {r['files']} files (`tsdb generate {r['generate']}`)", "",
                  "| | tsdb | pyarrow defaults | pyarrow tuned |", "|---|---|---|---|",
                  f"| time | {r['tsdb_seconds'] * 1e3:.0f} ms | {r['pyarrow_seconds'] * 1e3:.0f} ms | "
                  f"{r['pyarrow_tuned_seconds'] * 1e3:.0f} ms |",
                  f"| samples/s | {r['samples'] / r['tsdb_seconds'] / 1e6:.2f} M | "
                  f"{r['samples'] / r['pyarrow_seconds'] / 1e6:.2f} M | {r['samples'] / r['pyarrow_tuned_seconds'] / 1e6:.2f} M |",
                  f"| MB/s written | {mb / r['tsdb_seconds']:.1f} | {r['pyarrow_bytes'] / 1e6 / r['pyarrow_seconds']:.1f} | "
                  f"{r['pyarrow_tuned_bytes'] / 1e6 / r['pyarrow_tuned_seconds']:.1f} |",
                  f"| size | {mb:.2f} MB | {r['pyarrow_bytes'] / 1e6:.2f} MB | {r['pyarrow_tuned_bytes'] / 1e6:.2f} MB |",
                  f"| size vs tsdb | 1 | {r['pyarrow_bytes'] / r['tsdb_bytes']:.2f}× | "
                  f"{r['pyarrow_tuned_bytes'] / r['tsdb_bytes']:.2f}× |",
                  f"| heart rate bytes/sample | {r['tsdb_hr_bytes'] / r['hr_samples']:.2f} | "
                  f"{r['pyarrow_hr_bytes'] / r['hr_samples']:.2f} | {r['pyarrow_tuned_hr_bytes'] / r['hr_samples']:.2f} |", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the year only")
    ap.add_argument("--tsdb", default=os.path.join(ROOT, ".build-static/release/tsdb"))
    args = ap.parse_args()
    sets = [("year", ["--days", "365"])] + ([] if args.quick else [("heavy year", ["--days", "365", "--heavy"])])
    with tempfile.TemporaryDirectory(prefix="tsdb-parquet-bench-") as work:
        results = [measure(label, args.tsdb, g, work) for label, g in sets]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    machine = f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}"
    text = report(results, machine)
    out = os.path.join(ROOT, "Benchmarks/results")
    with open(os.path.join(out, "parquet.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "parquet.json"), "w") as f:
        json.dump({"machine": machine, "pyarrow": pyarrow.__version__, "results": results}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
