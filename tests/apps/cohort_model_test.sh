#!/usr/bin/env bash
# cohort-model summary on MXNet-exported symbols: rows, totals and exit codes; cohort-model ops.
set -u
bin=$1 data=$2
source "$(dirname "$0")/lib.sh"
expect 0 '^Total parameters: 431080$' "$bin" summary "$data/lenet-symbol.json" --shape data=1,1,28,28
expect 0 '^conv2 +Convolution +\(1,50,8,8\) +25050$' "$bin" summary "$data/lenet-symbol.json" --shape data=1,1,28,28
expect 0 '^Auxiliary states: 96$' "$bin" summary "$data/resblock-symbol.json" --shape data=2,3,32,32
expect 0 '^Total parameters: 109386$' "$bin" summary mlp --shape data=1,1,28,28
# The GPT's head reads the token embedding (tie_weights): counted once, 875264 - 256 x 128.
expect 0 '^Total parameters: 842496$' "$bin" summary gpt --shape data=1,128
expect 0 '^lm_head .* 0  \(shares tok_embed_weight\)$' "$bin" summary gpt --shape data=1,128
expect 2 "kernel \(5,5\) does not fit input \(1,1,4,4\)" "$bin" summary "$data/lenet-symbol.json" --shape data=1,1,4,4
expect 2 "cannot open symbol file 'missing.json'" "$bin" summary missing.json --shape data=1
expect 2 "expected NAME=DIMS" "$bin" summary mlp --shape 1,2
expect 2 "'bogus' is not an input" "$bin" summary mlp --shape bogus=1,2
# Without the input shapes the parameters cannot be counted: exit 2, not a total of 0.
expect 2 "the shape of 'conv1_weight' is unknown.*inputs without one: data" "$bin" summary lenet
# A batch of 0 is an unknown dimension (MXNet 1.x): conv1's weight follows from the known channel
# count, conv2's does not.
expect 2 "the shape of 'conv2_weight' is unknown" "$bin" summary lenet --shape data=0,1,28,28
# `ops`: the registry's declarations, one line an operator, or one in full.
expect 0 "^FullyConnected\(data, weight, bias; num_hidden: int, required, no_bias: boolean = 0, flatten: boolean = 1\)$" "$bin" ops
expect 0 "^Reshape\(data; shape: .*  aliases: reshape$" "$bin" ops
expect 0 "^  pool_type: \{'avg', 'max', 'sum'\} = max$" "$bin" ops Pooling
expect 0 "^Aliases: flatten$" "$bin" ops flatten
expect 2 "unknown operator 'Poolnig'" "$bin" ops Poolnig
# `list`: the zoo with the model keys each reads; summary takes them (--set, as cohort-train's
# model section); a misspelt key names the near one, a value out of range its bounds.
expect 0 "^  d_model      int    128      gpt: width$" "$bin" list
expect 0 "^mobilenet: MobileNet v1$" "$bin" list
expect 0 "^fc3 +FullyConnected +\(1,3\) +195$" "$bin" summary mlp --shape data=1,784 --set num_classes=3
expect 0 "^Total parameters: 224640$" "$bin" summary gpt --set d_model=64 --set n_head=2 \
  --shape data=1,128 --shape softmax_label=1,128
expect 2 "unknown key 'model.num_clases' \(did you mean 'model.num_classes'\?\)" \
  "$bin" summary mlp --set num_clases=3 --shape data=1,784
expect 2 "model.num_classes'?: 0 is outside" "$bin" summary mlp --set num_classes=0 --shape data=1,784
exit $fail
