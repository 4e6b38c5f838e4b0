#!/usr/bin/env bash
# cohort-generate end to end (Note [Text generation]): a small GPT trained for a few steps on
# dict-gcide continues a prompt; the same seed gives the same text, top-k 1 and top-p near 0
# are the greedy text (with and without the KV cache), a prompt longer than the window slides it,
# and bad options are exit 2.
#   cohort_generate_test.sh TRAIN GENERATE SOURCE_DIR
set -u
train=$1 generate=$2 src=$3
source "$(dirname "$0")/lib.sh"
if [[ ! -e /usr/share/dictd/gcide.dict.dz ]]; then echo "skip: dict-gcide not installed"; exit 0; fi
"$train" --config "$src/configs/text_gpt.yaml" --set model.n_layer=1 --set model.d_model=32 \
  --set model.n_head=2 --set model.seq_len=32 --set batch_size=16 --set epochs=1 \
  --set data.batches_per_epoch=40 --set data.val_batches=1 --set log_level=warn \
  --set checkpoint.prefix="$tmp/g" > "$tmp/train.log" 2>&1
check "a small GPT trains" '[[ $? -eq 0 && -f "$tmp/g-0001.params" ]]' || cat "$tmp/train.log"
gen=("$generate" --symbol "$tmp/g-symbol.json" --params "$tmp/g-0001.params")
a=$("${gen[@]}" --prompt "The " --length 60 --seed 7)
b=$("${gen[@]}" --prompt "The " --length 60 --seed 7)
c=$("${gen[@]}" --prompt "The " --length 60 --seed 8)
check "60 bytes, the same for the same seed, others for another" \
  '[[ ${#a} -eq 60 && "$a" == "$b" && "$a" != "$c" ]]' || printf '%q\n%q\n' "$a" "$c"
greedy=$("${gen[@]}" --prompt "The " --length 40 --temperature 0)
topk=$("${gen[@]}" --prompt "The " --length 40 --top-k 1 --seed 3)
topp=$("${gen[@]}" --prompt "The " --length 40 --top-p 0.000001 --seed 4)
check "top-k 1 and a tiny top-p give the greedy text" '[[ -n "$greedy" && "$topk" == "$greedy" && "$topp" == "$greedy" ]]' ||
  printf '%q\n%q\n%q\n' "$greedy" "$topk" "$topp"
nocache=$("${gen[@]}" --prompt "The " --length 40 --temperature 0 --no-kv-cache)
check "--no-kv-cache (the window every byte) gives the greedy text of the KV cache" '[[ "$nocache" == "$greedy" ]]' ||
  printf '%q\n%q\n' "$greedy" "$nocache"
printf 'A word of more than thirty-two bytes, which slides the window: ' > "$tmp/prompt"
long=$("${gen[@]}" --prompt-file "$tmp/prompt" --length 50 --seed 1)
check "a prompt longer than the window (32) slides it" '[[ ${#long} -eq 50 ]]'
expect 2 "--top-p 0: expected a number in \(0, 1\]" "${gen[@]}" --prompt x --top-p 0
expect 2 "the prompt is empty" "${gen[@]}" --prompt ""
expect 2 "give --context" "$generate" --symbol "$tmp/g-symbol.json" \
  --params "$src/tests/data/mxnet_train/mlp_sgd.params" --prompt x
expect 2 "cohort-generate: the network.s argument .* but the parameter given has shape" "$generate" --symbol "$tmp/g-symbol.json" \
  --params "$src/tests/data/mxnet_train/mlp_sgd.params" --prompt x --context 32
exit $fail
