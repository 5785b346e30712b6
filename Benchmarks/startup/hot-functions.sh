#!/usr/bin/env bash
# Writes Benchmarks/startup/hot-functions.txt: the code sections of every function the short
# commands people run most execute (`--version`, a year's daily heart rate in three zones, its
# hours, a compaction with nothing to do and one with a new day), which `.ci/setup fast` asks the
# linker to place side by side (gold's --section-ordering-file, with -function-sections).
#
# Why: a short process is mostly start-up, and each first touch of a 64 KB stretch of the 36 MB
# binary's code is a page fault (the kernel maps 16 pages around it), ~2.3-4 us each in this VM
# against ~1 us of work between them. The year's daily heart rate touched 84 such stretches;
# with the hot functions together, 48 (the Swift standard library is one section and stays
# where it is). Rerun after changes to what those commands execute; a stale list costs faults,
# never correctness (names it lists that no longer exist are skipped by the linker).
#
#   Benchmarks/startup/hot-functions.sh [TSDB]   (default .build-static/release/tsdb; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/../.."
tsdb=${1:-.build-static/release/tsdb}
command -v valgrind >/dev/null || { echo "error: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Valgrind 3.19 cannot read the DWARF 5 that Swift writes; the symbols are all it needs.
strip --strip-debug -o "$work/tsdb" "$tsdb"
tsdb="$work/tsdb"
"$tsdb" generate "$work/year" --days 365 --start 2025-01-01 >/dev/null
"$tsdb" generate "$work/next" --days 1 --start 2026-01-01 >/dev/null
"$tsdb" compact "$work/year" >/dev/null

profile() { valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$1.out" "$tsdb" "${@:2}" >/dev/null 2>&1; }
profile version --version
for zone in Europe/Paris UTC Asia/Kathmandu; do
  profile "day-${zone//\//-}" query HeartRate --range 2025 --bucket day --tz "$zone" \
    --stats count,min,max,mean --format csv --store "$work/year"
done
profile hour query HeartRate --range 2025 --bucket hour --tz UTC --stats count,min,max,mean --store "$work/year"
profile unchanged compact "$work/year"
mkdir -p "$work/year/raw/2026/01"
cp "$work/next/raw/2026/01/2026-01-01.json" "$work/year/raw/2026/01/"
profile new-day compact "$work/year"

# Functions callgrind saw run in tsdb's own binary, each once, in the order first listed.
python3 - "$work" tsdb > Benchmarks/startup/hot-functions.txt <<'EOF'
import glob, re, sys
work, binary = sys.argv[1], sys.argv[2]
seen = set()
for path in sorted(glob.glob(work + "/*.out")):
    names, objects, current = {}, {}, None
    for line in open(path):
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(3):
                objects[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                current = objects.get(m.group(2), "")
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        if m.group(3):
            names[m.group(2)] = m.group(3)
        name = names.get(m.group(2))
        if m.group(1) == "fn" and current and current.endswith("/" + binary) and name and name not in seen:
            seen.add(name)
            print(".text." + name)
EOF
echo "$(wc -l < Benchmarks/startup/hot-functions.txt) functions in Benchmarks/startup/hot-functions.txt"
