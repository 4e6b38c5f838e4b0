#!/usr/bin/env bash
# Module.fit against cohort-train on the default job (LeNet, Fashion-MNIST, cpu:0,cpu:1, batch
# 128, sgd with momentum, one epoch): examples/train_mnist.py on the C++ loop, the same on MXNet's
# Python loop (COHORT_PYTHON_FIT_LOOP=1), and build/apps/cohort-train --config
# configs/fmnist_lenet.yaml, in turn, REPEATS rounds (default 3). Each figure is the epoch's
# training time as each logs it ("Time cost"); prints one JSON line per system with the median
# seconds, samples/s and the ratio to cohort-train. Needs a build (scripts/setup.sh).
#   bench/module_fit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${REPEATS:-3}
samples=$((60000 / 128 * 128))
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
seconds() { grep -o 'Time cost=[0-9.]*' | head -1 | cut -d= -f2; }
declare -A times
for _ in $(seq "$repeats"); do
  times[cpp_loop]+="$(PYTHONPATH=build/python /usr/bin/python3 examples/train_mnist.py --epochs 1 2>&1 | seconds) "
  times[python_loop]+="$(COHORT_PYTHON_FIT_LOOP=1 PYTHONPATH=build/python /usr/bin/python3 examples/train_mnist.py --epochs 1 2>&1 | seconds) "
  times[cohort_train]+="$(build/apps/cohort-train --config configs/fmnist_lenet.yaml --set epochs=1 --set log_every=0 2>&1 | seconds) "
done
base=$(tr ' ' '\n' <<< "${times[cohort_train]}" | grep . | median)
for system in cohort_train cpp_loop python_loop; do
  t=$(tr ' ' '\n' <<< "${times[$system]}" | grep . | median)
  awk -v s="$system" -v t="$t" -v n="$samples" -v b="$base" 'BEGIN {
    printf "{\"system\": \"%s\", \"seconds\": %.3f, \"samples_per_sec\": %.0f, \"vs_cohort_train\": %.3f}\n", s, t, n / t, b / t }'
done
