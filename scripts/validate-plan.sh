#!/usr/bin/env bash
# cohort-plan against a measured run: LeNet on Fashion-MNIST, NP ranks of one device on this host
# (Note [Scaling model]). Calibration under the same sharing of the cores: NP single-process runs
# at once (one thread each, as mpirun's ranks get) give the per-op times (--profile; the slowest
# of them), and cohort-allreduce-bench under mpirun -np NP gives the link. A synchronous step
# waits for the slowest worker of that step, and with more ranks than cores which one it is
# changes from step to step: so the compute is scaled by the calibration runs' mean over steps
# of the slowest run's step over their mean (their --timeline, step i of each run beside the
# others' step i), the straggler factor. The measured step is the MPI run's
# forward + backward + update phases (its --profile), which is what the plan predicts.
#   scripts/validate-plan.sh [NP] [BATCH_PER_RANK]   (defaults: 2 64)
# With NETNS_HOSTS=1 each rank runs on a host of its own made of a network namespace
# (scripts/netns-hosts.sh, root), TCP between them: the bench then calibrates that link.
# Prints one JSON line: predicted and measured step (ms) and the relative error.
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2} batch=${2:-64}
tmp=$(mktemp -d)
if [[ ${NETNS_HOSTS:-0} == 1 ]]; then
  scripts/netns-hosts.sh up "$np"
  trap 'rm -rf "$tmp"; scripts/netns-hosts.sh down' EXIT
  hosts=$(seq -s, -f '10.213.0.%g' 11 $((10 + np)))
  mpi=(scripts/netns-hosts.sh mpirun -np "$np" --host "$hosts" --bind-to none)
else
  trap 'rm -rf "$tmp"' EXIT
  mpi=(mpirun -np "$np" --bind-to none --oversubscribe)
  [[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
  export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
fi
train=(build/apps/cohort-train --config configs/fmnist_lenet.yaml --set devices=cpu:0
       --set epochs=1 --set log_every=0 --profile)
"${mpi[@]}" build/apps/cohort-allreduce-bench --kvstore mpi --devices cpu:0 --min-bytes 64K \
  --max-bytes 16M --iters 20 > "$tmp/link"
for ((r = 0; r < np; ++r)); do
  COHORT_NUM_THREADS=1 "${train[@]}" --set batch_size="$batch" --timeline "$tmp/alone$r.json" \
    > "$tmp/alone$r" 2> /dev/null &
done
wait
"${mpi[@]}" "${train[@]}" --set batch_size=$((batch * np)) --set kvstore=mpi > "$tmp/mpi" 2> /dev/null
phases() {  # forward + backward + update of a --profile output, in ms
  awk -F'\t' '$1 == "forward" || $1 == "backward" || $1 == "update" { s += $2 } END { print s }' "$1"
}
# A synchronous step waits for the slowest worker: its profile calibrates the compute.
slowest=$tmp/alone0
for ((r = 1; r < np; ++r)); do
  if awk -v a="$(phases "$tmp/alone$r")" -v b="$(phases "$slowest")" 'BEGIN { exit !(a > b) }'; then
    slowest=$tmp/alone$r
  fi
done
straggler=$(python3 - "$tmp"/alone*.json <<'EOF'
import json, sys
runs = []  # per run: forward + backward + update of each step, from the main thread's spans
for path in sys.argv[1:]:
    events = json.load(open(path))["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = sorted((e for e in events if e.get("ph") == "X" and e["name"] in
                    ("forward", "backward", "update") and names.get((e["pid"], e["tid"])) == "main"),
                   key=lambda e: e["ts"])
    steps = []
    for e in spans:
        if e["name"] == "forward":
            steps.append(0.0)
        if steps:
            steps[-1] += e["dur"]
    runs.append(steps)
n = min(len(r) for r in runs)
slowest = max(sum(r[:n]) for r in runs) / n
print(round(sum(max(r[i] for r in runs) for i in range(n)) / n / slowest, 4))
EOF
)
awk -F'\t' -v OFS='\t' -v f="$straggler" '/^op\t/ { ops = 1 }
  !ops && ($1 == "forward" || $1 == "backward" || $1 == "update") { $2 *= f } { print }' \
  "$slowest" > "$tmp/calibrated"
predicted=$(build/apps/cohort-plan --model lenet --shape data="$batch",1,28,28 --devices "$np" \
  --devices-per-host "$np" --calibrate "$tmp/link" --no-overlap --profile "$tmp/calibrated" --json |
  tail -1 | sed 's/.*"step_ms":\([0-9.]*\).*/\1/')
measured=$(phases "$tmp/mpi")
awk -v np="$np" -v p="$predicted" -v m="$measured" -v h="${NETNS_HOSTS:-0}" -v f="$straggler" 'BEGIN {
  printf "{\"ranks\":%d,\"netns_hosts\":%d,\"straggler_factor\":%.3f,\"predicted_step_ms\":%.3f,\"measured_step_ms\":%.3f,\"error\":%.3f}\n",
         np, h, f, p, m, (p - m) / m }'
