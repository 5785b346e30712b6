#!/usr/bin/env bash
# The dashboard under load: 100 concurrent clients asking a year's daily heart rate from
# `tsdb serve` (wrk, from Debian), beside the CLI's time for the same question.
#   Benchmarks/serve/load.sh [seconds]        (default 20; not in CI)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
swift build -c release --static-swift-stdlib --scratch-path .build-static >/dev/null
tsdb=.build-static/release/tsdb
work=$(mktemp -d /tmp/tsdb-serve-load-XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
"$tsdb" generate "$work/year" --days 365 >/dev/null
"$tsdb" compact --store "$work/year" >/dev/null
"$tsdb" serve --store "$work/year" --port 0 --tz Europe/Paris > "$work/serve.log" &
server=$!
for _ in $(seq 50); do grep -q http "$work/serve.log" && break; sleep 0.1; done
address=$(grep -o 'http://[^ ]*' "$work/serve.log")
path="api/aggregate?type=HeartRate&range=2025&bucket=day&tz=Europe/Paris&stats=count,min,max,mean"
echo "== $(nproc) cores; the question: GET /$path"
curl -s "$address$path" | python3 -c 'import json,sys; print("rows:", len(json.load(sys.stdin)["rows"]))'
echo "== wrk: 100 connections, 2 threads, ${1:-20} s"
wrk -t 2 -c 100 -d "${1:-20}s" --latency "$address$path"
echo "== the CLI, same question (hyperfine if present, else 20 runs)"
cli=("$tsdb" query HeartRate --range 2025 --bucket day --tz Europe/Paris --stats count,min,max,mean --format json \
  --store "$work/year")
if command -v hyperfine >/dev/null; then
  hyperfine -N -w 3 -r 50 "${cli[*]}"
else
  "${cli[@]}" --timings >/dev/null
  start=$(date +%s%N); for _ in $(seq 20); do "${cli[@]}" >/dev/null; done
  echo "whole process: $(( ($(date +%s%N) - start) / 20000 )) µs per run"
fi
