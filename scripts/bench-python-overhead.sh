#!/usr/bin/env bash
# What Python costs (issue 35's overhead figure): LeNet forward+backward per batch driven from
# Python (cohort.Executor, bench/python_executor_overhead.py) beside the same loop in C++
# (build/bench/lenet_bench), both on CPU 0 with one thread, alternating ROUNDS times so that the
# machine's noise falls on both; prints each run's JSON line, then the ratio of the medians
# (C++ time / Python time: 1 means no overhead; the goal is >= 0.95), fed and unfed.
#   scripts/bench-python-overhead.sh [batch] [iters] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
batch=${1:-128}
iters=${2:-20}
rounds=${3:-5}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 COHORT_NUM_THREADS=1
cpp=() py=() fed=()
for ((r = 0; r < rounds; ++r)); do
  line=$(taskset -c 0 build/bench/lenet_bench --batch "$batch" --iters "$iters")
  echo "$line"
  cpp+=("$(sed 's/.*"train_ms":\([0-9.]*\).*/\1/' <<<"$line")")
  line=$(PYTHONPATH=build/python taskset -c 0 /usr/bin/python3 bench/python_executor_overhead.py \
    "$batch" "$iters")
  echo "$line"
  py+=("$(sed 's/.*"train_ms": \([0-9.]*\).*/\1/' <<<"$line")")
  fed+=("$(sed 's/.*"fed_train_ms": \([0-9.]*\).*/\1/' <<<"$line")")
done
/usr/bin/python3 - "${cpp[*]}" "${py[*]}" "${fed[*]}" <<'PY'
import json, statistics, sys
cpp, py, fed = ([float(x) for x in a.split()] for a in sys.argv[1:4])
print(json.dumps({"bench": "python_overhead", "cpp_ms": statistics.median(cpp),
                  "python_ms": statistics.median(py), "python_fed_ms": statistics.median(fed),
                  "ratio_cpp_over_python": round(statistics.median(cpp) / statistics.median(py), 3),
                  "ratio_cpp_over_python_fed": round(statistics.median(cpp) / statistics.median(fed), 3)}))
PY
