#!/usr/bin/env bash
# Note [Stop on a signal] and Note [Checkpoint positions], through the CLI: SIGTERM mid-epoch
# stops after the step with a mid-epoch checkpoint and exit 143; `resume_epoch: auto` then ends
# with the parameters of an uninterrupted run, bit for bit. Under mpirun a signal to one rank
# alone stops both at the same step.
#   cohort_train_signal_test.sh TRAIN PARAMS MPIEXEC CONFIG
set -u
train=$1 params=$2 mpiexec=$3 config=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; return 1; fi; }
mpi=("$mpiexec" --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
# Under 1 ms a step: 400 epochs of 8 batches take about 2 s.
common=(--set epochs=400 --set data.num_samples=1024 --set data.val_samples=128 --set log_level=warn --set seed=5)

# The pid of the cohort-train process whose command line holds $1, waiting up to 10 s.
find_rank() {
  for _ in $(seq 1 100); do
    for pid in $(pgrep -x cohort-train); do
      grep -q "$1" "/proc/$pid/cmdline" 2>/dev/null && { echo "$pid"; return; }
    done
    sleep 0.1
  done
}

# Waits up to 10 s for a line matching $2 in file $1: the process is past its signal handlers'
# installation (cohort-train logs its first line after it).
wait_for() {
  for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return; sleep 0.1; done
}

# One process: uninterrupted, then stopped by SIGTERM and resumed.
"$train" --config "$config" "${common[@]}" --set checkpoint.prefix="$tmp/whole" \
  --set checkpoint.period=400 > "$tmp/whole.log" 2>&1
check "the uninterrupted run exits 0" '[[ $? -eq 0 && -f $tmp/whole-0400.params ]]'
cp "$config" "$tmp/single.yaml"
"$train" --config "$tmp/single.yaml" "${common[@]}" --set checkpoint.prefix="$tmp/part" \
  --set checkpoint.period=400 --set log_level=info > "$tmp/part.log" 2>&1 &
job=$!
pid=$(find_rank single.yaml)
wait_for "$tmp/part.log" "cohort-train: 1 worker"
sleep 0.3
kill -TERM "$pid"
wait $job; code=$?
check "SIGTERM exits 143 (code $code)" '[[ $code -eq 143 ]]'
check "with a mid-epoch checkpoint" 'ls "$tmp"/part-[0-9][0-9][0-9][0-9]-0000000[1-8].params > /dev/null 2>&1' ||
  { ls "$tmp"; tail -3 "$tmp/part.log"; }
check "saying where it stopped" 'grep -q "Stopping on signal 15 after epoch [0-9]*, batch [0-9]*" "$tmp/part.log"'
"$train" --config "$config" "${common[@]}" --set checkpoint.prefix="$tmp/part" \
  --set checkpoint.period=400 --set resume_epoch=auto --set log_level=info > "$tmp/resume.log" 2>&1
check "resume_epoch: auto exits 0 naming the checkpoint" \
  '[[ $? -eq 0 ]] && grep -q "Resuming from \"$tmp/part-[0-9]*-0000000[1-8].params\"" "$tmp/resume.log"'
check "and ends with the uninterrupted run's parameters, bit for bit" \
  '"$params" diff "$tmp/whole-0400.params" "$tmp/part-0400.params" > "$tmp/diff.txt"' ||
  cat "$tmp/diff.txt"

# Two ranks, SIGTERM to rank 1 alone: both stop after the same step, rank 0 writes the
# checkpoint, the job exits 143, and the resumed job matches an uninterrupted one.
mpicommon=("${common[@]}" --set kvstore=mpi --set checkpoint.period=400)
timeout 120 "${mpi[@]}" -np 2 "$train" --config "$config" "${mpicommon[@]}" \
  --set checkpoint.prefix="$tmp/mwhole" > "$tmp/mwhole.log" 2>&1
check "the uninterrupted 2-rank job exits 0" '[[ $? -eq 0 && -f $tmp/mwhole-0400.params ]]'
cp "$config" "$tmp/rank1.yaml"
timeout 120 "${mpi[@]}" -np 1 "$train" --config "$config" "${mpicommon[@]}" \
  --set checkpoint.prefix="$tmp/mpart" --set log_level=info : -np 1 "$train" --config "$tmp/rank1.yaml" \
  "${mpicommon[@]}" --set checkpoint.prefix="$tmp/mpart" --set log_level=info \
  > "$tmp/mpart.log" 2>&1 &
job=$!
pid=$(find_rank rank1.yaml)
wait_for "$tmp/mpart.log" "cohort-train: 2 worker"
sleep 0.5
kill -TERM "$pid"
wait $job; code=$?
check "SIGTERM to rank 1 alone ends the job with 143 (code $code)" '[[ $code -eq 143 ]]' ||
  tail -5 "$tmp/mpart.log"
check "rank 0 wrote the mid-epoch checkpoint" \
  'ls "$tmp"/mpart-[0-9][0-9][0-9][0-9]-0000000[1-8].params > /dev/null 2>&1'
timeout 120 "${mpi[@]}" -np 2 "$train" --config "$config" "${mpicommon[@]}" \
  --set checkpoint.prefix="$tmp/mpart" --set resume_epoch=auto > "$tmp/mresume.log" 2>&1
check "the resumed 2-rank job exits 0" '[[ $? -eq 0 ]]' || tail -5 "$tmp/mresume.log"
check "and ends with the uninterrupted job's parameters, bit for bit" \
  '"$params" diff "$tmp/mwhole-0400.params" "$tmp/mpart-0400.params" > "$tmp/mdiff.txt"' ||
  cat "$tmp/mdiff.txt"
exit $fail
