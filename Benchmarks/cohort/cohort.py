"""A cohort beyond one machine: N people's stores exported as Parquet into one folder, and the same
cohort question answered by DuckDB and by Spark (local mode), with the answers compared.

    Benchmarks/cohort/run.sh [--people 50] [--days 90] [--tsdb PATH] [--keep DIR]

The question: per person and month, heart-rate count, mean, and the share of samples above 100
bpm, over `person=*/type=HeartRate/year=*/month=*/part-0.parquet`. Spark reads the same files
with partition discovery (`basePath`), as it would from HDFS or S3.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

QUESTION = """SELECT person, year, month, count(*) AS samples, avg(value) AS mean_bpm,
       avg(CAST(value > 100 AS DOUBLE)) AS share_above_100
FROM hr GROUP BY person, year, month ORDER BY person, year, month"""


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    return p


def build_cohort(tsdb, people, days, work):
    out = os.path.join(work, "cohort")
    t = time.perf_counter()
    for k in range(1, people + 1):
        person = f"p{k:03d}"
        store = os.path.join(work, "stores", person)
        run([tsdb, "generate", store, "--days", str(days), "--seed", str(k)])
        run([tsdb, "compact", "--store", store])
        run([tsdb, "export", "--store", store, "--format", "parquet", "--out", out, "--person", person])
        shutil.rmtree(store)
    print(f"{people} people × {days} days generated, compacted and exported in {time.perf_counter() - t:.1f} s")
    return out


def duckdb_answer(out):
    import duckdb
    con = duckdb.connect()
    t = time.perf_counter()
    con.execute(f"""CREATE VIEW hr AS SELECT * FROM read_parquet(
        '{out}/person=*/type=HeartRate/year=*/month=*/*.parquet', hive_partitioning = true)""")
    rows = con.execute(QUESTION).fetchall()
    return rows, time.perf_counter() - t


def spark_answer(out):
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[*]").appName("tsdb-cohort")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t = time.perf_counter()
    files = sorted(glob.glob(f"{out}/person=*/type=HeartRate/year=*/month=*/*.parquet"))
    spark.read.option("basePath", out).parquet(*files).createOrReplaceTempView("hr")
    rows = [tuple(r) for r in spark.sql(QUESTION).collect()]
    elapsed = time.perf_counter() - t
    spark.stop()
    return rows, elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--people", type=int, default=50)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--tsdb", default=os.path.join(ROOT, ".build/release/tsdb"))
    ap.add_argument("--keep", help="export into this (new) folder and keep it")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="tsdb-cohort-")
    try:
        out = build_cohort(args.tsdb, args.people, args.days, work)
        duck, duck_s = duckdb_answer(out)
        print(f"DuckDB: {len(duck)} rows in {duck_s * 1e3:.0f} ms")
        spark, spark_s = spark_answer(out)
        print(f"Spark (local mode): {len(spark)} rows in {spark_s * 1e3:.0f} ms (session start-up excluded)")
        def same(a, b):
            keys_equal = (str(a[0]), int(a[1]), int(a[2]), a[3]) == (str(b[0]), int(b[1]), int(b[2]), b[3])
            return keys_equal and all(abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(x))) for x, y in zip(a[4:], b[4:]))
        if len(duck) != len(spark) or not all(same(a, b) for a, b in zip(duck, spark)):
            bad = next(((a, b) for a, b in zip(duck, spark) if not same(a, b)), None)
            sys.exit(f"DuckDB and Spark disagree: {len(duck)} vs {len(spark)} rows; first difference {bad}")
        print("DuckDB and Spark agree on every row; first rows:")
        for r in duck[:3]:
            print("  ", r)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
