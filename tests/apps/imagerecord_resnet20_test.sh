#!/usr/bin/env bash
# README's image-record recipe, shrunk: scripts/make-image-set.sh packs 256 + 64 Fashion-MNIST
# pictures with cohort-im2rec, and configs/imagerecord_resnet20.yaml trains on them.
#   imagerecord_resnet20_test.sh TRAIN IM2REC REPO
set -u
train=$1 im2rec=$2 repo=$3
source "$(dirname "$0")/lib.sh"
IM2REC=$im2rec "$repo/scripts/make-image-set.sh" "$tmp/set" 256 64 > "$tmp/make.log" 2>&1
check "make-image-set packs both splits" \
  '[[ $? -eq 0 ]] && grep -q "train.rec: 256 record(s), 0 skipped" "$tmp/make.log" && grep -q "val.rec: 64 record(s)" "$tmp/make.log"' ||
  cat "$tmp/make.log"
"$train" --config "$repo/configs/imagerecord_resnet20.yaml" --set epochs=2 --set batch_size=32 \
  --set data.train_rec="$tmp/set/train.rec" --set data.train_idx="$tmp/set/train.idx" \
  --set data.val_rec="$tmp/set/val.rec" --set data.val_idx="$tmp/set/val.idx" --set log_every=0 \
  --metrics-out "$tmp/m.jsonl" > "$tmp/train.log" 2>&1
check "ResNet-20 trains on the records" '[[ $? -eq 0 && $(wc -l < "$tmp/m.jsonl") -eq 2 ]]' ||
  tail -5 "$tmp/train.log"
check "with a validation accuracy" 'grep -q "\"val\":{\"accuracy\":0\.[0-9]" "$tmp/m.jsonl"'
# A label past the classes (a list numbered from 1) is named with its record.
awk -F'\t' 'BEGIN { OFS = "\t" } NR == 3 { $2 = "12.000000" } { print }' "$tmp/set/train.lst" \
  > "$tmp/bad.lst"
"$im2rec" "$tmp/bad" "$tmp/set/images/train" > /dev/null 2>&1
out=$("$train" --config "$repo/configs/imagerecord_resnet20.yaml" --set epochs=1 \
  --set batch_size=16 --set data.train_rec="$tmp/bad.rec" --set data.train_idx="$tmp/bad.idx" \
  --set data.val_rec="$tmp/set/val.rec" --set data.val_idx="$tmp/set/val.idx" 2>&1); code=$?
check "a label past the classes names its record" \
  '[[ $code -eq 2 && "$out" == *"label 12.000000 is not a class number from 0 to 9: record 2 of '"'"'$tmp/bad.rec'"'"', at byte "* ]]' ||
  echo "$out" | tail -2
exit $fail
