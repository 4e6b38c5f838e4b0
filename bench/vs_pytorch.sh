#!/usr/bin/env bash
# LeNet and the MLP (784-128-64-10) on Fashion-MNIST, global batch 128, a fixed number of
# batches: Cohort on cpu:0,cpu:1, on cpu:0 alone (2 threads) and under mpirun -np 2
# (kvstore=mpi), beside PyTorch (Debian's python3-torch) in one process and under
# DistributedDataParallel (gloo, 2 processes), in one run. Prints one table row per model and
# system with samples/s and the ratio to PyTorch DDP. Each figure is the median of REPEATS
# rounds (default 3) that run every system once in turn (the machine is noisy). Needs a build
# (scripts/setup.sh) and apt-get install python3-torch.
#   bench/vs_pytorch.sh [lenet_batches] [mlp_batches]   (defaults 200 and 469, one epoch: an MLP
#   batch takes well under a millisecond, so fewer batches would time mostly start-up)
set -euo pipefail
cd "$(dirname "$0")/.."
lenet_batches=${1:-200}
mlp_batches=${2:-469}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun -np 2 --bind-to none --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
repeats=${REPEATS:-3}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
torch_rate() {  # torch_rate MODEL MODE -> samples/s
  /usr/bin/python3 scripts/bench_torch_fmnist.py "$1" "$2" "$batches" | sed 's/.*"samples_per_sec": \([0-9]*\).*/\1/'
}
cohort_rate() {  # cohort_rate MODEL [launcher...] -> samples/s of one epoch of `batches` batches
  local model=$1
  shift
  local out="$tmp/$model-$RANDOM.jsonl"
  "$@" build/apps/cohort-train --config "configs/fmnist_$model.yaml" --set epochs=1 \
    --set data.batches_per_epoch="$batches" --set log_every=0 --set log_level=warn \
    --metrics-out "$out" ${COHORT_EXTRA:-} > /dev/null
  sed 's/.*"samples_per_sec":\([0-9.]*\).*/\1/' "$out" | cut -d. -f1
}
rate_of() {  # rate_of SYSTEM MODEL -> samples/s of one run
  case $1 in
    cohort_2dev) cohort_rate "$2";;
    cohort_1dev) COHORT_EXTRA="--set devices=cpu:0" cohort_rate "$2";;
    cohort_mpi) COHORT_EXTRA="--set devices=cpu:0 --set kvstore=mpi" cohort_rate "$2" "${mpi[@]}";;
    torch_single) torch_rate "$2" single;;
    torch_ddp) torch_rate "$2" ddp;;
  esac
}
systems=(cohort_2dev cohort_1dev cohort_mpi torch_single torch_ddp)
printf "%-6s %-34s %12s %14s\n" model system samples/s vs_torch_ddp
for model in lenet mlp; do
  batches=$lenet_batches
  [[ $model == mlp ]] && batches=$mlp_batches
  # Rounds of one run per system, so that the machine's drift touches every system alike.
  for round in $(seq "$repeats"); do
    for system in "${systems[@]}"; do rate_of "$system" "$model" >> "$tmp/$model-$system"; done
  done
  declare -A rate=()
  for system in "${systems[@]}"; do rate[$system]=$(median < "$tmp/$model-$system"); done
  for system in "${systems[@]}"; do
    label=$system
    case $system in
      cohort_2dev) label="cohort cpu:0,cpu:1 (local)";;
      cohort_1dev) label="cohort cpu:0, 2 threads";;
      cohort_mpi) label="cohort mpirun -np 2 (mpi)";;
      torch_single) label="pytorch one process, 2 threads";;
      torch_ddp) label="pytorch DDP gloo, 2 processes";;
    esac
    printf "%-6s %-34s %12s %14s\n" "$model" "$label" "${rate[$system]}" \
      "$(python3 -c "print(round(${rate[$system]} / ${rate[torch_ddp]}, 2))")"
  done
  unset rate
done
