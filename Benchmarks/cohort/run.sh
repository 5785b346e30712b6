#!/usr/bin/env bash
# A cohort in DuckDB and Spark local mode (not in CI): installs Java (Debian) and pyspark + duckdb
# (PyPI) when missing, builds tsdb, then runs cohort.py with the given arguments.
#   Benchmarks/cohort/run.sh [--people 50] [--days 90] [--keep DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v java >/dev/null; then
  sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq default-jre-headless
fi
python3 -c "import pyspark, duckdb" 2>/dev/null || python3 -m pip install -q pyspark duckdb
swift build -c release
python3 Benchmarks/cohort/cohort.py "$@"
