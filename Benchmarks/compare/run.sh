#!/usr/bin/env bash
# One command: install the peers, build tsdb (.ci/setup fast: the README's fastest start-up),
# compare; then the Parquet export against pyarrow, and the import of Health's export.zip against
# healthkit-to-sqlite.
#   Benchmarks/compare/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
need=()
for pkg in sqlite3 time hyperfine valgrind binutils libzstd-dev liblz4-dev pkg-config; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${need[@]}"; fi
python3 -c "import duckdb, numpy, pytz, pyarrow" 2>/dev/null || pip install -q duckdb numpy pytz pyarrow
command -v healthkit-to-sqlite >/dev/null || pip install -q healthkit-to-sqlite==1.0.1
.ci/setup fast
python3 Benchmarks/compare/compare.py "$@"
python3 Benchmarks/compare/parquet.py "$@"
python3 Benchmarks/compare/import.py
python3 Benchmarks/compare/ranges.py
