#!/usr/bin/env bash
# Note [No hang]: a rank that fails after MPI is up ends the whole mpirun job at once, naming
# itself, with the failure's exit code; before, rank 1 with a torn data file blocked in
# MPI_Finalize while rank 0 waited in the kvstore's first broadcast, forever.
#   cohort_train_mpi_failure_test.sh TRAIN MPIEXEC CONFIG
set -u
train=$1 mpiexec=$2 config=$3
source "$(dirname "$0")/lib.sh"
mpi_command "$mpiexec"
head -c 5000 /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz > "$tmp/torn.gz"
common=(--config "$config" --set kvstore=mpi --set epochs=1 --set log_level=warn)
start=$(date +%s.%N)
out=$(timeout 60 "${mpi[@]}" -np 1 "$train" "${common[@]}" : \
  -np 1 "$train" "${common[@]}" --set data.train_image="$tmp/torn.gz" 2>&1); code=$?
seconds=$(seconds_since "$start")
check "the job ends with rank 1's exit code 2 (code $code after $seconds s)" '[[ $code -eq 2 ]]'
check "within 20 s" 'awk -v s="$seconds" "BEGIN { exit !(s < 20) }"'
check "the failing rank names itself and the file" \
  '[[ "$out" == *"cohort-train: rank 1: "*"torn.gz"* ]]' || echo "$out" | head -20
# A bad config on rank 1 alone, met before MPI starts: the rank still names itself.
out=$(timeout 60 "${mpi[@]}" -np 1 "$train" "${common[@]}" : \
  -np 1 "$train" "${common[@]}" --set data.train_image="$tmp/missing.gz" 2>&1); code=$?
check "a config error on rank 1 alone is exit 2 naming the rank (code $code)" \
  '[[ $code -eq 2 && "$out" == *"cohort-train: rank 1: "*"missing.gz"* ]]' || echo "$out" | head -5
# A bad label in validation data every rank holds (the default sharding) is found before the
# first step by the rank whose share holds it (Note [Labels checked up front]), and said once.
for i in $(seq 0 7); do echo "$i,1,2,3"; done > "$tmp/x.csv"
printf '0\n1\n2\n3\n0\n1\n12\n3\n' > "$tmp/y12.csv"
out=$(timeout 60 "${mpi[@]}" -np 2 "$train" "${common[@]}" --set data.kind=csv \
  --set data.train_data_csv="$tmp/x.csv" --set data.train_label_csv="$tmp/y12.csv" \
  --set data.val_data_csv="$tmp/x.csv" --set data.val_label_csv="$tmp/y12.csv" \
  --set 'data.data_shape=[4]' --set batch_size=4 --set devices=cpu:0 --set metrics=[acc] 2>&1)
code=$?
check "a bad label is exit 2, said once by the rank that checks it (code $code)" \
  '[[ $code -eq 2 && $(grep -c "label 12 is outside the 10 classes of the predictions: line 7 of" <<<"$out") -eq 1 &&
     "$out" == *"cohort-train: rank 1: "* ]]' || echo "$out" | head -8
# Two processes whose kvstore does not join them train alone, each with a warning.
out=$(timeout 60 "${mpi[@]}" -np 2 "$train" --config "$config" --set kvstore=local \
  --set epochs=1 --set data.batches_per_epoch=2 --set log_level=warn 2>&1); code=$?
check "mpirun with kvstore local warns on each rank (code $code)" \
  '[[ $code -eq 0 && $(grep -c "but kvstore .local. does not join the other processes" <<<"$out") -eq 2 ]]' ||
  echo "$out" | head -5
# Ranks that differ in what they train (Note [Agreement]): before, epochs 2 against 1 hung.
for pair in "epochs=2 epochs=1:epochs" "model.num_classes=10 model.num_classes=5:symbol" \
            "data.batches_per_epoch=5 data.batches_per_epoch=6:training samples per worker" \
            "checkpoint.prefix=$tmp/ck log_level=warn:checkpoints" "metrics=[acc] metrics=[ce]:metrics"; do
  first=${pair%% *} rest=${pair#* } second=${rest%%:*} item=${pair##*:}
  out=$(timeout 60 "${mpi[@]}" -np 1 "$train" "${common[@]}" --set "$first" : \
    -np 1 "$train" "${common[@]}" --set "$second" 2>&1); code=$?
  check "$first against $second is exit 2 naming $item (code $code)" \
    '[[ $code -eq 2 && "$out" == *"workers do not train the same thing; they differ in $item"* ]]' ||
    echo "$out" | head -5
done
# A stalled rank (SIGSTOP): the other rank's next collective waits past COHORT_COMM_TIMEOUT and
# the job ends (Note [Collective deadline]). Before, both waited forever.
cp "$config" "$tmp/rank1.yaml"  # the same configuration under a name that finds rank 1's process
(COHORT_COMM_TIMEOUT=3 timeout 120 "${mpi[@]}" -x COHORT_COMM_TIMEOUT \
   -np 1 "$train" "${common[@]}" --set epochs=200 : \
   -np 1 "$train" --config "$tmp/rank1.yaml" --set kvstore=mpi --set epochs=200 --set log_level=warn \
   > "$tmp/stall.log" 2>&1; echo $? > "$tmp/stall.code") &
rank1=""
for _ in $(seq 1 100); do
  sleep 0.1
  for pid in $(pgrep -x cohort-train); do
    grep -q "$tmp/rank1.yaml" "/proc/$pid/cmdline" 2>/dev/null && rank1=$pid  # ours alone
  done
  [[ -n $rank1 ]] && break
done
sleep 3  # training under way
kill -STOP "$rank1" 2>/dev/null
stopped=$(date +%s.%N)
wait
seconds=$(seconds_since "$stopped")
check "a stalled rank ends the job with exit 124 ($(cat "$tmp/stall.code" 2>/dev/null), $seconds s after the stop)" \
  '[[ -n $rank1 && $(cat "$tmp/stall.code") -eq 124 ]]' || tail -5 "$tmp/stall.log"
check "within 15 s of the stop" 'awk -v s="$seconds" "BEGIN { exit !(s < 15) }"'
check "naming the collective and the timeout" \
  'grep -q "rank 0: .* waited .* more than COHORT_COMM_TIMEOUT=3 s" "$tmp/stall.log"'
exit $fail
