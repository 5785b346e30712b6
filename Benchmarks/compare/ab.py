#!/usr/bin/env python3
"""Two or more tsdb builds side by side on one compaction, runs alternating: how a change to the
compactor is judged on this VM, where back-to-back runs of one build move by a fifth.

    python3 Benchmarks/compare/ab.py [--work DIR] [--rounds N] [--pause S] [--settle]
                                     [--case new-day|last-day|unchanged|rebuild] BUILD BUILD...

Cases, on the year `compare.py` generates under --work (made here when missing): `new-day`, one day
file added to the year and compacted (as the runner's new day: it starts a month); `last-day`, the
year's last day file taken out and compacted, then put back and compacted (timed): a day added to
a month the store has, as on most days; `unchanged`, a compaction with nothing to do; `rebuild`, a
fresh full compaction (the store deleted first). Each round runs every
build once, in turn, after `sync` and a pause (--settle: 6 s, as the runner). Prints each build's
median wall time, quartiles and every time (ms, from `posix_spawn` to `wait4`), and its median CPU
time (user and system, all threads: steadier than wall time on this VM).

Each build is first copied to a new file, and that copy is what runs: an identical copy of a
build, written just before, ran a compaction with nothing to do in 2.61 ms against the original's
3.12 (25 alternating runs each, `--as-is`, at c38afd1, the original an hour old). The page cache
keeps a program's code as it was read, and this VM's DAMON reclaims pages idle for a minute, so an
old file's code likely comes back in smaller pieces; a fresh build against an old one would win by
that alone (`--as-is` runs the files given, to see it).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import run

NEW_DAY = "raw/2026/01/2026-01-01.json"
LAST_DAY = "raw/2025/12/2025-12-31.json"


def prepare(work, tsdb):
    """The year and the day after it, as `compare.py` makes them."""
    year, extra = os.path.join(work, "year"), os.path.join(work, "year-plus-one")
    if not os.path.isdir(os.path.join(year, "raw")):
        run([tsdb, "generate", year, "--days", "365", "--start", "2025-01-01"])
    if not os.path.isdir(os.path.join(extra, "raw")):
        run([tsdb, "generate", extra, "--days", "366", "--start", "2025-01-01"])
    return year, os.path.join(extra, NEW_DAY)


def timed(build, args):
    """Wall and CPU ms (user and system, all threads) of one run of `build args`, output discarded."""
    with open(os.devnull, "wb") as null:
        actions = [(os.POSIX_SPAWN_DUP2, null.fileno(), 1), (os.POSIX_SPAWN_DUP2, null.fileno(), 2)]
        start = time.perf_counter_ns()
        pid = os.posix_spawn(build, [build] + args, os.environ, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        elapsed = (time.perf_counter_ns() - start) / 1e6
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {build} {' '.join(args)}")
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1e3


def one_round(case, build, year, day_source, pause, last_day_copy):
    """Puts the store in the case's starting state with `build`, then times the case once."""
    day = os.path.join(year, NEW_DAY)
    if os.path.exists(day):
        os.remove(day)
    if case == "last-day":
        last = os.path.join(year, LAST_DAY)
        os.remove(last)
        run([build, "compact", year])
        shutil.copy(last_day_copy, last)
        os.sync()
        time.sleep(pause)
        return timed(build, ["compact", year])
    if case == "rebuild":
        shutil.rmtree(os.path.join(year, "tsdb"), ignore_errors=True)
    else:
        run([build, "compact", year])
    if case == "new-day":
        os.makedirs(os.path.dirname(day), exist_ok=True)
        shutil.copy(day_source, day)
    os.sync()
    time.sleep(pause)
    return timed(build, ["compact", year])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="+", help="tsdb executables to compare")
    p.add_argument("--work", default="/tmp/tsdb-compare", help="folder holding the runner's generated data")
    p.add_argument("--case", choices=["new-day", "last-day", "unchanged", "rebuild"], default="new-day")
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--pause", type=float, help="seconds after `sync` before each timed run (1; 6 for rebuild)")
    p.add_argument("--settle", action="store_true", help="pause 6 s, as compare.py does")
    p.add_argument("--as-is", action="store_true", help="run the builds where they are, not fresh copies")
    a = p.parse_args()
    # A rebuild deletes the store first, and without a journal ext4 skips inodes deleted in the last
    # 5-10 s when it creates files (README.md in this folder): rebuilds wait as the runner's do.
    pause = 6.0 if a.settle or (a.pause is None and a.case == "rebuild") else (a.pause if a.pause is not None else 1.0)
    os.makedirs(a.work, exist_ok=True)
    copies = tempfile.mkdtemp(prefix="tsdb-ab-")
    try:
        fresh = []
        for k, build in enumerate(a.builds):
            copy = os.path.join(copies, f"{k}-{os.path.basename(build)}")
            if not a.as_is:
                shutil.copy2(build, copy)
            fresh.append(build if a.as_is else copy)
        year, day_source = prepare(a.work, fresh[0])
        # The last day's file, kept aside while the case takes it out of the year.
        last_day_copy = os.path.join(copies, "last-day.json")
        shutil.copy(os.path.join(year, LAST_DAY), last_day_copy)
        print(f"case {a.case}, {a.rounds} rounds, sync and {pause:g} s before each run; year at {year}")
        runs = {b: [] for b in a.builds}
        for _ in range(a.rounds):
            for build, copy in zip(a.builds, fresh):
                runs[build].append(one_round(a.case, copy, year, day_source, pause, last_day_copy))
        one_round("unchanged", fresh[0], year, day_source, 0, last_day_copy)  # the year as it was
        for build in a.builds:
            wall, cpu = [w for w, _ in runs[build]], [c for _, c in runs[build]]
            q1, _, q3 = statistics.quantiles(wall, n=4) if len(wall) > 1 else (wall[0], wall[0], wall[0])
            print(f"{build}: median {statistics.median(wall):.2f} ms, quartiles {q1:.2f}-{q3:.2f}; "
                  f"CPU median {statistics.median(cpu):.1f} ms")
            print("  wall " + " ".join(f"{x:.2f}" for x in wall))
    finally:
        # An interrupted `last-day` round must not leave the year a day short.
        last, kept = os.path.join(a.work, "year", LAST_DAY), os.path.join(copies, "last-day.json")
        if not os.path.exists(last) and os.path.exists(kept):
            shutil.copy(kept, last)
        shutil.rmtree(copies, ignore_errors=True)


if __name__ == "__main__":
    main()
