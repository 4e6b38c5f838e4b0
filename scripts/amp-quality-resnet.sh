#!/usr/bin/env bash
# Mixed precision's quality on ResNet-20 (configs/imagerecord_resnet20.yaml: Fashion-MNIST as
# 32x32 color JPEG records, 3 epochs): SEEDS seeds (default 3) each in float32 and in PRECISION
# (default bfloat16), the same steps. Prints one JSON line per run with the last epoch's
# training accuracy (over its 6,000 images) and validation accuracy and cross-entropy (1,000
# images), then one summary line per accuracy: float32's spread over the seeds (lowest and
# highest) and each low-precision run's, "within" when every one lies inside that spread widened
# by half its width on each side. The validation accuracy after 3 epochs at lr 0.1 swings by
# several points from epoch to epoch in float32 alone (BatchNorm's moving statistics): 3 seeds
# sample that poorly; the training accuracy is the steadier measure.
# Needs a build (scripts/setup.sh) and the image set (scripts/make-image-set.sh).
#   scripts/amp-quality-resnet.sh [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-3}
low=${PRECISION:-bfloat16}
if [[ ! -f data/image-set/train.rec ]]; then
  echo "amp-quality-resnet.sh: no data/image-set/train.rec: run scripts/make-image-set.sh" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((seed = 1; seed <= seeds; ++seed)); do
  for precision in float32 "$low"; do
    build/apps/cohort-train --config configs/imagerecord_resnet20.yaml --set seed="$seed" \
      --set precision="$precision" --set log_level=warn --metrics-out "$tmp/m.jsonl" > /dev/null
    tail -n 1 "$tmp/m.jsonl" |
      sed -n 's/.*"train":{"accuracy":\([0-9.e-]*\),.*"val":{"accuracy":\([0-9.e-]*\),"cross-entropy":\([0-9.e-]*\)}.*/\1 \2 \3/p' |
      awk -v s="$seed" -v p="$precision" '{
        printf "{\"bench\":\"amp_quality_resnet20\",\"seed\":%d,\"precision\":\"%s\",\"train_accuracy\":%.4f,\"val_accuracy\":%.4f,\"val_cross_entropy\":%.4f}\n", s, p, $1, $2, $3
      }' | tee -a "$tmp/runs"
    rm -f "$tmp/m.jsonl"
  done
done
for field in 8 10; do  # train_accuracy, val_accuracy
  awk -v low="$low" -v field="$field" -F'[:,}]' '
    { acc = $field + 0; if ($6 ~ /float32/) { f[++nf] = acc } else { l[++nl] = acc } }
    END {
      lo = hi = f[1]; for (i = 2; i <= nf; ++i) { if (f[i] < lo) lo = f[i]; if (f[i] > hi) hi = f[i] }
      margin = (hi - lo) / 2; within = 1; runs = ""
      for (i = 1; i <= nl; ++i) {
        if (l[i] < lo - margin || l[i] > hi + margin) within = 0
        runs = runs (i > 1 ? "," : "") sprintf("%.4f", l[i])
      }
      printf "{\"bench\":\"amp_quality_resnet20\",\"metric\":\"%s\",\"float32_min\":%.4f,\"float32_max\":%.4f,\"%s\":[%s],\"within\":%s}\n", field == 8 ? "train_accuracy" : "val_accuracy", lo, hi, low, runs, within ? "true" : "false"
    }' "$tmp/runs"
done
