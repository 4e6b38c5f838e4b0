#!/usr/bin/env bash
# cohort-plan against published scaling figures, with the constants of Note [Plan presets]
# (apps/cohort_plan.cc) fixed from the published hardware, never fitted to these figures.
#   scripts/validate-plan-published.sh [PLAN_BINARY]
# Prints one row per published figure: preset, model, mode, GPUs, the baseline the efficiency
# is measured against, published and predicted efficiency (%), and the difference in points.
# Published figures:
# - horovod-pascal, against 1 GPU: Horovod's README, 512 GPUs ("90% scaling efficiency for both
#   Inception V3 and ResNet-101, and 68% scaling efficiency for VGG-16"); its earlier README,
#   128 GPUs (90, 90, 79); its 2017 README's table, 16 GPUs over RDMA with NCCL (2022.6,
#   1746.2 and 1787.4 images/s against 134.4, 119.4 and 130.9 on one GPU: 94, 91, 85).
# - horovod-mxnet, against 8 GPUs: horovod/horovod pull request 542, ResNet-50, without and
#   with hierarchical all-reduce (64 GPUs: 83, 94; 128: 84, 93; 256: 66, 91).
set -euo pipefail
cd "$(dirname "$0")/.."
plan=${1:-build/apps/cohort-plan}

efficiency() {  # PRESET MODEL MODE GPUS BASELINE -> predicted efficiency against BASELINE, in %
  local rows
  rows=$("$plan" --preset "$1" --model "$2" "--$3" --devices "$4" --json)
  awk -v n="$4" -v b="$5" '
    { match($0, /"devices":[0-9]+/); d = substr($0, RSTART + 10, RLENGTH - 10) + 0
      match($0, /"samples_per_s":[0-9.]+/); s = substr($0, RSTART + 16, RLENGTH - 16) + 0
      rate[d] = s }
    END { printf "%.1f", 100 * (rate[n] / n) / (rate[b] / b) }' <<< "$rows"
}

printf '%-15s %-12s %-13s %5s %9s %10s %10s %7s\n' preset model mode gpus baseline published \
  predicted points
while read -r preset model mode gpus baseline published; do
  predicted=$(efficiency "$preset" "$model" "$mode" "$gpus" "$baseline")
  printf '%-15s %-12s %-13s %5d %9d %10d %10.1f %+7.1f\n' "$preset" "$model" "$mode" "$gpus" \
    "$baseline" "$published" "$predicted" "$(awk -v a="$predicted" -v b="$published" \
    'BEGIN { print a - b }')"
done <<'EOF_FIGURES'
horovod-pascal inceptionv3 flat 16 1 94
horovod-pascal resnet101 flat 16 1 91
horovod-pascal vgg16 flat 16 1 85
horovod-pascal inceptionv3 flat 128 1 90
horovod-pascal resnet101 flat 128 1 90
horovod-pascal vgg16 flat 128 1 79
horovod-pascal inceptionv3 flat 512 1 90
horovod-pascal resnet101 flat 512 1 90
horovod-pascal vgg16 flat 512 1 68
horovod-mxnet resnet50 flat 64 8 83
horovod-mxnet resnet50 flat 128 8 84
horovod-mxnet resnet50 flat 256 8 66
horovod-mxnet resnet50 hierarchical 64 8 94
horovod-mxnet resnet50 hierarchical 128 8 93
horovod-mxnet resnet50 hierarchical 256 8 91
EOF_FIGURES
