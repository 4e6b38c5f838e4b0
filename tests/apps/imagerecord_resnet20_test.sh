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
exit $fail
