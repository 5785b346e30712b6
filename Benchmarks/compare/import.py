"""Importing Apple Health's export.zip, side by side: `tsdb import` against healthkit-to-sqlite,
on one machine in one run, on the same generated archive (issue #10).

    Benchmarks/compare/import.py [--days N] [--big DAYS] [--tsdb PATH]

- The archive: `tsdb generate DIR --apple-export --days N` (default 365): records, workouts with
  routes, correlations, heartbeat series, activity summaries, and real exports' breakages.
- tsdb: `tsdb import export.zip --store NEW` — keep the archive, read it, compact every sample
  (fsyncs included). Median of 3 runs, each into a new store; peak RSS from the kernel.
- healthkit-to-sqlite 1.0.1 (`pip install healthkit-to-sqlite`): `healthkit-to-sqlite
  export.zip db.sqlite`, its only mode. It stops at the archive's iOS 16 DTD and at the `\\x0b`
  character (expat), so it gets a cleaned copy (DTD and `\\x0b` removed, re-zipped; not timed).
  One run (it takes ~40 s a year here).
- With --big DAYS: tsdb alone on a heavy export of DAYS days (`--heavy`, ~0.8 GB of XML a year),
  for peak memory on a multi-gigabyte export.
Throughput is of the XML inside the zip. Results: Benchmarks/results/import.{md,json}.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import metadata

from common import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def peak_mb(cmd):
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    return int(p.stderr.strip().splitlines()[-1]) / 1024


def xml_bytes(archive):
    with zipfile.ZipFile(archive) as z:
        return max(i.file_size for i in z.infolist() if i.filename.endswith(".xml"))


def cleaned_copy(archive, target):
    """The archive with its export.xml's DTD and \\x0b removed (what healthkit-to-sqlite can read)."""
    with zipfile.ZipFile(archive) as z, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename.endswith("export.xml"):
                data = re.sub(rb"<!DOCTYPE.*?]>", b"", data, count=1, flags=re.S).replace(b"\x0b", b"")
            if not info.filename.endswith("export_cda.xml"):
                out.writestr(info.filename, data)


def tsdb_import(tsdb, archive, work, runs):
    times, peaks = [], []
    for k in range(runs):
        store = os.path.join(work, f"store-{k}")
        t = time.perf_counter()
        peaks.append(peak_mb([tsdb, "import", archive, "--store", store]))
        times.append(time.perf_counter() - t)
        shutil.rmtree(store)
    return statistics.median(times), max(peaks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--tsdb", default=os.path.join(ROOT, ".build-static/release/tsdb"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tsdb-import-bench-")
    try:
        gen = os.path.join(work, "gen")
        run([args.tsdb, "generate", gen, "--apple-export", "--days", str(args.days)])
        archive = os.path.join(gen, "export.zip")
        xml = xml_bytes(archive)
        print(f"archive: tsdb generate --apple-export --days {args.days}: {os.path.getsize(archive) / 1e6:.1f} MB zip, "
              f"{xml / 1e6:.1f} MB of XML")
        print(f"ran: {args.tsdb} import export.zip --store NEW (median of 3, new store each)")
        t_tsdb, peak_tsdb = tsdb_import(args.tsdb, archive, work, 3)
        print(f"  tsdb: {t_tsdb:.2f} s, {xml / 1e6 / t_tsdb:.0f} MB/s of XML, peak {peak_tsdb:.0f} MB")

        clean = os.path.join(work, "clean.zip")
        cleaned_copy(archive, clean)
        version = metadata.version("healthkit-to-sqlite")
        db = os.path.join(work, "healthkit.db")
        print(f"ran: healthkit-to-sqlite {version} clean.zip healthkit.db (DTD and \\x0b removed first, not timed)")
        t = time.perf_counter()
        peak_h = peak_mb(["healthkit-to-sqlite", clean, db])
        t_h = time.perf_counter() - t
        print(f"  healthkit-to-sqlite: {t_h:.2f} s, {xml / 1e6 / t_h:.1f} MB/s of XML, peak {peak_h:.0f} MB")
        print(f"tsdb is {t_h / t_tsdb:.1f}x faster")

        result = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores", "days": args.days,
            "zip_mb": os.path.getsize(archive) / 1e6, "xml_mb": xml / 1e6,
            "tsdb": {"seconds": t_tsdb, "peak_mb": peak_tsdb},
            "healthkit_to_sqlite": {"version": version, "seconds": t_h, "peak_mb": peak_h},
        }
        if args.big:
            big = os.path.join(work, "big")
            run([args.tsdb, "generate", big, "--apple-export", "--heavy", "--days", str(args.big)])
            big_zip = os.path.join(big, "export.zip")
            big_xml = xml_bytes(big_zip)
            t_big, peak_big = tsdb_import(args.tsdb, big_zip, work, 1)
            print(f"big: --heavy --days {args.big}: {big_xml / 1e9:.2f} GB of XML: tsdb {t_big:.1f} s, "
                  f"{big_xml / 1e6 / t_big:.0f} MB/s, peak {peak_big:.0f} MB")
            result["big"] = {"days": args.big, "xml_gb": big_xml / 1e9, "seconds": t_big, "peak_mb": peak_big}
        os.makedirs(os.path.join(ROOT, "Benchmarks/results"), exist_ok=True)
        with open(os.path.join(ROOT, "Benchmarks/results/import.json"), "w") as f:
            json.dump(result, f, indent=2)
        with open(os.path.join(ROOT, "Benchmarks/results/import.md"), "w") as f:
            f.write(f"| Import of a {args.days}-day export.zip ({xml / 1e6:.0f} MB of XML) | seconds | MB/s of XML "
                    "| peak RSS |\n|---|---|---|---|\n")
            f.write(f"| tsdb import | {t_tsdb:.2f} | {xml / 1e6 / t_tsdb:.0f} | {peak_tsdb:.0f} MB |\n")
            f.write(f"| healthkit-to-sqlite {version} (cleaned copy) | {t_h:.2f} | {xml / 1e6 / t_h:.1f} "
                    f"| {peak_h:.0f} MB |\n")
            if args.big:
                f.write(f"| tsdb import, heavy {args.big} days ({big_xml / 1e9:.2f} GB of XML) | {t_big:.1f} "
                        f"| {big_xml / 1e6 / t_big:.0f} | {peak_big:.0f} MB |\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
