#!/usr/bin/env bash
# Text generation speed with and without the KV cache (Note [KV cache]), in one run: the GPT of
# configs/text_gpt.yaml trained for a few batches (the weights do not change the cost), then
# cohort-generate makes LENGTH bytes (within the 128-byte window, where the cache works, and
# past it, where the window slides) each way, REPEATS times in turn; one JSON line per way with
# the median bytes/s of the generation itself (a run of no bytes, loading and binding the model,
# subtracted), and their ratio.
#   bench/generate_bench.sh [LENGTH]     (default 120; REPEATS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
length=${1:-120} repeats=${REPEATS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/apps/cohort-train --config configs/text_gpt.yaml --set epochs=1 \
  --set data.batches_per_epoch=5 --set data.val_batches=1 --set log_level=warn \
  --set checkpoint.prefix="$tmp/g" > /dev/null
seconds() {  # of one cohort-generate run: LENGTH [flags]
  local start end n=$1
  shift
  start=$(date +%s.%N)
  build/apps/cohort-generate --symbol "$tmp/g-symbol.json" --params "$tmp/g-0001.params" \
    --prompt "The " --length "$n" --seed 1 "$@" > /dev/null
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
run() {  # bytes/s of the generation alone (a run of no bytes, loading and binding, subtracted)
  local all none
  all=$(seconds "$length" "$@")
  none=$(seconds 0 "$@")
  python3 -c "print(round($length / max($all - $none, 1e-6)))"
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for ((r = 0; r < repeats; ++r)); do
  echo "cache $(run)"
  echo "window $(run --no-kv-cache)"
done > "$tmp/runs"
cache=$(awk '$1 == "cache" {print $2}' "$tmp/runs" | median)
window=$(awk '$1 == "window" {print $2}' "$tmp/runs" | median)
echo "{\"bench\":\"generate\",\"length\":$length,\"kv_cache\":true,\"bytes_per_sec\":$cache}"
echo "{\"bench\":\"generate\",\"length\":$length,\"kv_cache\":false,\"bytes_per_sec\":$window}"
echo "{\"bench\":\"generate\",\"length\":$length,\"ratio_kv_cache\":$(python3 -c "print(round($cache / $window, 2))")}"
