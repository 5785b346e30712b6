#!/usr/bin/env python3
"""What the runner's settle (`sync` and a pause before each timed new day) does to a process's time on
this VM, in one run, the cases taking turns:

    python3 Benchmarks/compare/settle.py [--work DIR] [--rounds N] [--tsdb PATH]

- `settled`: one new day into the runner's year after the settle, as `compare.py` times it;
- `warmed`: the same, with `tsdb --version` run (untimed) right after the settle;
- `hello settled` and `hello`: the static hello world the runner measures start-up against, after
  the settle and back to back.

The year and the day after it are made under --work as `compare.py` makes them (default: its
folder). Times are wall ms from `posix_spawn` to `wait4`; medians, then every time.
"""

import argparse
import os
import shutil
import statistics
import time

from common import run
from compare import ROOT, SETTLE_SECONDS, hello_world

NEW_DAY = "raw/2026/01/2026-01-01.json"


def spawn(cmd):
    """Wall ms of one run of `cmd`, output discarded."""
    with open(os.devnull, "wb") as null:
        actions = [(os.POSIX_SPAWN_DUP2, null.fileno(), 1), (os.POSIX_SPAWN_DUP2, null.fileno(), 2)]
        start = time.perf_counter_ns()
        pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        elapsed = (time.perf_counter_ns() - start) / 1e6
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/tsdb-compare")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tsdb", default=os.path.join(ROOT, ".build-static/release/tsdb"))
    args = ap.parse_args()
    year, extra = os.path.join(args.work, "year"), os.path.join(args.work, "year-plus-one")
    if not os.path.isdir(os.path.join(year, "raw")):
        run([args.tsdb, "generate", year, "--days", "365", "--start", "2025-01-01"])
    if not os.path.isdir(os.path.join(extra, "raw")):
        run([args.tsdb, "generate", extra, "--days", "366", "--start", "2025-01-01"])
    new_day = os.path.join(year, NEW_DAY)
    if os.path.exists(new_day):
        raise SystemExit(f"error: {new_day} is already in the year; remove it, or use a fresh --work")
    run([args.tsdb, "compact", "--store", year])
    hello = hello_world(args.work)
    compact = [args.tsdb, "compact", "--store", year]

    def settle():
        os.sync()
        time.sleep(SETTLE_SECONDS)

    def new_day_run(warm):
        os.makedirs(os.path.dirname(new_day), exist_ok=True)
        shutil.copy(os.path.join(extra, NEW_DAY), new_day)
        settle()
        if warm:
            spawn([args.tsdb, "--version"])
        elapsed = spawn(compact)
        os.remove(new_day)
        spawn(compact)
        return elapsed

    def hello_run(settled):
        if settled:
            settle()
        return spawn([hello])

    cases = {
        "settled": lambda: new_day_run(False),
        "warmed": lambda: new_day_run(True),
        "hello settled": lambda: hello_run(True),
        "hello": lambda: hello_run(False),
    }
    times = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, case in cases.items():
            times[name].append(case())
    print(f"one new day into {year}, {args.rounds} rounds, settle: sync and {SETTLE_SECONDS} s")
    for name, ts in times.items():
        print(f"{name:>14}: median {statistics.median(ts):.2f} ms;", " ".join(f"{t:.2f}" for t in ts))


if __name__ == "__main__":
    main()
