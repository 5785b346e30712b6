#!/usr/bin/env python3
"""Side-by-side comparison of tsdb with DuckDB over Parquet and SQLite, on data written by
`tsdb generate`, in one run on one machine. See Benchmarks/compare/README.md.

  python3 Benchmarks/compare/compare.py [--quick] [--work DIR] [--tsdb PATH]

Writes Benchmarks/results/latest.{md,json,svg}. Every system's daily heart-rate aggregate is
checked against the others: a benchmark that computes something different is void.
"""
import argparse, collections, datetime, glob, json, math, os, platform, re, shutil, sqlite3, statistics
import shlex, subprocess, sys, tempfile, textwrap, time

HR = "HKQuantityTypeIdentifierHeartRate"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def timed(cmd, repeat=1):
    """Median wall time (s) of running `cmd`."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


SETTLE_SECONDS = 6
# Ingests of tsdb and DuckDB each, alternating (medians compared; peak memory the largest of them).
INGEST_ROUNDS = 3
# Target 4 (any bucket in any zone): the buckets and zones timed, and runs of each.
GRID_BUCKETS = ["minute", "15m", "hour", "day", "week", "month"]
GRID_ZONES = ["UTC", "Europe/Paris", "Asia/Kathmandu", "Australia/Lord_Howe"]
BUCKET_ROUNDS = 9


def settle():
    """Flushes the page cache to disk and waits before a timed run that creates files. This machine's
    ext4 has no journal, and without one a new file skips every inode deleted in the last 5-10 s
    (`recently_deleted` in ext4's inode allocator): after a few thousand deletions, compactions of
    the year took 0.32-0.87 s back to back, 40% of it the kernel looking up skipped inodes (perf),
    against 0.21-0.26 s after a sync and 6 s. Every system's timed ingest, and each timed new day,
    starts settled, as a user's run would, hours after the last."""
    os.sync()
    time.sleep(SETTLE_SECONDS)


def warm(raw):
    """Reads every day file once, untimed, before the alternating ingests. tsdb's run comes first in
    each round, and its first run read the files this VM had evicted while idle: 263 ms against 118
    and 130 for the year, 4.10 s against 1.09 and 1.10 for the heavy set, when DuckDB's three runs
    after it were within a tenth of each other (the run at d3be0eb, HISTORY.md)."""
    for path in glob.glob(os.path.join(raw, "**", "*.json"), recursive=True):
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass


def timed_with_memory(cmd):
    """Wall time (s) and peak RSS (bytes) of one run, via GNU time (fork+exec, so the figure
    is the child's own)."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    return elapsed, int(p.stderr.strip().splitlines()[-1]) * 1024


def hello_world(work):
    """A hello world linked as `.ci/setup fast` links tsdb (fully static: Swift runtime, libc, libstdc++
    and libgcc; no PIE, no dynamic symbols exported): what a whole `tsdb` process is measured against."""
    source, exe = os.path.join(work, "hello.swift"), os.path.join(work, "hello")
    with open(source, "w") as f:
        f.write('print("hello, world")\n')
    static = os.path.join(ROOT, ".build-static", "static-libs")
    run(["swiftc", "-O", "-static-stdlib", "-static-executable",
         "-Xlinker", "-no-pie", "-Xlinker", "--no-export-dynamic",
         "-Xclang-linker", f"-L{static}",
         "-Xclang-linker", "-static-libgcc", source, "-o", exe])
    return exe


def start_up(commands, runs=200):
    """Mean wall time (s) of each command, run alternately by hyperfine without a shell (`-N`), so no
    interpreter's own spawning cost is added to processes of a millisecond or two. Returns the times
    and how they were taken."""
    if shutil.which("hyperfine") is None:
        return [timed(c, repeat=51) for c in commands], "median of 51 runs each (hyperfine not found)"
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "times.json")
        run(["hyperfine", "-N", "-w", "10", "-r", str(runs), "--export-json", out]
            + [shlex.join(c) for c in commands])
        times = [r["mean"] for r in json.load(open(out))["results"]]
    version = run(["hyperfine", "--version"]).stdout.strip()
    return times, f"`{version} -N -w 10 -r {runs}`, means"


def instructions(commands, work):
    """Instructions each command executes, all threads (valgrind's callgrind): unlike times, the same on
    any host, so runs on machines 2-3x apart in speed still compare. valgrind reads stripped copies (it
    cannot read the static binaries' debug information). `commands` maps names to (command, setup,
    cleanup), the last two callables or None. Returns the counts and how they were taken, or None."""
    if shutil.which("valgrind") is None:
        return None
    counts = {}
    for name, (cmd, setup, cleanup) in commands.items():
        exe = os.path.join(work, "stripped-" + os.path.basename(cmd[0]))
        run(["strip", "--strip-debug", "-o", exe, cmd[0]])
        if setup:
            setup()
        p = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", exe] + cmd[1:])
        if cleanup:
            cleanup()
        counts[name] = int(re.search(r"Collected : (\d+)", p.stderr).group(1))
    return counts, f"`{run(['valgrind', '--version']).stdout.strip()} --tool=callgrind`, all threads"


def dir_bytes(path, pattern="**/*"):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(path, pattern), recursive=True) if os.path.isfile(f))


# ---------------------------------------------------------------------------- the systems

DUCK_INGEST = r"""
import duckdb, sys
raw, out = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.execute("SET threads TO 2")
con.execute(f'''
COPY (
  SELECT s.type AS type, s.start::TIMESTAMPTZ AS start, s."end"::TIMESTAMPTZ AS "end", s.value AS value,
         s.unit AS unit, s.source AS source, s.device AS device, s.metadata::VARCHAR AS metadata,
         year(s.start::TIMESTAMPTZ) AS year, month(s.start::TIMESTAMPTZ) AS month
  FROM (SELECT unnest(samples) AS s
        FROM read_json('{raw}/*/*/*.json',
                       columns={{date: 'VARCHAR', exported_at: 'VARCHAR', device_info: 'JSON',
                                 samples: 'STRUCT(type VARCHAR, start VARCHAR, "end" VARCHAR, value DOUBLE, unit VARCHAR, source VARCHAR, device VARCHAR, metadata JSON)[]'}},
                       maximum_object_size=1073741824))
) TO '{out}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (type, year, month), OVERWRITE_OR_IGNORE)
''')
"""

PEER_CONFIGURATIONS = (
    "DuckDB ingests with `read_json` and the samples typed as an explicit `STRUCT(...)[]` (its fastest form here: "
    "1.1 s on the year against 1.6 s for `JSON[]` with `->>`), 2 threads, into ZSTD Parquet partitioned by type, "
    "year and month, and queries that Parquet; the in-process figures are DuckDB's Python API timing the query alone, "
    "the whole-process ones a one-shot Python process. SQLite ingests through Python's json and one prepared "
    "`executemany` per day file inside a single transaction, then indexes (type, start) and VACUUMs; queries run "
    "in-process through Python's sqlite3 and end to end with the `sqlite3` CLI. tsdb runs `tsdb compact` and "
    "`tsdb query` (in-process: its own `--timings`, which include writing the rows). tsdb's and DuckDB's ingests "
    f"alternate, {INGEST_ROUNDS} of each, after the day files are read once untimed, and their medians are "
    "compared (peak memory: the largest of the runs); SQLite's is one run. Every timed ingest and each "
    f"timed new day starts after `sync` and a {SETTLE_SECONDS} s pause: this machine's ext4 has no journal, and "
    "without one creating a file skips the inodes deleted in the last 5-10 s, so a run right after another's "
    "deletions paid for them."
)

DUCK_DAILY = """SELECT date_trunc('day', start AT TIME ZONE 'UTC') AS day, count(*), min(value), max(value), avg(value)
FROM read_parquet('{pq}/type={hr}/*/*/*.parquet', hive_partitioning=true) GROUP BY 1 ORDER BY 1"""

DUCK_DAILY_ZONE = """SELECT strftime(date_trunc('day', start), '%Y-%m-%d') AS day, count(*), min(value), max(value), avg(value)
FROM read_parquet('{pq}/type={hr}/*/*/*.parquet', hive_partitioning=true)
WHERE start >= TIMESTAMPTZ '{a}' AND start < TIMESTAMPTZ '{b}' GROUP BY 1 ORDER BY 1"""

DUCK_ONESHOT = r"""
import duckdb, sys
con = duckdb.connect()
con.execute("SET TimeZone='" + (sys.argv[2] if len(sys.argv) > 2 else "UTC") + "'")
rows = con.execute(sys.argv[1]).fetchall()
print(len(rows))
"""

# A statement that returns no rows (COPY ... TO): run, not fetched.
DUCK_COPY = r"""
import duckdb, sys
con = duckdb.connect()
con.execute("SET TimeZone='UTC'")
con.execute(sys.argv[1])
"""


def csv_rows(path):
    """Data rows of a CSV file with a header (no field of these exports holds a new line)."""
    with open(path, "rb") as f:
        return sum(1 for _ in f) - 1


def check_rows(name, path, expected):
    """Void the comparison if a peer's export does not hold the rows tsdb's does."""
    found = csv_rows(path)
    if found != expected:
        raise SystemExit(f"{name} wrote {found} rows to {path}, tsdb {expected}: exports differ, comparison void")


SQLITE_INGEST = r"""
import json, sqlite3, sys, glob, datetime
raw, db = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
con.execute('CREATE TABLE samples(type TEXT, start INTEGER, "end" INTEGER, value REAL, unit TEXT, source TEXT, device TEXT, metadata TEXT)')
def us(t):
    d = datetime.datetime.fromisoformat(t.replace('Z', '+00:00'))
    return round(d.timestamp() * 1_000_000)
seen = set()
for path in sorted(glob.glob(raw + '/*/*/*.json')):
    with open(path) as f:
        day = json.load(f)
    rows = []
    for s in day['samples']:
        m = s.get('metadata')
        key = (s['type'], s['start'], s['end'], json.dumps(s.get('value')), s.get('source'), s.get('device'), json.dumps(m, sort_keys=True))
        if key in seen:       # a sample listed in two day files (a sleep stage across midnight)
            continue
        seen.add(key)
        rows.append((s['type'], us(s['start']), us(s['end']), s.get('value'), s.get('unit'), s.get('source'), s.get('device'),
                     None if m is None else json.dumps(m, separators=(',', ':'), sort_keys=True)))
    con.executemany('INSERT INTO samples VALUES (?,?,?,?,?,?,?,?)', rows)
con.execute('CREATE INDEX samples_type_start ON samples(type, start)')
con.commit()
con.execute('VACUUM')
"""

SQLITE_DAILY = f"""SELECT start / 86400000000 AS day, count(*), min(value), max(value), avg(value)
FROM samples WHERE type = '{HR}' GROUP BY 1 ORDER BY 1"""


class Tsdb:
    def __init__(self, exe):
        self.exe = exe

    def compact(self, folder, *extra):
        t = time.perf_counter()
        p = run([self.exe, "compact", folder, *extra])
        elapsed = time.perf_counter() - t
        peak = re.search(r"peak ([\d.]+) (B|KB|MB|GB)", p.stdout)
        scale = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}
        return elapsed, float(peak.group(1)) * scale[peak.group(2)] if peak else float("nan"), p.stdout

    def steps(self, folder, year_range):
        """The year's daily steps as the Health app counts them (phone and watch overlapping, each
        stretch of time once, prorated): rows and tsdb's in-process milliseconds."""
        p = run([self.exe, "query", "StepCount", "--range", year_range, "--bucket", "day", "--tz", "UTC",
                 "--format", "csv", "--timings", "--store", folder])
        ms = float(re.search(r"aggregate and output ([\d.]+) ms", p.stderr).group(1))
        return len(p.stdout.strip().splitlines()) - 1, ms / 1000

    def bucketed(self, folder, year_range, bucket, tz):
        """The year's heart rate per `bucket` in zone `tz` as CSV to /dev/null: tsdb's in-process
        seconds (`--timings`: aggregate and output, the store's opening excluded)."""
        cmd = [self.exe, "query", "HeartRate", "--range", year_range, "--bucket", bucket, "--tz", tz,
               "--stats", "count,min,max,mean", "--format", "csv", "--timings", "--store", folder]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
        return float(re.search(r"aggregate and output ([\d.]+) ms", p.stderr).group(1)) / 1000

    def daily(self, folder, year_range, tz="UTC"):
        p = run([self.exe, "query", "HeartRate", "--range", year_range, "--bucket", "day", "--tz", tz,
                 "--stats", "count,min,max,mean", "--format", "csv", "--timings", "--store", folder])
        rows = [line.split(",") for line in p.stdout.strip().splitlines()[1:]]
        # Aggregates stream to the output as they are computed: the figure covers both.
        ms = float(re.search(r"aggregate and output ([\d.]+) ms", p.stderr).group(1))
        return [(r[0][:10], int(r[2]), float(r[3]), float(r[4]), float(r[5])) for r in rows], ms / 1000


# ---------------------------------------------------------------------------- measurements

def entropy_bits(values):
    counts = collections.Counter(values)
    n = len(values)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def heart_rate_entropy(tsdb, folder, year_range):
    """Order-0 empirical entropy of the heart-rate columns as stored (start deltas, value deltas,
    motion context): the bytes per sample a perfect order-0 coder of these columns would need."""
    p = subprocess.run([tsdb.exe, "query", "HeartRate", "--range", year_range, "--format", "csv", "--store", folder],
                       check=True, capture_output=True, text=True)
    starts, values, contexts = [], [], []
    for line in p.stdout.splitlines()[1:]:
        f = line.split(",")
        starts.append(datetime.datetime.fromisoformat(f[1]).timestamp())
        values.append(float(f[3]))
        m = re.search(r"Context\"\"?:(\d)", line)
        contexts.append(m.group(1) if m else "")
    ds = [round(b - a) for a, b in zip(starts, starts[1:])]
    dv = [round(b - a, 3) for a, b in zip(values, values[1:])]
    bits = entropy_bits(ds) + entropy_bits(dv) + entropy_bits(contexts)
    return bits / 8, len(starts)


def memory_bandwidth():
    import numpy
    a = numpy.ones(256 * 1024 * 1024 // 8, dtype=numpy.int64)
    a.sum()
    best = min(timed_call(a.sum) for _ in range(5))
    return a.nbytes / best


def timed_call(f, repeat=1):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def check_same(name, tsdb_rows, other_rows):
    """Void the comparison if a peer computes different daily numbers."""
    if len(tsdb_rows) != len(other_rows):
        raise SystemExit(f"{name} returned {len(other_rows)} days, tsdb {len(tsdb_rows)}: results differ, comparison void")
    for a, b in zip(tsdb_rows, other_rows):
        same = a[1] == b[1] and a[2] == b[2] and a[3] == b[3] and abs(a[4] - b[4]) <= 1e-9 * max(1, abs(a[4]))
        if not same:
            raise SystemExit(f"{name} differs from tsdb on {a[0]}: {b} vs {a}: comparison void")


def measure(label, folder, tsdb, year_range, export_range, work, incremental_day=None, day_put_back=None):
    raw = os.path.join(folder, "raw")
    r = {"label": label}
    json_bytes = dir_bytes(raw, "**/*.json")
    r["json_bytes"] = json_bytes

    # Ingest: tsdb and DuckDB in turn, INGEST_ROUNDS times each, their medians compared, so a slow
    # minute of this shared host (it moves the year's compaction by a fifth) falls on both, not on
    # one system's only run. The first tsdb run starts with no store, the others rebuild it.
    shutil.rmtree(os.path.join(folder, "tsdb"), ignore_errors=True)
    pq = os.path.join(work, label + "-parquet")
    tsdb_runs, duck_runs = [], []
    warm(raw)
    for k in range(INGEST_ROUNDS):
        settle()
        tsdb_runs.append(tsdb.compact(folder, *([] if k == 0 else ["--rebuild"]))[:2])
        shutil.rmtree(pq, ignore_errors=True)
        settle()
        duck_runs.append(timed_with_memory([sys.executable, "-c", DUCK_INGEST, raw, pq]))
    r["tsdb_ingest_s"] = statistics.median(t for t, _ in tsdb_runs)
    r["tsdb_peak_bytes"] = max(m for _, m in tsdb_runs)
    r["duck_ingest_s"] = statistics.median(t for t, _ in duck_runs)
    r["duck_peak_bytes"] = max(m for _, m in duck_runs)
    r["ingest_runs"] = {"tsdb": [t for t, _ in tsdb_runs], "duckdb": [t for t, _ in duck_runs]}
    db = os.path.join(work, label + ".sqlite")
    if os.path.exists(db):
        os.remove(db)
    settle()
    r["sqlite_ingest_s"], r["sqlite_peak_bytes"] = timed_with_memory([sys.executable, "-c", SQLITE_INGEST, raw, db])

    # Sizes: the current generation's segments (from the manifest) plus the manifest itself;
    # the previous generation's files, kept for open readers, are not part of the store.
    rows = [line.split(",") for line in run([tsdb.exe, "stats", "--format", "csv", "--store", folder]).stdout.splitlines()[1:]]
    stats = {t: (int(n), int(b)) for t, n, _, b in rows}
    r["samples"] = sum(n for n, _ in stats.values())
    r["hr_samples"], r["tsdb_hr_bytes"] = stats[HR]
    r["tsdb_bytes"] = sum(b for _, b in stats.values()) + os.path.getsize(os.path.join(folder, "tsdb", "MANIFEST"))
    r["parquet_hr_bytes"] = dir_bytes(os.path.join(pq, f"type={HR}"))
    r["parquet_bytes"] = dir_bytes(pq)
    r["sqlite_bytes"] = os.path.getsize(db)

    # The daily heart-rate aggregate, UTC days (SQLite has no time zones).
    import duckdb
    tsdb_rows, tsdb_ms = tsdb.daily(folder, year_range)
    in_process = [tsdb.daily(folder, year_range)[1] for _ in range(15)]
    r["tsdb_daily_inproc_s"] = statistics.median(in_process)
    query = DUCK_DAILY.format(pq=pq, hr=HR)
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    duck_rows = [(str(d)[:10], c, mn, mx, av) for d, c, mn, mx, av in con.execute(query).fetchall()]
    r["duck_daily_inproc_s"] = timed_call(lambda: con.execute(query).fetchall(), repeat=15)
    lite = sqlite3.connect(db)
    lite_rows = [(datetime.datetime.fromtimestamp(d * 86400, datetime.timezone.utc).strftime("%Y-%m-%d"), c, mn, mx, av)
                 for d, c, mn, mx, av in lite.execute(SQLITE_DAILY).fetchall()]
    r["sqlite_daily_inproc_s"] = timed_call(lambda: lite.execute(SQLITE_DAILY).fetchall(), repeat=5)
    first_day, last_day = year_range.split("..") if ".." in year_range else (year_range + "-01-01", str(int(year_range) + 1) + "-01-01")
    duck_rows = [x for x in duck_rows if first_day <= x[0] < last_day]
    lite_rows = [x for x in lite_rows if first_day <= x[0] < last_day]
    check_same("DuckDB", tsdb_rows, duck_rows)
    check_same("SQLite", tsdb_rows, lite_rows)
    r["daily_rows"] = len(tsdb_rows)

    # Days in the wearer's own zone (DST-correct); SQLite has no time zones.
    zone = "Europe/Paris"
    tsdb_zone_rows, _ = tsdb.daily(folder, year_range, zone)
    r["tsdb_zone_inproc_s"] = statistics.median([tsdb.daily(folder, year_range, zone)[1] for _ in range(15)])
    zq = DUCK_DAILY_ZONE.format(pq=pq, hr=HR, a=f"{first_day} 00:00:00 {zone}", b=f"{last_day} 00:00:00 {zone}")
    zcon = duckdb.connect()
    zcon.execute(f"SET TimeZone='{zone}'")
    check_same("DuckDB (Europe/Paris)", tsdb_zone_rows, [tuple(x) for x in zcon.execute(zq).fetchall()])
    r["duck_zone_inproc_s"] = timed_call(lambda: zcon.execute(zq).fetchall(), repeat=15)
    r["tsdb_zone_process_s"] = timed([tsdb.exe, "query", "HeartRate", "--range", year_range, "--bucket", "day", "--tz", zone,
                                      "--stats", "count,min,max,mean", "--format", "csv", "--store", folder], repeat=21)
    r["duck_zone_process_s"] = timed([sys.executable, "-c", DUCK_ONESHOT, zq, zone], repeat=7)

    # Target 4's "any bucket in any zone": tsdb alone (ranges.py has DuckDB's answers to such
    # questions), the combinations taking turns run by run.
    times = {}
    for _ in range(BUCKET_ROUNDS):
        for bucket in GRID_BUCKETS:
            for tz in GRID_ZONES:
                times.setdefault(f"{bucket} {tz}", []).append(tsdb.bucketed(folder, year_range, bucket, tz))
    r["bucket_grid_s"] = {k: statistics.median(v) for k, v in times.items()}
    r["bucket_year"] = year_range

    # Whole process, as a person would run it.
    # Daily steps, counted once where the phone and the watch overlap: no peer counts that way
    # (their sums would count both), so tsdb alone.
    r["steps_rows"], _ = tsdb.steps(folder, year_range)
    r["tsdb_steps_inproc_s"] = statistics.median(tsdb.steps(folder, year_range)[1] for _ in range(15))
    r["tsdb_steps_process_s"] = timed([tsdb.exe, "query", "StepCount", "--range", year_range, "--bucket", "day",
                                       "--tz", "UTC", "--format", "csv", "--store", folder], repeat=21)
    r["tsdb_daily_process_s"] = timed([tsdb.exe, "query", "HeartRate", "--range", year_range, "--bucket", "day", "--tz", "UTC",
                                       "--stats", "count,min,max,mean", "--format", "csv", "--store", folder], repeat=21)
    r["duck_daily_process_s"] = timed([sys.executable, "-c", DUCK_ONESHOT, query], repeat=7)
    r["sqlite_daily_process_s"] = timed(["sqlite3", db, SQLITE_DAILY], repeat=7)

    # Three months of raw heart-rate samples to CSV.
    a, b = export_range
    out = os.path.join(work, "export.csv")
    # Instants, so the end is excluded as in DuckDB's query below (a date as the end is included).
    r["tsdb_export_s"] = timed(["sh", "-c", f"'{tsdb.exe}' query HeartRate --range {a}T00:00Z..{b}T00:00Z --tz UTC --format csv --store '{folder}' > '{out}'"], repeat=5)
    r["export_rows"] = csv_rows(out)
    duck_export = (f"COPY (SELECT * FROM read_parquet('{pq}/type={HR}/*/*/*.parquet', hive_partitioning=true) "
                   f"WHERE start >= TIMESTAMPTZ '{a} 00:00:00+00' AND start < TIMESTAMPTZ '{b} 00:00:00+00' ORDER BY start) TO '{out}' (HEADER)")
    r["duck_export_s"] = timed([sys.executable, "-c", DUCK_COPY, duck_export], repeat=5)
    check_rows("DuckDB", out, r["export_rows"])
    ua = int(datetime.datetime.fromisoformat(a + "T00:00:00+00:00").timestamp() * 1e6)
    ub = int(datetime.datetime.fromisoformat(b + "T00:00:00+00:00").timestamp() * 1e6)
    r["sqlite_export_s"] = timed(["sh", "-c", f"sqlite3 -csv -header '{db}' \"SELECT * FROM samples WHERE type='{HR}' AND start >= {ua} AND start < {ub} ORDER BY start\" > '{out}'"], repeat=5)
    check_rows("SQLite", out, r["export_rows"])

    # One more day into the store.
    if incremental_day:
        src, rel = incremental_day
        dst = os.path.join(raw, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(src, dst)
        # Eleven cycles: a compaction of ten-odd milliseconds varies widely with this VM's other
        # work (15 cycles on 2026-11-27: 14.0 to 54.7 ms, median 16.6), too widely for three.
        times = []
        for _ in range(11):
            settle()
            times.append(tsdb.compact(folder)[0])
            os.remove(dst)
            tsdb.compact(folder)
            shutil.copy(src, dst)
        os.remove(dst)
        tsdb.compact(folder)
        r["tsdb_incremental_s"] = statistics.median(times)

    # The store's last day taken out and put back: a day into a month the store has, as on most days
    # (the new day above starts a month); it also moves the month's other segments into its file.
    if day_put_back:
        path = os.path.join(raw, day_put_back)
        kept = os.path.join(work, "last-day.json")
        shutil.copy(path, kept)
        times = []
        try:
            for _ in range(11):
                os.remove(path)
                tsdb.compact(folder)
                shutil.copy(kept, path)
                settle()
                times.append(tsdb.compact(folder)[0])
        finally:
            if not os.path.exists(path):
                shutil.copy(kept, path)
                tsdb.compact(folder)
            os.remove(kept)
        r["tsdb_last_day_s"] = statistics.median(times)
    return r


# ---------------------------------------------------------------------------- report

def fmt_s(s):
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def fmt_b(b):
    for unit in ["B", "KB", "MB", "GB"]:
        if b < 1000 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1000


def report(results, limits, machine):
    lines = [f"Run {machine['date']} on {machine['cpus']} cores ({machine['cpu']}), {machine['os']}; "
             f"DuckDB {machine['duckdb']}, SQLite {machine['sqlite']}; tsdb release build as run.sh makes it "
             "(`.ci/setup fast`: fully static, Swift runtime, libc, libstdc++, libgcc, zstd, lz4 and zlib "
             "linked in, no PIE, no dynamic symbols exported, generic metadata through direct accessors, "
             "the short commands' functions placed together).", "",
             "How each system ran: " + PEER_CONFIGURATIONS, ""]
    for r in results:
        mbps = lambda s: r["json_bytes"] / s / 1e6
        lines += [f"### {r['label']}: {r['samples']:,} samples, {r['hr_samples']:,} heart rate, {fmt_b(r['json_bytes'])} of JSON", "",
                  "| measure | tsdb | DuckDB + Parquet | SQLite | tsdb vs DuckDB | tsdb vs SQLite |", "|---|---|---|---|---|---|"]
        def row(name, t, d, s, better="lower", unit=fmt_s):
            ratio = lambda x: (x / t if better == "lower" else t / x) if t and x else float("nan")
            lines.append(f"| {name} | {unit(t)} | {unit(d)} | {unit(s)} | {ratio(d):.1f}× | {ratio(s):.1f}× |")
        row(f"ingest (JSON → store; tsdb and DuckDB: medians of {INGEST_ROUNDS}, alternating)", r["tsdb_ingest_s"], r["duck_ingest_s"], r["sqlite_ingest_s"])
        lines.append(f"| ingest throughput | {mbps(r['tsdb_ingest_s']):.0f} MB/s | {mbps(r['duck_ingest_s']):.0f} MB/s | {mbps(r['sqlite_ingest_s']):.0f} MB/s | | |")
        row("ingest peak memory", r["tsdb_peak_bytes"], r["duck_peak_bytes"], r["sqlite_peak_bytes"], unit=fmt_b)
        hr = lambda b: f"{b / r['hr_samples']:.2f} B"
        lines.append(f"| heart rate bytes/sample (all columns) | {hr(r['tsdb_hr_bytes'])} | {hr(r['parquet_hr_bytes'])} | n/a (one table) | "
                     f"{r['parquet_hr_bytes'] / r['tsdb_hr_bytes']:.1f}× smaller | |")
        allb = lambda b: f"{b / r['samples']:.2f} B"
        lines.append(f"| whole store bytes/sample (JSON: {r['json_bytes'] / r['samples']:.0f} B) | {allb(r['tsdb_bytes'])} | {allb(r['parquet_bytes'])} | {allb(r['sqlite_bytes'])} | "
                     f"{r['parquet_bytes'] / r['tsdb_bytes']:.1f}× smaller | {r['sqlite_bytes'] / r['tsdb_bytes']:.1f}× smaller |")
        row(f"daily HR count/min/max/mean, UTC days, in-process ({r['daily_rows']} days)", r["tsdb_daily_inproc_s"], r["duck_daily_inproc_s"], r["sqlite_daily_inproc_s"])
        row("same, whole process (`tsdb query` / Python one-shot / `sqlite3` CLI)", r["tsdb_daily_process_s"], r["duck_daily_process_s"], r["sqlite_daily_process_s"])
        lines.append(f"| daily HR in the wearer's zone (Europe/Paris), in-process | {fmt_s(r['tsdb_zone_inproc_s'])} | {fmt_s(r['duck_zone_inproc_s'])} | "
                     f"n/a (no time zones) | {r['duck_zone_inproc_s'] / r['tsdb_zone_inproc_s']:.1f}× | |")
        lines.append(f"| same, whole process | {fmt_s(r['tsdb_zone_process_s'])} | {fmt_s(r['duck_zone_process_s'])} | n/a | "
                     f"{r['duck_zone_process_s'] / r['tsdb_zone_process_s']:.1f}× | |")
        if "tsdb_steps_inproc_s" in r:
            lines.append(f"| daily steps, phone and watch overlapping counted once (Health app's way), in-process "
                         f"({r['steps_rows']} days) / whole process | {fmt_s(r['tsdb_steps_inproc_s'])} / "
                         f"{fmt_s(r['tsdb_steps_process_s'])} | n/a (sums count both) | n/a (sums count both) | | |")
        row(f"three months of raw heart rate to CSV ({r['export_rows']:,} rows each)", r["tsdb_export_s"],
            r["duck_export_s"], r["sqlite_export_s"])
        if "tsdb_incremental_s" in r:
            lines.append(f"| one new day into the store (tsdb: incremental compact, median of 11) | {fmt_s(r['tsdb_incremental_s'])} "
                         f"({r['tsdb_incremental_s'] / r['tsdb_ingest_s'] * 100:.1f}% of a full compaction) | | | | |")
        if "tsdb_last_day_s" in r:
            lines.append(f"| one day into a month the store has (its last day taken out and put back, median of 11) | "
                         f"{fmt_s(r['tsdb_last_day_s'])} ({r['tsdb_last_day_s'] / r['tsdb_ingest_s'] * 100:.1f}% of "
                         f"a full compaction) | | | | |")
        lines.append("")
        if "bucket_grid_s" in r:
            grid = r["bucket_grid_s"]
            lines += [f"Heart rate per bucket over {r['bucket_year']}, count/min/max/mean as CSV, tsdb in-process "
                      f"(`tsdb query --timings`: aggregating and writing the rows; medians of {BUCKET_ROUNDS}, "
                      "the combinations taking turns):", "",
                      "| bucket | " + " | ".join(GRID_ZONES) + " |", "|---" * (len(GRID_ZONES) + 1) + "|"]
            for bucket in GRID_BUCKETS:
                lines.append(f"| {bucket} | " + " | ".join(f"{grid[f'{bucket} {tz}'] * 1000:.2f} ms" for tz in GRID_ZONES) + " |")
            lines.append("")
    lines += ["### The machine's limits", "",
              f"- Memory read bandwidth (numpy sum over 256 MiB, one core): {limits['bandwidth'] / 1e9:.1f} GB/s; tsdb's daily aggregate "
              f"decodes {limits['decode_rate'] / 1e6:.0f} M heart-rate samples/s including everything "
              f"({limits['decode_rate'] * 16 / 1e9:.2f} GB/s of decoded 16-byte start+value pairs).",
              f"- Empirical order-0 entropy of the heart-rate columns (start deltas, value deltas, motion context): "
              f"{limits['entropy']:.2f} bytes/sample; tsdb stores {limits['tsdb_hr']:.2f} bytes/sample with every "
              "column and all overhead."]
    if "start_up" in limits:
        u = limits["start_up"]
        vs = lambda t: f"{fmt_s(t)} ({t / u['hello_s']:.1f}× the hello world)"
        lines.append(f"- Start-up ({u['how']}): a hello world linked as tsdb's fast build is "
                     f"{fmt_s(u['hello_s'])}; `tsdb --version` {vs(u['version_s'])}; the year's daily heart "
                     f"rate as a whole `tsdb query` (CSV) {vs(u['utc_s'])} in UTC days and {vs(u['zone_s'])} "
                     "in Europe/Paris days.")
    if "instructions" in limits:
        n, how = limits["instructions"]
        m = lambda k: f"{n[k] / 1e6:.2f}M"
        lines.append(f"- Instructions ({how}; the same on any host, unlike the times above): the hello world "
                     f"{m('hello')}; `tsdb --version` {m('version')}; the year's daily heart rate as a whole `tsdb query` "
                     f"{m('utc')} in UTC days and {m('zone')} in Europe/Paris days; `tsdb compact` with nothing to do "
                     f"{m('unchanged')}, with one new day {m('new_day')}.")
    lines.append("")
    lines.append("Every system's daily numbers were checked equal to tsdb's (count, min, max exactly; mean to 1e-9) before timing, "
                 "and every system's CSV export counted to hold as many rows as tsdb's after it.")
    return "\n".join(lines)


def svg(results):
    """Bars of time (log scale) and size per system, no plotting library needed."""
    r = results[0]
    groups = [("ingest", "ingest_s"), ("daily, UTC days", "daily_inproc_s"), ("daily, own zone", "zone_inproc_s"),
              ("daily, whole process", "daily_process_s"), ("3-month CSV", "export_s")]
    systems = [("tsdb", "tsdb_", "#2a7ae2"), ("DuckDB+Parquet", "duck_", "#e2a12a"), ("SQLite", "sqlite_", "#7a7a7a")]
    w, h, top, left = 900, 360, 40, 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 145}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h + 145}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">{r["label"]}: time per task (log scale, lower is better) and bytes per heart-rate sample</text>',
           f'<text x="{left}" y="34" font-size="11">daily = heart-rate count/min/max/mean per day over the year, in-process; whole process = UTC days, process start included</text>']
    lo, hi = -4, 3  # 0.1 ms … 1000 s
    def y(seconds):
        return top + h - 40 - (math.log10(max(seconds, 1e-4)) - lo) / (hi - lo) * (h - 80)
    gw = (w - left - 20) / len(groups)
    for gi, (name, key) in enumerate(groups):
        for si, (sname, prefix, color) in enumerate(systems):
            v = r.get(prefix + key)
            if v is None:
                continue
            x = left + gi * gw + 10 + si * (gw - 20) / 3
            out.append(f'<rect x="{x:.0f}" y="{y(v):.0f}" width="{(gw - 30) / 3:.0f}" height="{top + h - 40 - y(v):.0f}" fill="{color}"/>')
            out.append(f'<text x="{x:.0f}" y="{y(v) - 3:.0f}" font-size="10">{fmt_s(v)}</text>')
        out.append(f'<text x="{left + gi * gw + 10:.0f}" y="{top + h - 25}">{name}</text>')
    for i, (sname, _, color) in enumerate(systems):
        out.append(f'<rect x="{left + i * 150}" y="{top + h}" width="12" height="12" fill="{color}"/><text x="{left + i * 150 + 16}" y="{top + h + 11}">{sname}</text>')
    sizes = [("tsdb", r["tsdb_hr_bytes"] / r["hr_samples"]), ("Parquet", r["parquet_hr_bytes"] / r["hr_samples"]), ("JSON", r["json_bytes"] / r["samples"])]
    for i, (name, b) in enumerate(sizes):
        bar = b / sizes[-1][1] * 480 + 2
        out.append(f'<rect x="{left + 80}" y="{top + h + 30 + i * 22}" width="{bar:.0f}" height="16" fill="#2a7ae2"/>'
                   f'<text x="{left}" y="{top + h + 43 + i * 22}">{name}</text><text x="{left + 90 + bar:.0f}" y="{top + h + 43 + i * 22}">{b:.2f} B/sample</text>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="only the realistic year, not the heavy five-year set")
    ap.add_argument("--work", default="/tmp/tsdb-compare")
    ap.add_argument("--tsdb", default=os.path.join(ROOT, ".build-static/release/tsdb"))
    ap.add_argument("--replot", action="store_true", help="redraw latest.svg from latest.json, measure nothing")
    args = ap.parse_args()
    if args.replot:
        results = json.load(open(os.path.join(ROOT, "Benchmarks", "results", "latest.json")))["results"]
        with open(os.path.join(ROOT, "Benchmarks", "results", "latest.svg"), "w") as f:
            f.write(svg(results))
        return
    tsdb = Tsdb(args.tsdb)
    os.makedirs(args.work, exist_ok=True)
    import duckdb
    machine = {"date": datetime.date.today().isoformat(), "cpus": os.cpu_count(), "os": platform.platform(),
               "cpu": next((l.split(":")[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor()),
               "duckdb": duckdb.__version__, "sqlite": sqlite3.sqlite_version}

    year = os.path.join(args.work, "year")
    if not os.path.isdir(os.path.join(year, "raw")):
        print("generating a realistic year…", flush=True)
        run([tsdb.exe, "generate", year, "--days", "365", "--start", "2025-01-01"])
    extra = os.path.join(args.work, "year-plus-one")
    if not os.path.isdir(extra):
        run([tsdb.exe, "generate", extra, "--days", "366", "--start", "2025-01-01"])
    # The day the new-day timing adds must not be there already: left by an interrupted run or by
    # hand (ab.py, a profile), it made the year 366 days and the "new" day an unchanged one.
    leftover = os.path.join(year, "raw/2026/01/2026-01-01.json")
    if os.path.exists(leftover):
        sys.exit(f"error: {leftover} is already in the year (a new day left from an earlier run?); "
                 "remove it, or use a fresh --work")
    print("measuring the year…", flush=True)
    results = [measure("A realistic year", year, tsdb, "2025", ("2025-03-01", "2025-06-01"), args.work,
                       incremental_day=(os.path.join(extra, "raw/2026/01/2026-01-01.json"), "2026/01/2026-01-01.json"),
                       day_put_back="2025/12/2025-12-31.json")]
    limits = {"bandwidth": memory_bandwidth(), "decode_rate": results[0]["hr_samples"] / results[0]["tsdb_daily_inproc_s"]}
    limits["entropy"], _ = heart_rate_entropy(tsdb, year, "2025")
    limits["tsdb_hr"] = results[0]["tsdb_hr_bytes"] / results[0]["hr_samples"]
    daily = lambda tz: [tsdb.exe, "query", "HeartRate", "--range", "2025", "--bucket", "day", "--tz", tz,
                        "--stats", "count,min,max,mean", "--format", "csv", "--store", year]
    commands = [[hello_world(args.work)], [tsdb.exe, "--version"], daily("UTC"), daily("Europe/Paris")]
    times, how = start_up(commands)
    limits["start_up"] = dict(zip(["hello_s", "version_s", "utc_s", "zone_s"], times), how=how)
    new_day = os.path.join(year, "raw/2026/01/2026-01-01.json")
    def add_day():
        os.makedirs(os.path.dirname(new_day), exist_ok=True)
        shutil.copy(os.path.join(extra, "raw/2026/01/2026-01-01.json"), new_day)
    def remove_day():
        os.remove(new_day)
        tsdb.compact(year)
    compact = [tsdb.exe, "compact", "--store", year]
    counted = instructions({"hello": (commands[0], None, None), "version": (commands[1], None, None),
                            "utc": (commands[2], None, None), "zone": (commands[3], None, None),
                            "unchanged": (compact, None, None), "new_day": (compact, add_day, remove_day)}, args.work)
    if counted:
        limits["instructions"] = counted
    if not args.quick:
        heavy = os.path.join(args.work, "heavy")
        if not os.path.isdir(os.path.join(heavy, "raw")):
            print("generating the heavy five-year set…", flush=True)
            run([tsdb.exe, "generate", heavy, "--days", "1826", "--start", "2021-01-01", "--heavy"])
        print("measuring the heavy set…", flush=True)
        results.append(measure("A heavy five years", heavy, tsdb, "2025", ("2025-03-01", "2025-06-01"), args.work))
    text = report(results, limits, machine)
    print(text)
    out = os.path.join(ROOT, "Benchmarks", "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "latest.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "latest.json"), "w") as f:
        json.dump({"machine": machine, "limits": limits, "results": results}, f, indent=1)
    with open(os.path.join(out, "latest.svg"), "w") as f:
        f.write(svg(results))


if __name__ == "__main__":
    main()
