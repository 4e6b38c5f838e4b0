#!/usr/bin/env bash
# ResNet-20 (MXNet's CIFAR network) training steps on generated 3x32x32 batches, one thread on
# CPU 0: Cohort (cohort-train --profile) beside PyTorch (Debian's python3-torch), in rounds that
# run each in turn; prints the median ms per step of each and PyTorch's time over Cohort's (above
# 1: Cohort is faster). Needs a build (scripts/setup.sh) and apt-get install python3-torch.
# PRECISION=bfloat16 runs Cohort with `precision: bfloat16` and PyTorch under torch.autocast, and
# Cohort in float32 too in the same rounds (its bfloat16 over float32 ratio).
#   bench/resnet_vs_pytorch.sh [batch] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
batch=${1:-64}
rounds=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
precision=${PRECISION:-float32}
cohort_step() {  # ms per step of Cohort in precision $1
  taskset -c 0 env COHORT_NUM_THREADS=1 build/apps/cohort-train \
    --config configs/synthetic_resnet20.yaml --set epochs=1 --set batch_size="$batch" \
    --set devices=cpu:0 --set data.num_samples=$((batch * 24)) --set data.val_samples="$batch" \
    --set log_every=0 --set log_level=warn --set precision="$1" --profile |
    sed -n 's/^# profile: [0-9]* steps, \([0-9.]*\) ms per step$/\1/p'
}
for _ in $(seq "$rounds"); do
  cohort_step "$precision" >> "$tmp/cohort"
  [[ $precision == float32 ]] || cohort_step float32 >> "$tmp/cohort_float32"
  taskset -c 0 /usr/bin/python3 scripts/bench_torch_resnet.py "$batch" 20 "$precision" |
    sed 's/.*"ms_per_step": \([0-9.]*\).*/\1/' >> "$tmp/torch"
done
cohort=$(median < "$tmp/cohort")
torch=$(median < "$tmp/torch")
printf '{"bench":"resnet20","precision":"%s","batch":%s,"threads":1,"cohort_ms":%s,"pytorch_ms":%s,"pytorch_over_cohort":%s}\n' \
  "$precision" "$batch" "$cohort" "$torch" "$(python3 -c "print(round($torch / $cohort, 2))")"
if [[ $precision != float32 ]]; then
  float32=$(median < "$tmp/cohort_float32")
  printf '{"bench":"resnet20","cohort_float32_ms":%s,"bfloat16_vs_float32":%s}\n' \
    "$float32" "$(python3 -c "print(round($float32 / $cohort, 2))")"
fi
