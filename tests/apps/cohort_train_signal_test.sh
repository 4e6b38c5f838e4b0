#!/usr/bin/env bash
# Note [Stop on a signal] and Note [Checkpoint positions], through the CLI: SIGTERM mid-epoch
# stops after the step with a mid-epoch checkpoint (a signal during validation: at the epoch's
# end, with its checkpoint; epochs here are short, so either happens) and exit 143;
# `resume_epoch: auto` then ends with the parameters of an uninterrupted run, bit for bit. Under
# mpirun a signal to one rank alone stops both at the same step. The signalled runs are asked for
# 100000 epochs, so only the signal ends them however loaded the machine; the comparison runs end
# one epoch after the stop.
#   cohort_train_signal_test.sh TRAIN PARAMS MPIEXEC CONFIG
set -u
train=$1 params=$2 mpiexec=$3 config=$4
source "$(dirname "$0")/lib.sh"
mpi_command "$mpiexec"
common=(--set data.num_samples=1024 --set data.val_samples=128 --set log_level=warn --set seed=5
        --set checkpoint.period=100000)

# The pid of the cohort-train process whose command line holds $1, waiting up to 10 s.
find_rank() {
  for _ in $(seq 1 100); do
    for pid in $(pgrep -x cohort-train); do
      grep -q "$1" "/proc/$pid/cmdline" 2>/dev/null && { echo "$pid"; return; }
    done
    sleep 0.1
  done
}

# The epochs a comparison run trains to cover PREFIX's stop, or nothing: a stop mid-epoch E
# (PREFIX-EEEE-BBBBBBBB.params) needs E + 1, a stop at the end of epoch N (a signal during
# validation: PREFIX-NNNN.params, N epochs complete) needs N + 1.
stop_end() {
  local f e
  f=$(ls "$1"-[0-9][0-9][0-9][0-9]-[0-9]*.params "$1"-[0-9][0-9][0-9][0-9].params 2>/dev/null |
      head -1)
  [[ -z $f ]] && return
  e=$(basename "$f" | sed 's/.*-\([0-9]\{4\}\)\(-[0-9]*\)\{0,1\}\.params/\1/' |
      sed 's/^0*//;s/^$/0/')
  echo $(( e + 1 ))
}

# One process, stopped by SIGTERM mid-run (1 s in: its handlers are installed by then).
cp "$config" "$tmp/sigterm-single.yaml"  # a path that finds this process (and no other test's)
timeout 120 "$train" --config "$tmp/sigterm-single.yaml" "${common[@]}" --set epochs=100000 \
  --set checkpoint.prefix="$tmp/part" > "$tmp/part.log" 2>&1 &
job=$!
pid=$(find_rank "$tmp/sigterm-single.yaml")
sleep 1
kill -TERM "$pid"
wait $job; code=$?
check "SIGTERM exits 143 (code $code)" '[[ $code -eq 143 ]]'
end=$(stop_end "$tmp/part")
check "with a checkpoint where it stopped (comparison epochs ${end:-none})" '[[ -n $end ]]' ||
  ls "$tmp"
check "saying where it stopped" 'grep -q "Stopping on signal 15 after epoch [0-9]*" "$tmp/part.log"'
end=${end:-1}
"$train" --config "$config" "${common[@]}" --set epochs=$end --set checkpoint.prefix="$tmp/part" \
  --set checkpoint.period=$end --set resume_epoch=auto --set log_level=info > "$tmp/resume.log" 2>&1
check "resume_epoch: auto exits 0 naming the checkpoint" \
  '[[ $? -eq 0 ]] && grep -q "Resuming from \"$tmp/part-[0-9-]*.params\"" "$tmp/resume.log"'
"$train" --config "$config" "${common[@]}" --set epochs=$end --set checkpoint.prefix="$tmp/whole" \
  --set checkpoint.period=$end > "$tmp/whole.log" 2>&1
final=$(printf '%04d' $end)
check "and ends with the uninterrupted run's parameters, bit for bit" \
  '"$params" diff "$tmp/whole-$final.params" "$tmp/part-$final.params" > "$tmp/diff.txt" 2>&1' ||
  cat "$tmp/diff.txt"

# Two ranks, SIGTERM to rank 1 alone: both stop after the same step, rank 0 writes the
# checkpoint, the job exits 143, and the resumed job matches an uninterrupted one.
mpicommon=("${common[@]}" --set kvstore=mpi)
cp "$config" "$tmp/sigterm-rank1.yaml"
timeout 120 "${mpi[@]}" -np 1 "$train" --config "$config" "${mpicommon[@]}" --set epochs=100000 \
  --set checkpoint.prefix="$tmp/mpart" : -np 1 "$train" --config "$tmp/sigterm-rank1.yaml" \
  "${mpicommon[@]}" --set epochs=100000 --set checkpoint.prefix="$tmp/mpart" \
  > "$tmp/mpart.log" 2>&1 &
job=$!
pid=$(find_rank "$tmp/sigterm-rank1.yaml")
sleep 1.5
kill -TERM "$pid"
wait $job; code=$?
check "SIGTERM to rank 1 alone ends the job with 143 (code $code)" '[[ $code -eq 143 ]]' ||
  tail -5 "$tmp/mpart.log"
end=$(stop_end "$tmp/mpart")
check "rank 0 wrote the checkpoint where it stopped (comparison epochs ${end:-none})" \
  '[[ -n $end ]]'
end=${end:-1}
final=$(printf '%04d' $end)
timeout 120 "${mpi[@]}" -np 2 "$train" --config "$config" "${mpicommon[@]}" --set epochs=$end \
  --set checkpoint.prefix="$tmp/mpart" --set checkpoint.period=$end --set resume_epoch=auto \
  > "$tmp/mresume.log" 2>&1
check "the resumed 2-rank job exits 0" '[[ $? -eq 0 ]]' || tail -5 "$tmp/mresume.log"
timeout 120 "${mpi[@]}" -np 2 "$train" --config "$config" "${mpicommon[@]}" --set epochs=$end \
  --set checkpoint.prefix="$tmp/mwhole" --set checkpoint.period=$end > "$tmp/mwhole.log" 2>&1
check "and ends with the uninterrupted job's parameters, bit for bit" \
  '"$params" diff "$tmp/mwhole-$final.params" "$tmp/mpart-$final.params" > "$tmp/mdiff.txt" 2>&1' ||
  cat "$tmp/mdiff.txt"
exit $fail
