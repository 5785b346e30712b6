"""Reads a `tsdb export --format parquet` folder back with pyarrow and DuckDB and checks it
against what tsdb itself says (used by ParquetTests.swift; needs pyarrow and duckdb).

    parquet-check.py samples OUT NDJSON      every sample equals `tsdb export --format ndjson`
    parquet-check.py daily OUT CSV           DuckDB's daily heart rate equals `tsdb query … --format csv`
    parquet-check.py workouts OUT NDJSON     the workouts table equals the workout samples
    parquet-check.py cohort OUT COUNTS       one DuckDB statement over every person's partitions
"""
import glob
import json
import os
import re
import sys

import duckdb
import pyarrow.parquet as pq

ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def instant(text):
    """(µs since the epoch, UTC offset in minutes) of an RFC 3339 timestamp, by hand."""
    import calendar
    y, mo, d, h, mi, s, frac, off = ISO.match(text).groups()
    seconds = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s)))
    micros = int((frac or "").ljust(9, "0")[:6])
    offset = 0 if off == "Z" else (1 if off[0] == "+" else -1) * (int(off[1:3]) * 60 + int(off[4:6]))
    return (seconds - offset * 60) * 1_000_000 + micros, offset


def exact(text):
    return json.loads(text, parse_float=str, parse_int=str)


def micros(ts):
    return None if ts is None else int(ts.timestamp()) * 1_000_000 + ts.microsecond


def partition_files(out, table="type=*"):
    return sorted(glob.glob(os.path.join(out, table, "year=*", "month=*", "part-0.parquet")))


def check_samples(out, ndjson):
    expected = []
    for line in open(ndjson, encoding="utf-8"):
        s = exact(line)
        start, start_off = instant(s["start"])
        end, end_off = instant(s["end"])
        meta = s.get("metadata")
        expected.append((s["type"], start, start_off, end, end_off, s.get("value"), s.get("unit"),
                         s.get("source"), s.get("device"), json.dumps(meta, sort_keys=True)))
    got = []
    for f in partition_files(out):
        table = pq.read_table(f)
        kind = table.schema.metadata[b"tsdb.type"].decode()
        folder = f.split(os.sep)[-4]
        short = "Workout" if kind == "HKWorkoutTypeIdentifier" else re.sub(r"^HK\w+TypeIdentifier", "", kind)
        assert folder == "type=" + short, (f, kind)
        for r in table.to_pylist():
            meta = None if r["metadata"] is None else exact(r["metadata"])
            if r["value_text"] is not None:
                assert float(r["value_text"]) == r["value"], (f, r)
            else:
                assert r["value"] is None, (f, r)
            got.append((kind, micros(r["start"]), r["utc_offset_minutes"], micros(r["end"]),
                        r["end_utc_offset_minutes"], r["value_text"], r["unit"], r["source"], r["device"],
                        json.dumps(meta, sort_keys=True)))
    assert len(got) == len(expected), f"{len(got)} rows in Parquet, {len(expected)} samples in tsdb"
    missing = sorted(set(expected) - set(got), key=repr)[:3]
    assert sorted(got, key=repr) == sorted(expected, key=repr), f"differ, e.g. tsdb has {missing}"
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/type=*/*/*/*.parquet', hive_partitioning=true)")
    assert n.fetchone()[0] == len(expected)
    print(f"{len(got)} samples equal in {len(partition_files(out))} files")


def check_daily(out, csv):
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    rows = con.execute(f"""SELECT strftime(date_trunc('day', start), '%Y-%m-%d'), count(*), min(value), max(value),
        avg(value) FROM read_parquet('{out}/type=HeartRate/*/*/*.parquet', hive_partitioning=true)
        GROUP BY 1 ORDER BY 1""").fetchall()
    lines = open(csv, encoding="utf-8").read().strip().splitlines()[1:]
    tsdb = [(c[0][:10], int(c[2]), float(c[3]), float(c[4]), float(c[5])) for c in (line.split(",") for line in lines)]
    tsdb = [r for r in tsdb if r[1] > 0]
    assert len(rows) == len(tsdb) and len(rows) > 0, (len(rows), len(tsdb))
    for d, t in zip(rows, tsdb):
        assert d[0] == t[0] and d[1] == t[1] and d[2] == t[2] and d[3] == t[3], (d, t)
        assert abs(d[4] - t[4]) <= 1e-9 * abs(t[4]), (d, t)
    print(f"{len(rows)} days equal")


def check_workouts(out, ndjson):
    expected = []
    for line in open(ndjson, encoding="utf-8"):
        s = exact(line)
        if s["type"] != "HKWorkoutTypeIdentifier":
            continue
        m = s.get("metadata") or {}
        start, _ = instant(s["start"])
        end, _ = instant(s["end"])
        expected.append((start, (end - start) / 1e6, m.get("workoutActivityType"), m.get("totalDistance"),
                         m.get("totalEnergyBurned"), s.get("source")))
    got = []
    for f in partition_files(out, "workouts"):
        for r in pq.read_table(f).to_pylist():
            got.append((micros(r["start"]), r["duration_seconds"], r["activity_type"], r["total_distance"],
                        r["total_energy_burned"], r["source"]))
            assert r["activity_name"], r
    def norm(rows):
        return sorted((a, b, None if c is None else int(c), None if d is None else float(d),
                       None if e is None else float(e), f) for a, b, c, d, e, f in rows)
    assert len(expected) > 0 and norm(got) == norm(expected), (len(got), len(expected))
    print(f"{len(got)} workouts equal")


def check_cohort(out, counts):
    expected = {}
    for line in open(counts, encoding="utf-8"):
        person, n = line.split()
        expected[person] = int(n)
    rows = duckdb.connect().execute(f"""SELECT person, count(*) FROM read_parquet(
        '{out}/person=*/type=HeartRate/year=*/month=*/*.parquet', hive_partitioning=true) GROUP BY person""").fetchall()
    assert {str(p): n for p, n in rows} == expected, rows
    print(f"{len(rows)} people, {sum(expected.values())} heart-rate samples")


if __name__ == "__main__":
    {"samples": check_samples, "daily": check_daily, "workouts": check_workouts,
     "cohort": check_cohort}[sys.argv[1]](*sys.argv[2:])
