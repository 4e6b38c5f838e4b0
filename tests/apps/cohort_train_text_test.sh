#!/usr/bin/env bash
# configs/text_gpt.yaml's job, shrunk (a 1-layer GPT on 150 KB of the dictionary the config
# reads, a fixed slice: the README, used before, changes with every edit and so did the curve):
# it trains, validation perplexity falls every epoch, cohort-predict runs the bucketed model, and
# bad text settings are one-line errors with exit code 2.
set -u
train=$1 config=$2 dictionary=$3 predict=$4
source "$(dirname "$0")/lib.sh"
zcat "$dictionary" | head -c 1000000 | tail -c 150000 > "$tmp/text.txt"
gzip -k "$tmp/text.txt"
small=(--set "data.train_files=[$tmp/text.txt.gz]" --set data.val_fraction=0.1
       --set data.val_batches=4 --set data.batches_per_epoch=25 --set batch_size=8
       --set model.n_layer=1 --set model.n_head=2 --set model.d_model=32 --set model.seq_len=32
       --set epochs=3 --set log_every=100 --set devices=cpu:0,cpu:1)
"$train" --config "$config" "${small[@]}" --metrics-out "$tmp/m.jsonl" > "$tmp/train.log" 2>&1
check "train exits 0" '[[ $? -eq 0 ]]' || cat "$tmp/train.log"
ppl=($(grep -o '"val":{"perplexity":[0-9.e+-]*' "$tmp/m.jsonl" | sed 's/.*://'))
# 25 batches of 8 windows of 32 bytes an epoch: every label position is a token.
tokens=($(grep -o '"tokens":[0-9]*' "$tmp/m.jsonl" | sed 's/.*://'))
check "each epoch counts its 6400 tokens (${tokens[*]})" \
  '[[ "${tokens[*]}" == "6400 6400 6400" ]] && grep -q "\"tokens_per_sec\":[1-9]" "$tmp/m.jsonl"'
check "the log gives tokens/sec" 'grep -q "samples/sec, [0-9]* tokens/sec" "$tmp/train.log"' 
check "one validation perplexity per epoch (${ppl[*]})" '[[ ${#ppl[@]} -eq 3 ]]'
check "validation perplexity falls every epoch (${ppl[*]})" \
  'awk -v a="${ppl[0]}" -v b="${ppl[1]}" -v c="${ppl[2]}" "BEGIN { exit !(a > b && b > c && c < 40) }"'
out=$("$train" --config "$config" "${small[@]}" --set model.seq_len=100000 2>&1); code=$?
check "a text shorter than one batch is exit 2 naming it" \
  '[[ $code -eq 2 && "$out" == *"fewer than one global batch"* ]]'
out=$("$train" --config "$config" --set "data.train_files=[$tmp/none.txt]" 2>&1); code=$?
check "a missing text file is exit 2 naming it" '[[ $code -eq 2 && "$out" == *"none.txt"* ]]'
out=$("$train" --config "$config" "${small[@]}" --set model.n_head=3 2>&1); code=$?
check "d_model not a multiple of n_head is exit 2" \
  '[[ $code -eq 2 && "$out" == *"not a multiple of n_head"* ]]'
# Bucketing: each line of the text a sample in the smallest of three buckets; the manager binds
# each bucket on first use, sharing the default bucket's parameters.
"$train" --config "$config" "${small[@]}" --set 'data.buckets=[8, 16, 32]' --set data.val_batches=0 \
  --set checkpoint.prefix="$tmp/b" --metrics-out "$tmp/b.jsonl" > "$tmp/bucket.log" 2>&1
check "bucketed training exits 0" '[[ $? -eq 0 ]]' || cat "$tmp/bucket.log"
bppl=($(grep -o '"val":{"perplexity":[0-9.e+-]*' "$tmp/b.jsonl" | sed 's/.*://'))
# Bucketed: a bucket's padding positions (label -1) are not tokens.
btokens=$(grep -o '"tokens":[0-9]*' "$tmp/b.jsonl" | head -1 | sed 's/.*://')
check "bucketed epochs count real tokens only ($btokens of at most 6400)" \
  '[[ -n $btokens && $btokens -gt 0 && $btokens -lt 6400 ]]' 
check "bucketed validation perplexity falls (${bppl[*]})" \
  '[[ ${#bppl[@]} -eq 3 ]] && awk -v a="${bppl[0]}" -v c="${bppl[2]}" "BEGIN { exit !(a > c && c < 40) }"'
# Predicting over the same buckets: each row holds its bucket's positions, a label and a class
# each (no values by default: a language model's row would be 256 a position).
"$predict" --config "$config" "${small[@]}" --set 'data.buckets=[8, 16, 32]' \
  --set data.val_batches=0 --symbol "$tmp/b-symbol.json" --params "$tmp/b-0003.params" \
  --out "$tmp/b.csv" > "$tmp/predict.log" 2>&1
check "predict over buckets exits 0" '[[ $? -eq 0 ]]' || cat "$tmp/predict.log"
widths=$(awk -F, 'NR > 1 { print split($4, p, " ") }' "$tmp/b.csv" | sort -un | tr '\n' ' ')
check "predicted rows have their bucket's width ($widths)" \
  '[[ -n $widths && $(awk -F, "NR > 1 && (NF != 4 || (split(\$4, p, \" \") != 8 && split(\$4, p, \" \") != 16 && split(\$4, p, \" \") != 32))" "$tmp/b.csv" | wc -l) -eq 0 && $(wc -w <<< "$widths") -ge 2 ]]'
out=$("$train" --config "$config" "${small[@]}" --set 'data.buckets=[8, 64]' 2>&1); code=$?
check "a bucket longer than model.seq_len is exit 2" \
  '[[ $code -eq 2 && "$out" == *"exceeds model.seq_len 32"* ]]'
out=$("$train" --config "$config" "${small[@]}" --set 'data.buckets=[16, 8]' 2>&1); code=$?
check "buckets out of order are exit 2" '[[ $code -eq 2 && "$out" == *"ascending order"* ]]'
out=$("$train" --config "$config" "${small[@]}" --set model.vocab=10 2>&1); code=$?
check "a byte outside model.vocab is exit 2 naming the file and the key" \
  '[[ $code -eq 2 && "$out" == *"text.txt.gz'"'"' holds byte"*"model.vocab"* ]]'
exit $fail
