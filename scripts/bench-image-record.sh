#!/usr/bin/env bash
# ImageRecordIter throughput: Cohort beside MXNet 1.9.1's ImageRecordIter (the peer, in a venv
# given by MXNET_PYTHON, default python3; skipped when mxnet does not import), in one run, each
# system in turn for ROUNDS rounds (default 3; medians), at 1 and 2 decoding threads, over two
# record sets made from scripts/make-image-set.sh's training JPEGs: "cifar", the 32x32 color
# JPEGs read whole (random mirror); "imagenet", the same re-packed by cohort-im2rec at 256x256
# (quality 95) and read as random 224x224 crops with mirroring. Both with ImageNet's mean/std,
# shuffled, batch 64. JSON lines, then the ratios.
#   MXNET_PYTHON=/tmp/mxvenv/bin/python scripts/bench-image-record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=${MXNET_PYTHON:-python3}
rounds=${ROUNDS:-3}
epochs=2 batch=64
[[ -f data/image-set/train.rec ]] || scripts/make-image-set.sh > /dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/apps/cohort-im2rec --resize 256 --quality 95 --num-thread 2 "$tmp/big" \
  data/image-set/images/train > /dev/null
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
rate() { sed 's/.*"samples_per_sec": *\([0-9]*\).*/\1/'; }
peer=1
"$py" -c "import mxnet" 2> /dev/null || peer=0
for set in cifar imagenet; do
  if [[ $set == cifar ]]; then
    rec=data/image-set/train.rec idx=data/image-set/train.idx side=32
  else
    rec=$tmp/big.rec idx=$tmp/big.idx side=224
  fi
  for threads in 1 2; do
    : > "$tmp/cohort"
    : > "$tmp/mxnet"
    for ((r = 0; r < rounds; r++)); do
      build/bench/image_record_bench "$rec" "$idx" 3 $side $side --threads $threads \
        --epochs $epochs --batch $batch 2> /dev/null | rate >> "$tmp/cohort"
      if ((peer)); then
        "$py" scripts/bench_image_record_mxnet.py "$rec" "$idx" 3 $side $side $threads $epochs \
          $batch 2> /dev/null | rate >> "$tmp/mxnet"
      fi
    done
    c=$(median < "$tmp/cohort")
    line="{\"bench\":\"image_record_iter\",\"set\":\"$set\",\"threads\":$threads,\"batch_size\":$batch"
    echo "$line,\"impl\":\"cohort\",\"samples_per_sec\":$c}"
    if ((peer)); then
      m=$(median < "$tmp/mxnet")
      echo "$line,\"impl\":\"mxnet-1.9.1\",\"samples_per_sec\":$m}"
      echo "$line,\"ratio_cohort_over_mxnet\":$(python3 -c "print(round($c / $m, 2))")}"
    fi
  done
done
((peer)) || echo '{"bench":"image_record_iter","peer":"mxnet not importable: set MXNET_PYTHON to a python with mxnet==1.9.1"}'
