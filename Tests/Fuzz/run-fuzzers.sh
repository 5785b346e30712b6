#!/usr/bin/env bash
# Builds the libFuzzer targets (Swift's -sanitize=fuzzer with AddressSanitizer) and runs each
# for a bounded time. Crashing inputs land in Tests/Fuzz/crashes/<target>/, where
# FuzzRegressionTests replays them on every `swift test`.
#   Tests/Fuzz/run-fuzzers.sh [seconds-per-target]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out"
engine=$(find Sources/TSDB -name '*.swift' | sort)
health=$(find Sources/TSDBAppleHealth -name '*.swift' | sort)
for target in ${TARGETS:-raw-json segment export-xml}; do
  extra=()
  case $target in
    raw-json) entry=Tests/Fuzz/FuzzRawJSON.swift; seeds=(Formats/vectors/segment-v3/*.json) ;;
    segment)  entry=Tests/Fuzz/FuzzSegment.swift; seeds=(Formats/vectors/segment-v3/*.seg) ;;
    export-xml) entry=Tests/Fuzz/FuzzExportXML.swift; seeds=(Tests/TSDBTests/Vectors/broken-export.xml)
      extra=($health) ;;
  esac
  echo "building $target"
  # Every C wrapper target, found rather than listed (a listed one went missing when a target was
  # added): a system library's module map is found by its folder; a C target's files are compiled
  # apart, since swiftc links objects only.
  c_flags=()
  for dir in Sources/CTSDB*; do
    if [ -d "$dir/include" ]; then
      c_flags+=(-I "$dir/include")
      for c in "$dir"/*.c; do
        object="$out/$(basename "$dir")-$(basename "$c" .c).o"
        clang -c -O2 -fsanitize=address -I "$dir/include" "$c" -o "$object"
        c_flags+=("$object")
      done
    else
      c_flags+=(-I "$dir")
    fi
  done
  # One module named TSDB, so the subsystem's `import TSDB` names the engine compiled with it.
  rm -f "$out/$target"
  swiftc -sanitize=fuzzer,address -parse-as-library -module-name TSDB -package-name tsdb -g -D TSDB_TESTING \
    "${c_flags[@]}" $engine "${extra[@]}" "$entry" -o "$out/$target" 2>&1 \
    | grep -v "Cannot export local symbol\|ignoring import\|part of module" || true
  # The filter above hides swiftc's status: a failed build must not go on to fuzz nothing.
  [ -x "$out/$target" ] || { echo "run-fuzzers.sh: building $target failed" >&2; exit 1; }
  corpus="$out/corpus-$target"
  mkdir -p "$corpus" "Tests/Fuzz/crashes/$target"
  cp -n "${seeds[@]}" "$corpus/" 2>/dev/null || true
  echo "fuzzing $target for ${seconds}s"
  "$out/$target" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -artifact_prefix="Tests/Fuzz/crashes/$target/" -print_final_stats=1 2>&1 | tail -n 12
done
