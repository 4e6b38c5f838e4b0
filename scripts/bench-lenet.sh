#!/usr/bin/env bash
# LeNet forward+backward per batch of 128 on one core: Cohort beside PyTorch (Debian's
# python3-torch, run by /usr/bin/python3) and MXNet 1.9.1 (pip), each pinned to CPU 0 with one
# thread, in one run; then the ratios (peer time / Cohort time: above 1 means Cohort is faster).
# Peers that are not installed are skipped with a note. Needs a build (scripts/setup.sh).
#   scripts/bench-lenet.sh [batch] [iters]
set -euo pipefail
cd "$(dirname "$0")/.."
batch=${1:-128}
iters=${2:-10}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
ours=$(taskset -c 0 build/bench/lenet_bench --batch "$batch" --iters "$iters")
echo "$ours"
ours_ms=$(sed 's/.*"train_ms":\([0-9.]*\).*/\1/' <<<"$ours")
run_peer() {  # run_peer NAME PYTHON
  local out
  if out=$(taskset -c 0 "$2" scripts/bench_lenet_peers.py "$1" "$batch" "$iters" 2>/dev/null); then
    echo "$out"
    local ms
    ms=$(sed 's/.*"train_ms": \([0-9.]*\).*/\1/' <<<"$out")
    echo "{\"bench\":\"lenet\",\"peer\":\"$1\",\"ratio_peer_time_over_cohort\":$(python3 -c "print(round($ms/$ours_ms, 2))")}"
  else
    echo "{\"bench\":\"lenet\",\"peer\":\"$1\",\"skipped\":\"not importable by $2\"}"
  fi
}
run_peer torch /usr/bin/python3
run_peer mxnet python3
