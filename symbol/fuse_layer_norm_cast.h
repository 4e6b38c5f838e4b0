// LayerNorm and the cast of its output as one op (Note [LayerNorm cast fusion]).
#pragma once

#include "symbol/symbol.h"

namespace cohort {

// Note [LayerNorm cast fusion]
// Mixed precision keeps LayerNorm in float32 (its statistics need it) and casts its output to
// the low-precision type for the FullyConnected layers that read it: in a transformer, every
// block's two LayerNorms write their output in float32 and an amp_cast reads it back and writes
// it again in bfloat16 (and backward widens the bfloat16 gradient into float32 for LayerNorm).
// Binding (Executor, unless COHORT_FUSE_OPS=0) replaces each LayerNorm whose output 0 has one
// reader, an amp_cast to float16 or bfloat16, and is no graph output, with one _layer_norm
// (out_dtype the cast's) named as the LayerNorm: it rounds each normalized value once as it
// stores it and reads the output gradient in that type, so the values are the same bit for bit
// as the two ops' (a widening is exact). Its mean and std outputs are the LayerNorm's.
Symbol FuseLayerNormCast(const Symbol& symbol);

}  // namespace cohort
