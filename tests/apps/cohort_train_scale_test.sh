#!/usr/bin/env bash
# The same answer at any scale (Note [Sharding], Note [Random streams]): 1 process x 4 devices,
# 2 processes x 2 devices and 4 processes x 1 device train to the same parameters from one
# configuration, through the CLI: the MLP, ResNet-20 (BatchNorm: running statistics averaged
# over every worker) and a small GPT with dropout (masks keyed by global batch position). Only
# the summation order of the gradients over 4 devices differs ((a+b)+(c+d) against ((a+b)+c)+d):
# within 1e-5 after a few steps, 1e-4 after the MLP's epoch of 32 steps.
#   cohort_train_scale_test.sh TRAIN PARAMS MPIEXEC SOURCE_DIR
set -u
train=$1 params=$2 mpiexec=$3 src=$4
source "$(dirname "$0")/lib.sh"
mpi_command "$mpiexec"

# equals_1x4 NAME LAYOUT TOL: NAME's LAYOUT checkpoint is its 1x4 one within TOL.
equals_1x4() {
  local name=$1 layout=$2 tol=$3
  check "$name: $layout equals 1x4 within $tol" \
    '"$params" diff "$tmp/$name-1x4-0001.params" "$tmp/$name-$layout-0001.params" --tol $tol > "$tmp/diff" 2>&1' ||
    sort -t$'\t' -k2 -g "$tmp/diff" | tail -3
}

# run NAME TOL CONFIG SETTINGS...: trains 1x4, 2x2 and 4x1 and compares their checkpoints.
run() {
  local name=$1 tol=$2 config=$3
  shift 3
  local common=(--config "$config" --set log_level=warn --set epochs=1 --set checkpoint.period=1 "$@")
  timeout 120 "$train" "${common[@]}" --set devices=cpu:0,cpu:1,cpu:2,cpu:3 --set kvstore=local \
    --set checkpoint.prefix="$tmp/$name-1x4" > "$tmp/$name-1x4.log" 2>&1 ||
    { echo "FAIL: $name 1x4 did not train"; tail -3 "$tmp/$name-1x4.log"; fail=1; return; }
  for layout in 2x2 4x1; do
    local ranks=${layout%x*} devices=cpu:0,cpu:1
    [[ $layout == 4x1 ]] && devices=cpu:0
    timeout 120 "${mpi[@]}" -np "$ranks" "$train" "${common[@]}" --set devices=$devices \
      --set kvstore=mpi --set checkpoint.prefix="$tmp/$name-$layout" > "$tmp/$name-$layout.log" 2>&1 ||
      { echo "FAIL: $name $layout did not train"; tail -3 "$tmp/$name-$layout.log"; fail=1; continue; }
    equals_1x4 "$name" "$layout" "$tol"
  done
}

run mlp-steps 1e-5 "$src/configs/synthetic_mlp.yaml" --set data.num_samples=512
run mlp-epoch 1e-4 "$src/configs/synthetic_mlp.yaml"
# Gradient accumulation (Note [Gradient accumulation]): the windows are the same global batches
# at every scale.
run mlp-accumulate 1e-5 "$src/configs/synthetic_mlp.yaml" --set data.num_samples=512 \
  --set accumulate=2
# Gradients crossing between processes as bfloat16 (Note [Gradient compression]; one process
# has no wire): within bfloat16's rounding of the gradients over 8 steps.
run mlp-bf16-wire 3e-3 "$src/configs/synthetic_mlp.yaml" --set data.num_samples=1024 \
  --set gradient_compression=bfloat16
# ResNet-20 at lr 0.1 amplifies rounding fast (BatchNorm over 8 samples a device), by how much
# depends on the CPU's convolution kernels: after one step the layouts differ by 1.2e-7 on both
# machines measured; after two by 2e-6 on an AMD EPYC and 3.6e-5 (2x2) on an Intel Xeon with
# AVX-512; after four by 3e-3. So one step: two devices or workers sum alike, bit for bit.
run resnet20 1e-5 "$src/configs/synthetic_resnet20.yaml" --set data.num_samples=32 \
  --set data.val_samples=0 --set batch_size=32
# SGD, not the config's Adam: the attention's key bias has a true gradient of 0 (softmax is blind
# to a shift of every score) and Adam scales what rounding leaves there to steps of about its
# lr, whatever the topology's summation order made of it (1e-5 apart after 4 steps at 3e-3,
# where every other parameter agrees within 2e-7).
gpt_small=(--set model.n_layer=1 --set model.d_model=32 --set model.n_head=2 --set model.seq_len=32
           --set model.dropout=0.2 --set batch_size=16 --set data.val_batches=1
           --set 'optimizer={name: sgd, lr: 0.5, momentum: 0.9}')
run gpt-dropout 1e-5 "$src/configs/text_gpt.yaml" "${gpt_small[@]}" --set data.batches_per_epoch=4
# Mixed precision (Note [AMP pass]): four devices compute the same bfloat16 layers on the same
# samples at every layout, so they agree as float32 does (one step of the GPT: later steps round
# the weights' bfloat16 copies apart, 2.6e-3 after 8). One device holding all four devices'
# samples rounds its weight gradients to bfloat16 once where four devices round four partial
# sums (as PyTorch's autocast and MXNet's AMP do): within that rounding, 1.5e-4 (MLP) and 6e-4
# (GPT) after one step, where a device computing on the wrong samples is 1e-2 and more apart.
run mlp-bf16 1e-5 "$src/configs/synthetic_mlp.yaml" --set data.num_samples=512 \
  --set precision=bfloat16
run gpt-bf16 1e-5 "$src/configs/text_gpt.yaml" "${gpt_small[@]}" --set data.batches_per_epoch=1 \
  --set precision=bfloat16
# run_one_device NAME TOL CONFIG SETTINGS...: trains on cpu:0 alone, compares with NAME's 1x4.
run_one_device() {
  local name=$1 tol=$2 config=$3
  shift 3
  timeout 120 "$train" --config "$config" --set log_level=warn --set epochs=1 \
    --set checkpoint.period=1 "$@" --set devices=cpu:0 --set kvstore=local \
    --set checkpoint.prefix="$tmp/$name-1x1" > "$tmp/$name-1x1.log" 2>&1 ||
    { echo "FAIL: $name 1x1 did not train"; tail -3 "$tmp/$name-1x1.log"; fail=1; return; }
  equals_1x4 "$name" 1x1 "$tol"
}
run mlp-bf16-step 1e-5 "$src/configs/synthetic_mlp.yaml" --set data.num_samples=128 \
  --set precision=bfloat16
run_one_device mlp-bf16-step 1e-3 "$src/configs/synthetic_mlp.yaml" --set data.num_samples=128 \
  --set precision=bfloat16
run_one_device gpt-bf16 3e-3 "$src/configs/text_gpt.yaml" "${gpt_small[@]}" \
  --set data.batches_per_epoch=1 --set precision=bfloat16
# --metrics-every's lines sum every worker's metric (a collective at those steps): 2 processes
# report what one process reports over the same global batches.
common=(--config "$src/configs/synthetic_mlp.yaml" --set log_level=warn --set epochs=1
        --set data.num_samples=512 --metrics-every 1)
timeout 120 "$train" "${common[@]}" --set devices=cpu:0,cpu:1 --set kvstore=local \
  --metrics-out "$tmp/steps-1.jsonl" > /dev/null 2>&1
timeout 120 "${mpi[@]}" -np 2 "$train" "${common[@]}" --set devices=cpu:0 --set kvstore=mpi \
  --metrics-out "$tmp/steps-2.jsonl" > /dev/null 2>&1
check "step lines under mpirun hold every worker's metric (as one process's)" \
  '[[ -s "$tmp/steps-2.jsonl" && $(grep -c "\"batch\"" "$tmp/steps-2.jsonl") -eq 4 ]] && diff <(grep -o "\"batch\":[0-9]*.*accuracy\":[0-9.]*" "$tmp/steps-1.jsonl") <(grep -o "\"batch\":[0-9]*.*accuracy\":[0-9.]*" "$tmp/steps-2.jsonl")' ||
  head -3 "$tmp/steps-1.jsonl" "$tmp/steps-2.jsonl"
exit $fail
