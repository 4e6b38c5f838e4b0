#!/usr/bin/env bash
# ImageRecordIter throughput: Cohort beside MXNet 1.9.1's ImageRecordIter (the peer, in a venv
# given by MXNET_PYTHON, default python3; skipped when mxnet does not import), in one run, each
# system in turn for ROUNDS rounds (default 3; medians). The records: scripts/make-image-set.sh's
# training JPEGs re-packed by cohort-im2rec at 256x256 (quality 95), read as random 224x224
# crops with mirroring and ImageNet's mean/std, batch 64, 2 decoding threads. JSON lines.
#   MXNET_PYTHON=/tmp/mxvenv/bin/python scripts/bench-image-record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
py=${MXNET_PYTHON:-python3}
rounds=${ROUNDS:-3}
threads=2 epochs=2 batch=64
[[ -d data/image-set/images/train ]] || scripts/make-image-set.sh > /dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/apps/cohort-im2rec --resize 256 --quality 95 --num-thread 2 "$tmp/big" \
  data/image-set/images/train > /dev/null
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
rate() { sed 's/.*"samples_per_sec": *\([0-9]*\).*/\1/'; }
: > "$tmp/cohort"
: > "$tmp/mxnet"
peer=1
"$py" -c "import mxnet" 2> /dev/null || peer=0
for ((r = 0; r < rounds; r++)); do
  build/bench/image_record_bench "$tmp/big.rec" "$tmp/big.idx" 3 224 224 --threads $threads \
    --epochs $epochs --batch $batch 2> /dev/null | rate >> "$tmp/cohort"
  if ((peer)); then
    "$py" scripts/bench_image_record_mxnet.py "$tmp/big.rec" "$tmp/big.idx" 3 224 224 $threads \
      $epochs $batch 2> /dev/null | rate >> "$tmp/mxnet"
  fi
done
c=$(median < "$tmp/cohort")
echo "{\"bench\":\"image_record_iter\",\"impl\":\"cohort\",\"threads\":$threads,\"batch_size\":$batch,\"samples_per_sec\":$c}"
if ((peer)); then
  m=$(median < "$tmp/mxnet")
  echo "{\"bench\":\"image_record_iter\",\"impl\":\"mxnet-1.9.1\",\"threads\":$threads,\"batch_size\":$batch,\"samples_per_sec\":$m}"
  echo "{\"bench\":\"image_record_iter\",\"ratio_cohort_over_mxnet\":$(python3 -c "print(round($c / $m, 2))")}"
else
  echo '{"bench":"image_record_iter","peer":"mxnet not importable: set MXNET_PYTHON to a python with mxnet==1.9.1"}'
fi
