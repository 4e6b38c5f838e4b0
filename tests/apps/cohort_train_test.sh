#!/usr/bin/env bash
# cohort-train and cohort-predict end to end on generated data: metrics lines, a checkpoint,
# predictions that match the labels, and one-line errors with exit code 2.
set -u
train=$1 predict=$2 config=$3
source "$(dirname "$0")/lib.sh"
"$train" --config "$config" --set epochs=2 --set checkpoint.prefix="$tmp/mlp" \
  --metrics-out "$tmp/m.jsonl" > "$tmp/train.log" 2>&1
check "train exits 0" '[[ $? -eq 0 ]]'
# The epoch's learning rate in the JSONL and the log: a factor schedule halving it every epoch.
"$train" --config "$config" --set epochs=3 --set optimizer.lr=0.1 --set lr_schedule.name=factor \
  --set lr_schedule.step_epochs=1 --set lr_schedule.factor=0.5 --metrics-out "$tmp/lr.jsonl" \
  > "$tmp/lr.log" 2>&1
check "each epoch's lr is its last update's (0.1, 0.05, 0.025)" \
  '[[ $(grep -o "\"lr\":[0-9.]*" "$tmp/lr.jsonl" | tr "\n" " ") == "\"lr\":0.1 \"lr\":0.05 \"lr\":0.025 " ]] && grep -q "lr=0.05" "$tmp/lr.log"'
# --metrics-every K: a line every K steps with the running training metrics (every worker's), then the
# epoch's line as before.
"$train" --config "$config" --set epochs=1 --metrics-out "$tmp/steps.jsonl" --metrics-every 5 \
  > /dev/null 2>&1
check "--metrics-every writes step lines, then the epoch's" \
  'head -1 "$tmp/steps.jsonl" | grep -q "^{\"batch\":5,\"epoch\":0,\"scope\":\"all workers\",\"train\":{\"accuracy\":" && [[ $(grep -c "\"batch\":" "$tmp/steps.jsonl") -ge 2 && -z $(grep -o "\"batch\":[0-9]*" "$tmp/steps.jsonl" | grep -v "[05]$") ]] && tail -1 "$tmp/steps.jsonl" | grep -q "\"samples_per_sec\""'
expect 2 "--metrics-every needs --metrics-out" "$train" --config "$config" --metrics-every 5
# On a terminal (script(1) gives it one) the progress line also says where validation is.
out=$(timeout 60 script -qec "$train --config $config --set epochs=1 --set log_level=warn" /dev/null |
  tr '\r' '\n')
check "a terminal sees the validation progress line" '[[ "$out" == *"Epoch 0 validation ["* ]]'
# Input files a config names are relative to its folder, --set values to the working directory.
mkdir -p "$tmp/job/d"
awk 'BEGIN { srand(3); for (i = 0; i < 16; i++) { a = rand(); b = rand();
  printf "%f,%f\n", a, b > "'"$tmp"'/job/d/x.csv"; print (a > b) > "'"$tmp"'/job/d/y.csv" } }'
printf '%s\n' 'model: {name: mlp, num_classes: 2}' 'batch_size: 4' 'epochs: 1' \
  'data: {kind: csv, train_data_csv: d/x.csv, train_label_csv: d/y.csv, data_shape: [2], label_shape: [1]}' \
  > "$tmp/job/job.yaml"
out=$(cd / && "$train" --config "$tmp/job/job.yaml" 2>&1); code=$?
check "a config's relative input paths are the config folder's, from any directory" '[[ $code -eq 0 ]]' \
  || echo "$out"
out=$(cd "$tmp" && "$train" --config job/job.yaml --set data.train_label_csv=job/d/y.csv 2>&1); code=$?
check "--set paths are the working directory's" '[[ $code -eq 0 ]]' || echo "$out"
# --eval-only: the last checkpoint's validation metrics are the last epoch's.
"$train" --config "$config" --eval-only --set resume_epoch=2 --set checkpoint.prefix="$tmp/mlp" \
  --metrics-out "$tmp/eval.jsonl" > "$tmp/eval.log" 2>&1
check "--eval-only exits 0" '[[ $? -eq 0 ]]' || cat "$tmp/eval.log"
check "--eval-only gives the last epoch's validation metrics" \
  '[[ $(grep -o "\"val\":{[^}]*}" "$tmp/eval.jsonl") == $(tail -1 "$tmp/m.jsonl" | grep -o "\"val\":{[^}]*}") ]]'
out=$("$train" --config "$config" --eval-only --set resume_epoch=auto --set checkpoint.prefix="$tmp/none" 2>&1); code=$?
check "--eval-only without a checkpoint is exit 2" '[[ $code -eq 2 && "$out" == *"no checkpoint beside"* ]]'
check "one metrics line per epoch" '[[ $(wc -l < "$tmp/m.jsonl") -eq 2 ]]'
check "metrics lines hold epoch, train, val, samples_per_sec" \
  'grep -q "\"epoch\":1" "$tmp/m.jsonl" && grep -q "\"val\":{\"accuracy\"" "$tmp/m.jsonl" && grep -q samples_per_sec "$tmp/m.jsonl"'
check "checkpoint files" '[[ -f $tmp/mlp-symbol.json && -f $tmp/mlp-0002.params && -f $tmp/mlp-0002.states ]]'
"$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --params "$tmp/mlp-0002.params" \
  --out "$tmp/p.csv" > /dev/null 2>&1
check "predict exits 0 with a header and one row per validation sample" \
  '[[ $? -eq 0 && $(wc -l < "$tmp/p.csv") -eq 1025 && $(head -n 1 "$tmp/p.csv" | cut -d, -f1-5) == "index,source,label,predicted,p0" ]]'
# Validation sample i has class i % 10 (configs/synthetic_mlp.yaml's generator): the rows give
# each sample's index, its label, and (mostly) that class.
correct=$(awk -F, 'NR > 1 && $1 == NR - 2 && $3 == $1 % 10 { if ($4 == $3) n++ } END { print n + 0 }' "$tmp/p.csv")
check "predictions match the labels ($correct of 1024)" '[[ $correct -ge 1000 ]]'
# --top-k: the most likely classes and their values instead of every value; --split train.
"$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --params "$tmp/mlp-0002.params" \
  --top-k 2 --split train --out "$tmp/top.csv" > /dev/null 2>&1
check "--top-k 2 --split train writes two classes and values a row, every training sample" \
  '[[ $? -eq 0 && $(head -n 1 "$tmp/top.csv") == "index,source,label,predicted,top1,p1,top2,p2" && $(wc -l < "$tmp/top.csv") -eq 4097 && $(awk -F, "NR > 1 && (NF != 8 || \$5 != \$4)" "$tmp/top.csv" | wc -l) -eq 0 ]]'
out=$("$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --params "$tmp/mlp-0002.params" \
  --split test --out "$tmp/x.csv" 2>&1); code=$?
check "--split other than train or val is exit 2" '[[ $code -eq 2 && "$out" == *"--split: '"'"'test'"'"' is not train or val"* ]]'
# Fine-tuning from the checkpoint: a new head for 5 classes, the first two layers frozen.
"$train" --config "$config" --set epochs=1 --set model.params="$tmp/mlp-0002.params" \
  --set model.num_classes=5 --set data.num_classes=5 --set 'model.reinit=[fc3]' \
  --set 'model.fixed_params=[fc1_.*, fc2_.*]' --metrics-out "$tmp/ft.jsonl" > "$tmp/ft.log" 2>&1
check "fine-tuning exits 0 and names what it initialized" \
  '[[ $? -eq 0 ]] && grep -q "Initialized 2 parameter(s) the initial parameters did not give: fc3_bias, fc3_weight" "$tmp/ft.log"'
out=$("$train" --config "$config" --set epochs=1 --set model.params="$tmp/mlp-0002.params" \
  --set model.num_classes=5 --set data.num_classes=5 2>&1); code=$?
check "a head of another shape without reinit is exit 2 naming both shapes" \
  '[[ $code -eq 2 && "$out" == *"'"'"'fc3_bias'"'"' has shape (10,) but the network'"'"'s is (5,)"* ]]'
out=$("$train" --config "$config" --set model.params="$tmp/none.params" 2>&1); code=$?
check "a missing model.params file is exit 2" '[[ $code -eq 2 && "$out" == *"none.params"* ]]'
# Input that does not fit the network fails before training, exit 2 naming what is wrong.
out=$("$train" --config "$config" --set epochs=1 --set model.params="$tmp/mlp-0002.params" \
  --set 'model.reinit=[fc9]' 2>&1); code=$?
check "a reinit layer neither the network nor the file has is exit 2 naming it" \
  '[[ $code -eq 2 && "$out" == *"have a layer '"'"'fc9'"'"'"* ]]'
out=$("$train" --config "$config" --set 'model.fixed_params=[.*]' 2>&1); code=$?
check "freezing every parameter is exit 2" '[[ $code -eq 2 && "$out" == *"nothing would train"* ]]'
out=$("$train" --config "$config" --set 'metrics=[f1]' --set log_every=1 2>&1); code=$?
check "a metric that cannot read the outputs is exit 2 before the first step" \
  '[[ $code -eq 2 && "$out" != *"Batch ["* ]]'
out=$("$train" --config "$config" --set 'work_load=[1, 0]' --set devices=cpu:0,cpu:1 2>&1); code=$?
check "a work_load share of 0 is exit 2 naming the key" '[[ $code -eq 2 && "$out" == *"key '"'"'work_load'"'"'"* ]]'
touch "$tmp/a-file"  # a folder below a file cannot be made
out=$("$train" --config "$config" --set checkpoint.prefix="$tmp/a-file/mlp" 2>&1); code=$?
check "a checkpoint folder that cannot be made is exit 2 before training" \
  '[[ $code -eq 2 && "$out" == *"checkpoint.prefix"*"cannot make folder"* && "$out" != *"Epoch[0]"* ]]'
out=$("$train" --config "$config" --timeline "$tmp/a-file/t.json" 2>&1); code=$?
check "a --timeline folder that cannot be made is exit 2 before training" \
  '[[ $code -eq 2 && "$out" == *"--timeline"* && "$out" != *"Epoch[0]"* ]]'
out=$("$train" --config "$config" --set epochs=2 --set checkpoint.prefix="$tmp/mlp" --set resume_epoch=auto 2>&1); code=$?
check "resume_epoch: auto after the last epoch is exit 0 saying the run is complete" \
  '[[ $code -eq 0 && "$out" == *"the run is complete, nothing left to train"* && "$out" != *"Epoch[2]"* ]]'
# A checkpoint of another network: the file and the parameter named, exit 2 (it was exit 1
# naming neither the file nor anything but CopyParamsFrom).
out=$("$train" --config "$config" --set epochs=2 --set checkpoint.prefix="$tmp/mlp" --set resume_epoch=1 \
  --set model.num_classes=5 --set data.num_classes=5 2>&1); code=$?
check "resuming another network's checkpoint is exit 2 naming the file and the parameter" \
  '[[ $code -eq 2 && "$out" == *"'"'"'$tmp/mlp-0001.params'"'"': the network'"'"'s argument '"'"'fc3_bias'"'"' has shape (5,) but the parameter given has shape (10,)"* ]]' ||
  echo "$out" | tail -2
out=$("$train" --config "$config" --set log_level=bogus 2>&1); code=$?
check "an unknown log_level is exit 2 naming it" '[[ $code -eq 2 && "$out" == *"log_level: unknown log level"* ]]'
out=$(COHORT_LOG_LEVEL=bogus "$train" --config "$config" 2>&1); code=$?
check "an unknown COHORT_LOG_LEVEL is exit 2 naming it" '[[ $code -eq 2 && "$out" == *"COHORT_LOG_LEVEL: unknown"* ]]'
# --profile: the step's phases, then one row per op with times that add up to at most the step.
out=$(COHORT_LOG_LEVEL=warn "$train" --config "$config" --set epochs=1 2>&1); code=$?
check "COHORT_LOG_LEVEL=warn silences the info lines" '[[ $code -eq 0 && "$out" != *"[info]"* ]]'
out=$(COHORT_LOG_LEVEL=warn "$train" --config "$config" --set epochs=1 --set log_level=info 2>&1)
check "the config's log_level wins over COHORT_LOG_LEVEL" '[[ "$out" == *"[info]"* ]]'
for threads in 1 3; do
  out=$(COHORT_NUM_THREADS=2 "$train" --config "$config" --set epochs=1 --set threads=$threads 2>&1)
  check "threads: $threads is the kernel threads' count, over COHORT_NUM_THREADS" \
    '[[ "$out" == *", $threads kernel thread(s) a worker"* ]]'
done
"$train" --config "$config" --set epochs=1 --set log_level=warn --profile > "$tmp/profile.txt" 2>&1
check "profile header and phases" \
  'grep -q "^# profile: [0-9]* steps, [0-9.]* ms per step$" "$tmp/profile.txt" && [[ $(grep -cE "^(data|forward|backward|update|metric)[[:blank:]]" "$tmp/profile.txt") -eq 5 ]]'
check "profile rows for the MLP's ops (fc1..fc3, relus, softmax)" \
  '[[ $(grep -cE "^(flatten|fc1|relu1|fc2|relu2|fc3|softmax)[[:blank:]]" "$tmp/profile.txt") -eq 7 ]]'
check "op shares sum to at most 1" \
  'awk -F"[[:blank:]]" "/^(flatten|fc|relu|softmax)/ { s += \$5 } END { exit !(s > 0 && s <= 1.0001) }" "$tmp/profile.txt"'
out=$("$train" --config "$config" --set optimizer.lr=fast 2>&1); code=$?
check "a wrong type is exit 2 naming the key" '[[ $code -eq 2 && "$out" == *"key '"'"'optimizer.lr'"'"': expected a number"* ]]'
# An optimizer MXNet has, from YAML: LAMB learns the synthetic MLP in one epoch; its states file
# is LAMB's (two states a weight).
"$train" --config "$config" --set epochs=1 --set optimizer.name=lamb --set optimizer.lr=0.01 \
  --set checkpoint.prefix="$tmp/lamb" --metrics-out "$tmp/lamb.jsonl" > "$tmp/lamb.log" 2>&1
check "optimizer lamb trains (validation accuracy above 0.9)" \
  '[[ $? -eq 0 ]] && grep -qE "\"val\":\{\"accuracy\":(0\.9[0-9]*|1\.0)" "$tmp/lamb.jsonl"'
# Mixed precision (Note [AMP pass]): the MLP's layers in bfloat16 learn as in float32; a
# checkpoint's symbol holds the casts (as MXNet's save with remove_amp_cast=False would).
"$train" --config "$config" --set epochs=1 --set precision=bfloat16 \
  --set checkpoint.prefix="$tmp/bf16" --metrics-out "$tmp/bf16.jsonl" > "$tmp/bf16.log" 2>&1
check "precision bfloat16 trains (validation accuracy above 0.9)" \
  '[[ $? -eq 0 ]] && grep -qE "\"val\":\{\"accuracy\":(0\.9[0-9]*|1\.0)" "$tmp/bf16.jsonl" && grep -q "_amp_cast_bfloat16" "$tmp/bf16-symbol.json"' ||
  cat "$tmp/bf16.log"
# Early stopping (Note [Early stopping]): with a learning rate of 0 the validation accuracy never
# improves after the first epoch, so patience 2 ends a 10-epoch run after its third; the first
# epoch's parameters are kept as PREFIX-best.params.
out=$("$train" --config "$config" --set epochs=10 --set optimizer.lr=0 --set optimizer.momentum=0 \
  --set early_stopping.patience=2 --set checkpoint.prefix="$tmp/early" \
  --metrics-out "$tmp/early.jsonl" 2>&1); code=$?
check "early stopping ends the run after patience epochs without improvement" \
  '[[ $code -eq 0 && $(wc -l < "$tmp/early.jsonl") -eq 3 && -f "$tmp/early-best.params" && "$out" == *"Early stopping after epoch 2: Validation-accuracy has not improved for 2 epoch(s)"*"at epoch 0)"* ]]' ||
  echo "$out" | tail -5
out=$("$train" --config "$config" --set early_stopping.patience=1 --set early_stopping.metric=f1 2>&1); code=$?
check "early stopping on a metric the run lacks is exit 2 naming the metrics" \
  '[[ $code -eq 2 && "$out" == *"key '"'"'early_stopping.metric'"'"': '"'"'f1'"'"' is not a validation metric of this run (accuracy)"* ]]'
# float16 scales the loss by default (Note [Loss scaling]): the epoch's line in the JSONL and the
# log carries the scale; a resumed run starts from the checkpoint's scale.
"$train" --config "$config" --set epochs=1 --set precision=float16 \
  --set checkpoint.prefix="$tmp/fp16" --metrics-out "$tmp/fp16.jsonl" > "$tmp/fp16.log" 2>&1
check "precision float16 trains with a loss scale (validation accuracy above 0.9)" \
  '[[ $? -eq 0 ]] && grep -qE "\"val\":\{\"accuracy\":(0\.9[0-9]*|1\.0)" "$tmp/fp16.jsonl" && grep -qE "\"loss_scale\":[0-9]" "$tmp/fp16.jsonl" && grep -q "loss scale" "$tmp/fp16.log"' ||
  cat "$tmp/fp16.log"
scale=$(grep -oE '"loss_scale":[0-9.e+]+' "$tmp/fp16.jsonl" | cut -d: -f2)
"$train" --config "$config" --set epochs=2 --set precision=float16 --set resume_epoch=1 \
  --set loss_scale_growth_interval=100000 --set checkpoint.prefix="$tmp/fp16" \
  --metrics-out "$tmp/fp16b.jsonl" > "$tmp/fp16b.log" 2>&1
resumed=$(grep -oE '"loss_scale":[0-9.e+]+' "$tmp/fp16b.jsonl" | cut -d: -f2)
check "a resumed float16 run goes on from the checkpoint's loss scale ($scale)" \
  '[[ -n "$scale" && "$scale" != 65536 && "$resumed" == "$scale" ]]' || cat "$tmp/fp16b.log"
"$train" --config "$config" --set epochs=1 --metrics-out "$tmp/fp32.jsonl" > /dev/null 2>&1
check "float32 does not scale the loss" '! grep -q loss_scale "$tmp/fp32.jsonl"'
out=$("$train" --config "$config" --set loss_scale_init=1000 2>&1); code=$?
check "a loss scale that is not a power of two is exit 2 naming the key" \
  '[[ $code -eq 2 && "$out" == *"key '"'"'loss_scale_init'"'"': 1000 is not a power of two"* ]]'
out=$("$train" --config "$config" --set epochs=1 --set gradient_compression=bfloat16 2>&1); code=$?
check "gradient compression in one process says there is no wire" \
  '[[ $code -eq 0 && "$out" == *"gradient_compression bfloat16: one worker, no gradient crosses a wire"* ]]'
out=$("$train" --config "$config" --set gradient_compression=int8 2>&1); code=$?
check "an unknown gradient compression is exit 2 naming the key" \
  '[[ $code -eq 2 && "$out" == *"key '"'"'gradient_compression'"'"': '"'"'int8'"'"' is not none, bfloat16 or float16"* ]]'
out=$("$train" --config "$config" --set accumulate=2 --set checkpoint.every_steps=3 \
  --set checkpoint.prefix="$tmp/acc" 2>&1); code=$?
check "checkpoints amid an accumulation window are refused (exit 2)" \
  '[[ $code -eq 2 && "$out" == *"checkpoint.every_steps'"'"' (3) must be a multiple of '"'"'accumulate'"'"' (2)"* ]]'
# A checkpoint folder that does not exist yet is made (one that cannot be: above).
"$train" --config "$config" --set epochs=1 --set checkpoint.prefix="$tmp/new/sub/mlp" > /dev/null 2>&1
check "checkpoint.prefix's missing folders are made" '[[ -f "$tmp/new/sub/mlp-0001.params" ]]'
out=$("$train" --config "$config" --set precision=float8 2>&1); code=$?
check "an unknown precision is exit 2 naming the key" \
  '[[ $code -eq 2 && "$out" == *"key '"'"'precision'"'"': '"'"'float8'"'"' is not float32, bfloat16 or float16"* ]]'
out=$("$train" --config "$config" --set optimizer.name=lambda 2>&1); code=$?
check "an unknown optimizer is exit 2 naming the key and the choices" \
  '[[ $code -eq 2 && "$out" == *"key '"'"'optimizer.name'"'"': unknown optimizer '"'"'lambda'"'"': expected sgd, nag"* ]]'
{ cat "$config"; echo "epochs: 1"; } > "$tmp/twice.yaml"
out=$("$train" --config "$tmp/twice.yaml" 2>&1); code=$?
check "a key written twice is exit 2 naming both lines" \
  '[[ $code -eq 2 && "$out" == *"key '"'"'epochs'"'"' appears twice (lines "*" and "*"): give it once"* ]]'
# Thread counts: above the cores warned of; one whose stacks the address-space limit cannot hold
# refused before any thread starts (oneTBB would abort the process).
cores=$(getconf _NPROCESSORS_ONLN)
out=$(COHORT_NUM_THREADS=$((cores * 2)) "$train" --config "$config" --set epochs=1 2>&1); code=$?
check "more threads than cores trains, with a warning" \
  '[[ $code -eq 0 && "$out" == *"more threads than cores run slower, not faster"* ]]'
out=$( (ulimit -v 3000000; COHORT_NUM_THREADS=1024 "$train" --config "$config" --set epochs=1) 2>&1)
code=$?
check "1024 threads under a 3 GB address-space limit is exit 2 naming the limit" \
  '[[ $code -eq 2 && "$out" == *"1024 threads need"*"ulimit -v"* ]]'
out=$("$train" --config "$config" --set modle.name=mlp 2>&1); code=$?
check "an unknown key is exit 2 naming the near one" \
  '[[ $code -eq 2 && "$out" == *"unknown key '"'"'modle'"'"' (did you mean '"'"'model'"'"'?)"* ]]'
out=$("$train" --config "$config" --set optimizer.momentm=0.9 2>&1); code=$?
check "a misspelt nested key names the near one" \
  '[[ $code -eq 2 && "$out" == *"(did you mean '"'"'optimizer.momentum'"'"'?)"* ]]'
out=$("$train" --config "$config" --set lr=0.1 2>&1); code=$?
check "a key at the wrong level names where it belongs" \
  '[[ $code -eq 2 && "$out" == *"unknown key '"'"'lr'"'"' (did you mean '"'"'optimizer.lr'"'"'?)"* ]]'
out=$("$train" --config "$config" --set checkpoint.zzz=1 2>&1); code=$?
check "an unknown key with no near one lists its level's keys" \
  '[[ $code -eq 2 && "$out" == *"'"'"'checkpoint'"'"' takes: prefix, period, every_steps"* ]]'
out=$("$train" --config "$config" --set epochs=1 --set log_every= --set data.batches_per_epoch=5 \
      --metrics-out "$tmp/unset.jsonl" 2>&1); code=$?
check "--set key= unsets the key (its default applies)" \
  '[[ $code -eq 0 && $(wc -l < "$tmp/unset.jsonl") -eq 1 ]]'
out=$("$train" --config "$tmp/missing.yaml" 2>&1); code=$?
check "a missing config is exit 2" '[[ $code -eq 2 && "$out" == *"does not exist"* ]]'
out=$("$train" --config "$config" --set kvstore=nccl 2>&1); code=$?
check "nccl with CPU devices is a clear exit 2" '[[ $code -eq 2 && "$out" == *"nccl reduces on GPUs"* ]]'
out=$("$train" --config "$config" --set devices=gpu:7 2>&1); code=$?
check "a GPU this process does not see is exit 2" '[[ $code -eq 2 && "$out" == *"gpu:7 does not exist"* ]]'
out=$(OMPI_COMM_WORLD_LOCAL_RANK=5 "$train" --config "$config" --set devices=gpu:local 2>&1); code=$?
check "gpu:local is the local rank's GPU" '[[ $code -eq 2 && "$out" == *"gpu:5 does not exist"* ]]'
out=$("$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --params "$tmp/none.params" --out "$tmp/q.csv" 2>&1); code=$?
check "predict with a missing params file is exit 2" '[[ $code -eq 2 && "$out" == *"none.params"* ]]'
# --out is written whole or not at all: an unwritable one is exit 2 naming it, and a predict
# that fails leaves the file it would have replaced as it was.
out=$("$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --params "$tmp/mlp-0002.params" \
  --out "$tmp/nowhere/p.csv" 2>&1); code=$?
check "an unwritable --out is exit 2 naming it" '[[ $code -eq 2 && "$out" == *"--out: cannot write"* ]]'
echo kept > "$tmp/kept.csv"
out=$("$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --params "$tmp/mlp-0002.params" \
  --set data.val_samples=10 --set batch_size=4 --set 'data.shape=[1, 28, 29]' \
  --out "$tmp/kept.csv" 2>&1); code=$?
check "a failed predict leaves --out as it was" '[[ $code -eq 2 && $(cat "$tmp/kept.csv") == kept ]]'
check "parameters of another input shape are named with their file" \
  '[[ "$out" == *"'"'"'$tmp/mlp-0002.params'"'"': the network'"'"'s argument '"'"'fc1_weight'"'"' has shape"* ]]' ||
  echo "$out" | tail -2
# Integer settings out of range are exit 2 naming the key, never a signal or a wrapped value.
for bad in checkpoint.period=0 data.num_samples=0 threads=2147483647 epochs=4294967297 \
           resume_epoch=-1 resume_epoch=2147483648 'data.shape=[0, 28]' data.batches_per_epoch=-3 \
           model.num_classes=4611686018427387904 lr_schedule.step_epochs=0 \
           lr_schedule.step_epochs=-2 lr_schedule.warmup_epochs=nan; do
  out=$("$train" --config "$config" --set "$bad" 2>&1); code=$?
  check "$bad is exit 2 naming its key" '[[ $code -eq 2 && "$out" == *"key '"'"'"*"${bad%%=*}"* ]]'
done
# GPT sizes whose products would overflow (d_model 2^62 gave a negative num_hidden) or whose
# graph takes minutes to build.
for bad in model.d_model=4611686018427387904 model.n_layer=100000000 model.vocab=0; do
  out=$("$train" --config "$(dirname "$config")/text_gpt.yaml" --set "$bad" 2>&1); code=$?
  check "gpt $bad is exit 2 naming its key" \
    '[[ $code -eq 2 && "$out" == "cohort-train: config: key '"'"'${bad%%=*}'"'"'"* ]]'
done
# Fewer samples than one batch, dropped by last_batch_handle: nothing would train (it ran epochs
# of no step, reporting accuracy nan and exit 0).
out=$("$train" --config "$config" --set data.num_samples=100 \
  --set data.last_batch_handle=discard 2>&1); code=$?
check "no batch in an epoch is exit 2" \
  '[[ $code -eq 2 && "$out" == *"the training data gave no batch of 128"* ]]' ||
  echo "$out" | tail -2
out=$(COHORT_NUM_THREADS=2147483647 "$train" --config "$config" 2>&1); code=$?
check "COHORT_NUM_THREADS=2147483647 is exit 2 naming it" \
  '[[ $code -eq 2 && "$out" == *"COHORT_NUM_THREADS='"'"'2147483647'"'"': expected an integer in [1, 1024]"* ]]'
# Any network over any iterator: an identity network (no parameters, no label input) writes what
# a CSV iterator serves, row for row.
printf '1,2,3,4\n5,6,7,8\n9,10,11,12.5\n' > "$tmp/x.csv"
printf '0\n1\n0\n' > "$tmp/y.csv"
cat > "$tmp/identity.json" <<'JSON'
{"nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "Flatten", "name": "flat", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]]}
JSON
"$predict" --config "$config" --symbol "$tmp/identity.json" --set data.kind=csv \
  --set data.train_data_csv="$tmp/x.csv" --set data.train_label_csv="$tmp/y.csv" \
  --set data.val_data_csv="$tmp/x.csv" --set data.val_label_csv="$tmp/y.csv" \
  --set 'data.data_shape=[4]' --set batch_size=2 --set devices=cpu:0 --out "$tmp/id.csv" > /dev/null 2>&1
check "an identity network writes the iterator's rows, with each row's index, source and label" \
  '[[ $? -eq 0 && "$(cut -d, -f1,3- "$tmp/id.csv")" == "index,label,predicted,p0,p1,p2,p3"$'"'"'\n'"'"'"0,0,3,1,2,3,4"$'"'"'\n'"'"'"1,1,3,5,6,7,8"$'"'"'\n'"'"'"2,0,3,9,10,11,12.5" && "$(sed -n 2p "$tmp/id.csv" | cut -d, -f2)" == "line 1 of '"'"'$tmp/y.csv'"'"'" ]]'
# An output of more than two axes: one predicted class per position, the classes on the last
# axis (a softmax at each step of a sequence), or on axis 1 under SoftmaxOutput's multi_output.
csv_data=(--set data.kind=csv --set data.train_data_csv="$tmp/x.csv" --set data.train_label_csv="$tmp/y.csv"
          --set data.val_data_csv="$tmp/x.csv" --set data.val_label_csv="$tmp/y.csv"
          --set 'data.data_shape=[4]' --set batch_size=2 --set devices=cpu:0)
printf '9,1,2,3\n0,1,5,4\n1,0,0,7\n' > "$tmp/x.csv"
cat > "$tmp/positions.json" <<'JSON'
{"nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "Reshape", "name": "r", "attrs": {"shape": "(0, 2, 2)"}, "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]]}
JSON
"$predict" --config "$config" --symbol "$tmp/positions.json" "${csv_data[@]}" --out "$tmp/pos.csv" > /dev/null 2>&1; code=$?
classes=$(tail -n +2 "$tmp/pos.csv" | cut -d, -f4 | paste -sd,)
check "an output of (N, positions, classes) gives a class per position" \
  '[[ $code -eq 0 && "$classes" == "0 1,1 0,0 1" ]]'
printf '0,1\n1,0\n0,0\n' > "$tmp/y2.csv"
cat > "$tmp/multi.json" <<'JSON'
{"nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "Reshape", "name": "r", "attrs": {"shape": "(0, 2, 2)"}, "inputs": [[0, 0, 0]]}, {"op": "null", "name": "softmax_label", "inputs": []}, {"op": "SoftmaxOutput", "name": "softmax", "attrs": {"multi_output": "True"}, "inputs": [[1, 0, 0], [2, 0, 0]]}], "arg_nodes": [0, 2], "node_row_ptr": [0, 1, 2, 3, 4], "heads": [[3, 0, 0]]}
JSON
"$predict" --config "$config" --symbol "$tmp/multi.json" "${csv_data[@]}" \
  --set data.val_label_csv="$tmp/y2.csv" --set data.train_label_csv="$tmp/y2.csv" \
  --set 'data.label_shape=[2]' --out "$tmp/multi.csv" > /dev/null 2>&1; code=$?
classes=$(tail -n +2 "$tmp/multi.csv" | cut -d, -f3-4 | paste -sd,)
check "under multi_output the classes are axis 1: (N, classes, positions); a label a position" \
  '[[ $code -eq 0 && "$classes" == "0 1,0 1,1 0,1 1,0 0,0 1" ]]'
# --timeline (Note [Timeline]): a Chrome trace with the main thread, each device's track and one
# span of each phase per step (2 epochs of 32 steps; "data" fetches and stages the next batch, so
# each epoch has one more, its first; validation adds 8 forwards a device an epoch).
"$train" --config "$config" --set epochs=2 --set log_level=warn --timeline "$tmp/trace.json" \
  > /dev/null 2>&1
check "--timeline writes a trace" '[[ $? -eq 0 && $(head -c 40 "$tmp/trace.json") == "{\"displayTimeUnit\":\"ms\",\"traceEvents\":["* ]]'
check "naming the main thread and both devices" \
  'grep -q "\"args\":{\"name\":\"main\"}" "$tmp/trace.json" && grep -q "\"name\":\"device 0\"" "$tmp/trace.json" && grep -q "\"name\":\"device 1\"" "$tmp/trace.json"'
check "naming the process by rank and host, devices ordered by index" \
  'grep -q "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"rank 0 on $(hostname)\"}}" "$tmp/trace.json" && [[ $(grep -c "\"sort_index\":100[01]}" "$tmp/trace.json") -eq 2 ]]'
for span in step:64 load:64 data:66 forward:224 backward:192 allreduce:64 update:64 metric:64; do
  n=$(grep -c "{\"name\":\"${span%%:*}\",\"ph\":\"X\"" "$tmp/trace.json")
  check "${span%%:*} spans: $n (expected ${span##*:})" '[[ $n -eq ${span##*:} ]]'
done
# Labels the data got wrong are exit 2 naming the label and the row that holds it: before, an
# out-of-range validation label counted as a miss and a fractional one was truncated. Data held
# in memory is checked before training (Note [Labels checked up front]): no epoch runs first.
csv=(--set log_level=info --set data.kind=csv --set data.train_data_csv="$tmp/x.csv" --set data.train_label_csv="$tmp/y.csv"
     --set data.val_data_csv="$tmp/x.csv" --set 'data.data_shape=[4]' --set batch_size=3
     --set devices=cpu:0 --set epochs=1)
printf '0\n12\n0\n' > "$tmp/y12.csv"
printf '0\n1.5\n0\n' > "$tmp/yhalf.csv"
out=$("$train" --config "$config" "${csv[@]}" --set data.val_label_csv="$tmp/y12.csv" 2>&1); code=$?
check "a validation label outside the classes is exit 2 before training" \
  '[[ $code -eq 2 && "$out" == *"label 12 is outside the 10 classes of the predictions: line 2 of '"'"'$tmp/y12.csv'"'"'" && "$out" != *"Time cost"* ]]' ||
  echo "$out"
# data.buckets is read by text alone: on CSV data it is ignored, and does not make label -1 one
# that the metrics skip (before, such a validation label was left out silently).
printf '0\n-1\n0\n' > "$tmp/ym1.csv"
out=$("$train" --config "$config" "${csv[@]}" --set 'data.buckets=[16]' \
  --set data.val_label_csv="$tmp/ym1.csv" 2>&1); code=$?
check "data.buckets on CSV data leaves label -1 refused (exit $code)" \
  '[[ $code -eq 2 && "$out" == *"label -1 is outside the 10 classes"* ]]' || echo "$out" | tail -3
out=$("$train" --config "$config" "${csv[@]}" --set data.val_label_csv="$tmp/yhalf.csv" 2>&1); code=$?
check "a fractional validation label is exit 2 before training" \
  '[[ $code -eq 2 && "$out" == *"label 1.500000 is not a class number"*": line 2 of '"'"'$tmp/yhalf.csv'"'"'" && "$out" != *"Time cost"* ]]' ||
  echo "$out"
out=$("$train" --config "$config" "${csv[@]}" --set data.train_label_csv="$tmp/yhalf.csv" \
  --set data.val_label_csv="$tmp/y.csv" 2>&1); code=$?
check "a fractional training label is exit 2 before training" \
  '[[ $code -eq 2 && "$out" == *"label 1.500000 is not a class number"*": line 2 of '"'"'$tmp/yhalf.csv'"'"'" && "$out" != *"Train-"* ]]' ||
  echo "$out"
# Inputs too large for the machine: a line saying what for and how many bytes, exit 2 (before:
# a bare std::bad_alloc, or the kernel's OOM killer once the pages were touched).
out=$("$train" --config "$config" --set 'data.shape=[3,20000,20000]' 2>&1); code=$?
check "synthetic data too large is exit 2 naming its bytes" \
  '[[ $code -eq 2 && "$out" == *"4096 synthetic samples of shape (3,20000,20000) need 19660800000000 bytes"* ]]' ||
  echo "$out"
out=$("$train" --config "$config" --set model.name=resnet20 --set 'data.shape=[3,500,500]' \
  --set data.num_samples=1 --set data.val_samples=0 --set batch_size=256 --set devices=cpu:0 2>&1); code=$?
check "a network whose memory plan exceeds the host is exit 2 naming the inputs and bytes" \
  '[[ $code -eq 2 && "$out" == *"binding the network on cpu:0 with inputs data(256,3,500,500)"*"the memory plan needs 150272026008 bytes"* ]]' ||
  echo "$out"
out=$("$predict" --config "$config" --symbol "$tmp/mlp-symbol.json" --out "$tmp/q.csv" 2>&1); code=$?
check "predict without the parameters the network needs is exit 2 naming them" \
  '[[ $code -eq 2 && "$out" == *"no --params given: the network needs fc1_weight, fc1_bias"* ]]'
exit $fail
