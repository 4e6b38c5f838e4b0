#!/usr/bin/env bash
# A shipped configuration trains from scratch: the last epoch's validation accuracy reaches a
# floor. Usage: cohort_train_converges_test.sh COHORT_TRAIN CONFIG MIN_VAL_ACCURACY
set -u
train=$1 config=$2 floor=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$train" --config "$config" --set log_level=warn --metrics-out "$tmp/m.jsonl" > "$tmp/log" 2>&1; then
  echo "FAIL: cohort-train --config $config exited non-zero:"; cat "$tmp/log"; exit 1
fi
acc=$(tail -n 1 "$tmp/m.jsonl" | sed -n 's/.*"val":{"accuracy":\([0-9.e-]*\).*/\1/p')
cat "$tmp/m.jsonl"
if awk -v a="$acc" -v f="$floor" 'BEGIN { exit !(a != "" && a >= f) }'; then
  echo "ok: validation accuracy $acc >= $floor"
else
  echo "FAIL: validation accuracy '$acc' < $floor"; exit 1
fi
