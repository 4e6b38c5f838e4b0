#!/usr/bin/env bash
# MNISTIter throughput over Fashion-MNIST (train set, 60000 images, batch 128): Cohort beside
# MXNet 1.9.1's MNISTIter (the peer; skipped when mxnet does not import), in one run, both pinned
# to one core, with the ratio of Cohort's plain iterator to MXNet's (which prefetches on its own
# thread). JSON lines on stdout. Needs a build (scripts/setup.sh).
#   scripts/bench-io.sh [--epochs N]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=5
[[ "${1:-}" == "--epochs" ]] && epochs=$2
data=/usr/share/datasets/fashion-mnist
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gunzip -c $data/train-images-idx3-ubyte.gz > "$tmp/images"
gunzip -c $data/train-labels-idx1-ubyte.gz > "$tmp/labels"

ours=$(taskset -c 0 build/bench/io_bench "$tmp/images" "$tmp/labels" --epochs "$epochs" 2>/dev/null)
echo "$ours" | sed 's/"impl":"cohort"/"impl":"cohort","cores":"cpu 0 only"/'
if python3 -c "import mxnet" 2>/dev/null; then
  peer=$(taskset -c 0 python3 scripts/bench_io_mxnet.py "$tmp/images" "$tmp/labels" "$epochs" 2>/dev/null)
  echo "$peer"
  for shuffle in false true; do
    a=$(echo "$ours" | grep "\"prefetch\":false,\"shuffle\":$shuffle" | sed 's/.*"samples_per_sec":\([0-9]*\).*/\1/')
    b=$(echo "$peer" | grep "\"shuffle\": $shuffle" | sed 's/.*"samples_per_sec": \([0-9]*\).*/\1/')
    echo "{\"bench\":\"mnist_iter\",\"shuffle\":$shuffle,\"ratio_cohort_over_mxnet\":$(python3 -c "print(round($a/$b, 2))")}"
  done
else
  echo '{"bench":"mnist_iter","peer":"mxnet not importable: pip install mxnet==1.9.1 numpy<1.24"}'
fi
