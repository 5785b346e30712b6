#!/usr/bin/env python3
"""Long ranges and percentiles, side by side: tsdb against DuckDB holding the heart rate in memory
(issue #16), in one run on one machine, on the same generated store.

    Benchmarks/compare/ranges.py [--days N] [--work DIR] [--tsdb PATH] [--rows PATH] [--repeat N]

- The data: `tsdb generate DIR --heavy --days N --start 2021-01-01` (default 1826 days: five heavy
  years, ~8 M heart-rate samples), compacted with `tsdb compact`.
- DuckDB at its best for these questions: the heart rate already loaded into an in-memory table
  (`t` epoch microseconds BIGINT, `v` DOUBLE) with, for each zone asked about, the local
  wall-clock time precomputed as epoch microseconds (`l_<zone>` BIGINT, from
  `timezone(zone, start)`), 2 threads. Buckets group by integer division of `t` or `l_<zone>`
  (weeks from Monday), months by `date_trunc('month', make_timestamp(...))`; percentiles with
  `quantile_cont(v, [..])` (one sort for both). Converting zones per query with ICU
  (`time_bucket(INTERVAL 1 day, ts, zone)`) took 1.3–2.5 s here, so the columns are DuckDB's best
  form, and building them is not timed (nor is loading). Timed in-process:
  `con.sql(...).to_arrow_table()` (DuckDB's own advice: `execute(...)` first makes an extra copy of
  the rows), so no Python objects are built per row.
- tsdb's library answering in memory too: `tsdb-rows` (Benchmarks/RowsInMemory, built here) calls
  `Store.aggregateColumns`, the rows as columns of numbers like DuckDB's Arrow table; the second of
  two runs in one process (the store open, as an app holds it), same range, checked by its row
  count and column sums; once with fresh columns, once filling the first run's columns again
  (`aggregateColumns(...into:)`: memory already written costs no page faults, as DuckDB's
  allocator keeps its memory between queries).
- DuckDB writing the same question's rows as CSV (`COPY (...) TO '/dev/null' (FORMAT csv)`), as
  tsdb's figure includes writing CSV: a second column, since "in memory" leaves text out.
- tsdb: `tsdb query HeartRate --bucket ... --tz ... --stats ...` on the store, in-process time
  from its own `--timings` (opening the store excluded; decoding, aggregating and writing the CSV
  rows to /dev/null included).
- Every answer is checked against DuckDB's (counts, min, max and percentiles exactly, means to
  1e-9): a benchmark that computes something different is void. Medians of --repeat runs, the
  five timed forms taking turns run by run.
Results: Benchmarks/results/ranges.{md,json}.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import zoneinfo

from common import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HR = "HKQuantityTypeIdentifierHeartRate"
DAY_US, HOUR_US = 86_400_000_000, 3_600_000_000
# Buckets DuckDB groups by integer division of microseconds.
FIXED_US = {"day": DAY_US, "hour": HOUR_US, "15m": 900_000_000, "minute": 60_000_000}

# (label, bucket, zone, statistics)
QUESTIONS = [
    ("daily count/min/max/mean, UTC", "day", "UTC", "count,min,max,mean"),
    ("daily count/min/max/mean, Europe/Paris", "day", "Europe/Paris", "count,min,max,mean"),
    ("daily count/min/max/mean, Asia/Kathmandu", "day", "Asia/Kathmandu", "count,min,max,mean"),
    ("daily count/min/max/mean, Australia/Lord_Howe", "day", "Australia/Lord_Howe", "count,min,max,mean"),
    ("hourly count/min/max/mean, UTC", "hour", "UTC", "count,min,max,mean"),
    ("15-minute count/min/max/mean, UTC", "15m", "UTC", "count,min,max,mean"),
    ("minute count/min/max/mean, UTC", "minute", "UTC", "count,min,max,mean"),
    ("weekly count/min/max/mean, Asia/Kathmandu", "week", "Asia/Kathmandu", "count,min,max,mean"),
    ("monthly count/min/max/mean, UTC", "month", "UTC", "count,min,max,mean"),
    ("daily p50/p95, UTC", "day", "UTC", "p50,p95"),
    ("daily p50/p95, Europe/Paris", "day", "Europe/Paris", "p50,p95"),
    ("monthly p50/p95, UTC", "month", "UTC", "p50,p95"),
]


def column(zone):
    return "t" if zone == "UTC" else "l_" + re.sub(r"\W", "_", zone)


def duck_sql(bucket, zone, stats, lo, hi):
    col = column(zone)
    if bucket in FIXED_US:
        key = f"{col} // {FIXED_US[bucket]}"
    elif bucket == "week":
        # 1970-01-01 was a Thursday: shifting by three days makes weeks start on Monday.
        key = f"({col} + {3 * DAY_US}) // {7 * DAY_US}"
    else:
        key = f"date_trunc('month', make_timestamp({col}))"
    if stats.startswith("p"):
        qs = [int(s[1:]) / 100 for s in stats.split(",")]
        select = f"quantile_cont(v, {qs})"
    else:
        select = "count(*), min(v), max(v), avg(v)"
    return f"SELECT {key} AS b, {select} FROM hr WHERE t >= {lo} AND t < {hi} GROUP BY b ORDER BY b"


def tsdb_query(exe, store, bucket, zone, stats, first, last, keep_rows=True):
    """One run: the rows (when kept) and the in-process time. Timed runs write the rows to /dev/null,
    as DuckDB's are kept in memory: a pipe into Python would time Python reading 4 MB of text."""
    cmd = [exe, "query", "HeartRate", "--range", f"{first}..{last}", "--bucket", bucket, "--tz", zone,
           "--stats", stats, "--format", "csv", "--timings", "--store", store]
    if keep_rows:
        p = run(cmd)
    else:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    m = re.search(r"aggregate and output ([\d.]+) ms, (\d+) blocks decoded, (\d+) answered from summaries, "
                  r"(\d+) from slot", p.stderr)
    rows = [line.split(",") for line in p.stdout.strip().splitlines()[1:]] if keep_rows else []
    return rows, float(m.group(1)) / 1000, (int(m.group(2)), int(m.group(3)), int(m.group(4)))


def library_query(exe, store, bucket, zone, stats, lo, hi, reuse=False):
    """One `tsdb-rows` process: the second run's time (the first warms the process) and its answer.
    With `reuse`, the second run fills the first run's columns again (`aggregateColumns(...into:)`)."""
    p = run([exe, store, HR, bucket, zone, stats, str(lo), str(hi), "2"] + (["reuse"] if reuse else []))
    answer = json.loads(p.stdout)
    return answer["ms"][-1] / 1000, answer


def same_sums(label, answer, duck_rows, percentiles):
    """The library's columns against DuckDB's rows: as many, and every column adds up the same."""
    if answer["rows"] != len(duck_rows):
        sys.exit(f"{label}: tsdb-rows {answer['rows']} buckets, DuckDB {len(duck_rows)}: comparison void")
    theirs = ([sum(r[1][k] for r in duck_rows) for k in range(len(duck_rows[0][1]))] if percentiles
              else [sum(r[k] for r in duck_rows) for k in range(1, 5)])
    for ours, their in zip(answer["sums"], theirs):
        if abs(ours - their) > 1e-9 * max(1, abs(their)):
            sys.exit(f"{label}: tsdb-rows column sums {answer['sums']}, DuckDB {theirs}: comparison void")


def same(label, tsdb_rows, duck_rows, percentiles):
    if len(tsdb_rows) != len(duck_rows):
        sys.exit(f"{label}: tsdb {len(tsdb_rows)} buckets, DuckDB {len(duck_rows)}: comparison void")
    for a, b in zip(tsdb_rows, duck_rows):
        if percentiles:
            ours, theirs = [float(x) for x in a[2:]], list(b[1])
        else:
            ours, theirs = [int(a[2]), float(a[3]), float(a[4]), float(a[5])], list(b[1:])
        exact = ours[:-1] == theirs[:-1] if not percentiles else ours == theirs
        close = abs(ours[-1] - theirs[-1]) <= 1e-9 * max(1, abs(theirs[-1]))
        if not (exact and close):
            sys.exit(f"{label}: bucket {a[0]} tsdb {ours} DuckDB {theirs}: comparison void")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=1826)
    ap.add_argument("--work", default=os.path.join(ROOT, ".build-bench", "ranges"))
    ap.add_argument("--tsdb", default=os.path.join(ROOT, ".build-static", "release", "tsdb"))
    ap.add_argument("--rows", help="tsdb-rows executable (default: built from Benchmarks/RowsInMemory)")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    import duckdb

    if args.rows is None:
        run(["swift", "build", "-c", "release", "--package-path", os.path.join(ROOT, "Benchmarks"),
             "--product", "tsdb-rows"])
        args.rows = os.path.join(ROOT, "Benchmarks", ".build", "release", "tsdb-rows")

    store = os.path.join(args.work, f"heavy-{args.days}")
    if not os.path.exists(os.path.join(store, "tsdb")):
        print(f"generating {args.days} heavy days into {store} ...", file=sys.stderr)
        run([args.tsdb, "generate", store, "--heavy", "--days", str(args.days), "--start", "2021-01-01"])
        run([args.tsdb, "compact", store])
    first = datetime.date(2021, 1, 1)
    last = first + datetime.timedelta(days=args.days - 1)

    pq = os.path.join(args.work, f"heavy-{args.days}-hr-parquet")
    if not os.path.exists(pq):
        run([args.tsdb, "export", "--type", "HeartRate", "--format", "parquet", "--out", pq, "--store", store])
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    con.execute("SET TimeZone = 'UTC'")
    zones = sorted({z for _, _, z, _ in QUESTIONS if z != "UTC"})
    local = "".join(f", epoch_us(timezone('{z}', start)) AS {column(z)}" for z in zones)
    con.execute(f"""CREATE TABLE hr AS SELECT epoch_us(start) AS t, value AS v{local}
                    FROM read_parquet('{pq}/**/*.parquet') ORDER BY t""")
    samples = con.execute("SELECT count(*) FROM hr").fetchone()[0]
    print(f"{samples:,} heart-rate samples over {args.days} days", file=sys.stderr)

    results = []
    for label, bucket, zone, stats in QUESTIONS:
        zi = zoneinfo.ZoneInfo(zone)
        lo = int(datetime.datetime.combine(first, datetime.time(), zi).timestamp() * 1e6)
        hi = int(datetime.datetime.combine(last + datetime.timedelta(days=1), datetime.time(), zi).timestamp() * 1e6)
        con.execute(f"SET TimeZone = '{zone}'")
        sql = duck_sql(bucket, zone, stats, lo, hi)
        duck_rows = con.execute(sql).fetchall()
        rows, _, (decoded, summarised, slotted) = tsdb_query(args.tsdb, store, bucket, zone, stats, first, last)
        same(label, rows, duck_rows, stats.startswith("p"))
        for reuse in (False, True):
            same_sums(label, library_query(args.rows, store, bucket, zone, stats, lo, hi, reuse)[1], duck_rows,
                      stats.startswith("p"))
        # The five timed forms take turns, run after run, so a slow spell of this shared machine
        # falls on all of them alike rather than on one form's block of runs.
        ours_times, library_times, reused_times, times, csv_times = [], [], [], [], []
        for _ in range(args.repeat):
            ours_times.append(tsdb_query(args.tsdb, store, bucket, zone, stats, first, last, False)[1])
            library_times.append(library_query(args.rows, store, bucket, zone, stats, lo, hi)[0])
            reused_times.append(library_query(args.rows, store, bucket, zone, stats, lo, hi, True)[0])
            t = time.perf_counter()
            con.sql(sql).to_arrow_table()
            times.append(time.perf_counter() - t)
            # The same rows written as CSV, as tsdb's are: DuckDB writes its bucket numbers, not the
            # timestamps tsdb writes, so this form of the question is, if anything, easier for it.
            t = time.perf_counter()
            con.execute(f"COPY ({sql}) TO '/dev/null' (FORMAT csv)")
            csv_times.append(time.perf_counter() - t)
        ours, library, reused, theirs, theirs_csv = (
            statistics.median(x) for x in (ours_times, library_times, reused_times, times, csv_times))
        results.append({"question": label, "buckets": len(rows), "tsdb_s": ours, "duckdb_s": theirs,
                        "ratio": theirs / ours, "tsdb_library_s": library, "library_ratio": theirs / library,
                        "tsdb_library_reused_s": reused, "reused_ratio": theirs / reused,
                        "duckdb_csv_s": theirs_csv, "blocks_decoded": decoded, "blocks_from_summaries": summarised,
                        "blocks_from_slots": slotted,
                        "duckdb_sql": sql})
        print(f"{label}: tsdb {ours * 1000:.1f} ms, DuckDB {theirs * 1000:.1f} ms ({theirs / ours:.1f}x); "
              f"in memory both: tsdb {library * 1000:.1f} ms ({theirs / library:.1f}x), "
              f"columns reused {reused * 1000:.1f} ms ({theirs / reused:.1f}x)", file=sys.stderr)

    machine = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
               "duckdb": duckdb.__version__, "python": platform.python_version(),
               "tsdb": run([args.tsdb, "--version"]).stdout.strip(), "samples": samples, "days": args.days}
    out = os.path.join(ROOT, "Benchmarks", "results")
    with open(os.path.join(out, "ranges.json"), "w") as f:
        json.dump({"machine": machine, "results": results}, f, indent=2)
    lines = [f"# Long ranges and percentiles: tsdb vs DuckDB in memory ({args.days} heavy days)", "",
             f"`python3 Benchmarks/compare/ranges.py --days {args.days}`; {samples:,} heart-rate samples; "
             f"{machine['cores']} cores; DuckDB {machine['duckdb']} (2 threads, data already in an in-memory "
             f"table with local times precomputed per zone); tsdb {machine['tsdb']} release build. Medians of {args.repeat} runs, "
             "the five forms taking turns; every answer "
             "checked against DuckDB's. tsdb in-process: `tsdb query --timings`, CSV written to /dev/null; "
             "tsdb library: `Store.aggregateColumns`, the rows as columns in memory (`tsdb-rows`), fresh columns, "
             "or the previous answer's columns filled again (`aggregateColumns(...into:)`, as an app redrawing "
             "a chart would; DuckDB's allocator likewise keeps memory between queries).", "",
             "| Question | buckets | tsdb in-process | DuckDB in memory | DuckDB / tsdb | tsdb library in memory | "
             "DuckDB / tsdb library | tsdb library, columns reused | DuckDB / reused | DuckDB to CSV | "
             "DuckDB to CSV / tsdb | tsdb blocks: decoded / block summaries / slot summaries |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['question']} | {r['buckets']:,} | {r['tsdb_s'] * 1000:.1f} ms | "
                     f"{r['duckdb_s'] * 1000:.1f} ms | {r['ratio']:.1f}× | {r['tsdb_library_s'] * 1000:.1f} ms | "
                     f"{r['library_ratio']:.1f}× | {r['tsdb_library_reused_s'] * 1000:.1f} ms | {r['reused_ratio']:.1f}× | "
                     f"{r['duckdb_csv_s'] * 1000:.1f} ms | "
                     f"{r['duckdb_csv_s'] / r['tsdb_s']:.1f}× | "
                     f"{r['blocks_decoded']:,} / {r['blocks_from_summaries']:,} / {r['blocks_from_slots']:,} |")
    lines += ["", "DuckDB's SQL, per question:", ""]
    lines += [f"- {r['question']}: `{r['duckdb_sql']}`" for r in results]
    with open(os.path.join(out, "ranges.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
