#!/usr/bin/env bash
# Fuzzes one reader with libFuzzer under ASan/UBSan (Note [Fuzzing], tests/fuzz/): builds the
# clang build in build-fuzz (COHORT_FUZZ=ON, no CUDA) when needed, runs TARGET for SECONDS from
# a copy of its committed corpus, then makes tests/fuzz/corpus/TARGET the smallest set of inputs
# with the coverage of both (plus the regress-* inputs, kept always), which the normal tests
# replay. A finding (crash, leak, timeout, out-of-memory) leaves its input as
# crash-*/leak-*/timeout-*/oom-* in build-fuzz/found and exits 1. Prints one JSON line: target, seconds, executions, corpus size, findings.
#   scripts/fuzz.sh params|symbol_json|idx|csv|recordio|image|config|states|pattern SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?target}
seconds=${2:-600}
build=${FUZZ_BUILD_DIR:-build-fuzz}
command -v clang++ > /dev/null || { echo "fuzz: needs clang (apt-get install clang)" >&2; exit 2; }
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DCOHORT_FUZZ=ON > /dev/null
fi
# FUZZ_SKIP_BUILD=1 runs the targets as built (several at once, while the sources change).
[[ ${FUZZ_SKIP_BUILD:-0} == 1 ]] || cmake --build "$build" --target "fuzz_$target" > /dev/null
corpus=tests/fuzz/corpus/$target
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$corpus/." "$work/"
mkdir -p "$build/found"
status=0
"$build/tests/fuzz/fuzz_$target" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=2048 -artifact_prefix="$build/found/$target-" -print_final_stats=1 \
  > "$work/log" 2>&1 || status=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo 0)
findings=$(ls "$build/found" 2>/dev/null | grep -c "^$target-" || true)
# The committed corpus becomes the smallest set with the coverage of both (libFuzzer's merge),
# plus the regress-* inputs kept for what they once broke.
fresh=$work/merged
mkdir -p "$fresh"
"$build/tests/fuzz/fuzz_$target" -merge=1 "$fresh" "$corpus" "$work" > /dev/null 2>&1 || true
if [[ -n $(ls "$fresh") ]]; then
  find "$corpus" -type f ! -name 'regress-*' -delete
  cp "$fresh"/* "$corpus/"
fi
echo "{\"target\":\"$target\",\"seconds\":$seconds,\"executions\":$runs,\"corpus\":$(ls "$corpus" | wc -l),\"findings\":$findings,\"exit\":$status}"
if ((status != 0)); then
  grep -m 20 -E "ERROR|SUMMARY|#0|#1|#2|#3|#4" "$work/log" >&2 || true
  exit 1
fi
