#!/usr/bin/env bash
# The GPT of configs/text_gpt.yaml (4 layers, 4 heads, d_model 128, windows of 128 bytes, global
# batch 32) trained on dict-gcide: Cohort in one process on cpu:0,cpu:1 beside PyTorch
# (Debian's python3-torch, scripts/bench_torch_gpt.py: the same construction) in one process
# (2 threads) and under DistributedDataParallel (gloo, 2 processes), in one run. Prints one JSON
# line per system with tokens/s and peak resident memory (medians of REPEATS rounds, default 3,
# each running every system once in turn: the machine is noisy), then the ratios to PyTorch DDP.
# With --quality it instead trains 300 batches in Cohort and in PyTorch (one process) and prints
# each one's validation perplexity on the last 1% of the text and its wall time.
# PRECISION=bfloat16 runs Cohort with `precision: bfloat16` and PyTorch under
# torch.autocast('cpu', bfloat16); D_MODEL and HEADS change the width (default 128 and 4).
# Needs a build (scripts/setup.sh) and apt-get install python3-torch.
#   bench/gpt_vs_pytorch.sh [batches]      (default 30)
#   PRECISION=bfloat16 D_MODEL=512 HEADS=8 bench/gpt_vs_pytorch.sh 10
#   bench/gpt_vs_pytorch.sh --quality
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

if [[ ${1:-} == --quality ]]; then
  start=$(date +%s.%N)
  build/apps/cohort-train --config configs/text_gpt.yaml --set log_every=0 --set log_level=warn \
    --metrics-out "$tmp/q.jsonl" > /dev/null
  end=$(date +%s.%N)
  ppl=$(tail -1 "$tmp/q.jsonl" | sed 's/.*"val":{"perplexity":\([0-9.]*\).*/\1/')
  echo "{\"bench\":\"gpt_quality\",\"system\":\"cohort\",\"batches\":300,\"val_perplexity\":$ppl,\"seconds\":$(python3 -c "print(round($end - $start, 1))")}"
  start=$(date +%s.%N)
  out=$(/usr/bin/python3 scripts/bench_torch_gpt.py single 300 --eval)
  end=$(date +%s.%N)
  echo "${out%\}}, \"batches\": 300, \"seconds\": $(python3 -c "print(round($end - $start, 1))")}"
  exit 0
fi

batches=${1:-30}
repeats=${REPEATS:-3}
seq_len=128
precision=${PRECISION:-float32} d_model=${D_MODEL:-128} heads=${HEADS:-4}
[[ $precision == float32 || $precision == bfloat16 ]] ||
  { echo "gpt_vs_pytorch: PRECISION is float32 or bfloat16" >&2; exit 2; }
autocast=()
[[ $precision == bfloat16 ]] && autocast=(--autocast)
cohort() {  # one Cohort run [in precision $1] -> "tokens_per_sec peak_rss_mb"
  local run_precision=${1:-$precision}
  rm -f "$tmp/c.jsonl"  # --metrics-out appends
  /usr/bin/time -f "%M" -o "$tmp/rss" build/apps/cohort-train --config configs/text_gpt.yaml \
    --set epochs=1 --set data.batches_per_epoch="$batches" --set data.val_fraction=0 \
    --set precision="$run_precision" --set model.d_model="$d_model" --set model.n_head="$heads" \
    --set log_every=0 --set log_level=warn --metrics-out "$tmp/c.jsonl" > /dev/null
  local sps
  sps=$(sed 's/.*"samples_per_sec":\([0-9.]*\).*/\1/' "$tmp/c.jsonl")
  echo "$(python3 -c "print(round($sps * $seq_len))") $(( $(cat "$tmp/rss") / 1024 ))"
}
torch() {  # one PyTorch run (single|ddp) -> "tokens_per_sec peak_rss_mb"
  /usr/bin/python3 scripts/bench_torch_gpt.py "$1" "$batches" --d-model "$d_model" \
    --heads "$heads" "${autocast[@]}" |
    sed 's/.*"tokens_per_sec": \([0-9]*\), "peak_rss_mb": \([0-9]*\).*/\1 \2/'
}
# The CPU's low-precision instructions, with every figure (bfloat16 peaks at about 2x float32
# with AVX512-BF16, more with AMX).
has() { grep -qw "$1" /proc/cpuinfo && echo true || echo false; }
echo "{\"bench\":\"gpt\",\"cpu\":\"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)\",\"avx512_bf16\":$(has avx512_bf16),\"amx_bf16\":$(has amx_bf16)}"
systems=(cohort torch_single torch_ddp)
[[ $precision == bfloat16 ]] && systems+=(cohort_float32)  # Cohort's own float32, same rounds
for system in "${systems[@]}"; do : > "$tmp/$system"; done
for ((r = 0; r < repeats; r++)); do
  cohort >> "$tmp/cohort"
  torch single >> "$tmp/torch_single"
  torch ddp >> "$tmp/torch_ddp"
  [[ $precision == bfloat16 ]] && cohort float32 >> "$tmp/cohort_float32"
done
for system in "${systems[@]}"; do
  rate=$(cut -d' ' -f1 "$tmp/$system" | median)
  rss=$(cut -d' ' -f2 "$tmp/$system" | median)
  echo "$rate $rss" > "$tmp/$system.median"
  echo "{\"bench\":\"gpt\",\"system\":\"$system\",\"precision\":\"$precision\",\"d_model\":$d_model,\"batches\":$batches,\"tokens_per_sec\":$rate,\"peak_rss_mb\":$rss}"
done
read -r ddp_rate ddp_rss < "$tmp/torch_ddp.median"
for system in cohort torch_single; do
  read -r rate rss < "$tmp/$system.median"
  echo "{\"bench\":\"gpt\",\"system\":\"$system\",\"speed_vs_torch_ddp\":$(python3 -c "print(round($rate / $ddp_rate, 2))"),\"memory_vs_torch_ddp\":$(python3 -c "print(round($rss / $ddp_rss, 2))")}"
done
if [[ $precision == bfloat16 ]]; then
  read -r rate _ < "$tmp/cohort.median"
  read -r rate32 _ < "$tmp/cohort_float32.median"
  echo "{\"bench\":\"gpt\",\"system\":\"cohort\",\"bfloat16_vs_float32\":$(python3 -c "print(round($rate / $rate32, 2))")}"
fi
