// Mixed precision as a graph pass (MXNet's amp.convert_symbol; Note [AMP pass]).
#pragma once

#include <set>
#include <string>

#include "base/dtype.h"
#include "symbol/symbol.h"

namespace cohort {

struct AmpOptions {
  DType target = DType::kBFloat16;  // bfloat16 or float16
  // Ops that run in the target type; empty: those Cohort has low-precision kernels for
  // (DefaultAmpTargetOps: FullyConnected, Convolution, batch_dot, dot).
  std::set<std::string> target_ops = {};
  // Ops kept in float32 whatever their kernels take; empty: DefaultAmpFloat32Ops.
  std::set<std::string> float32_ops = {};
  // Nodes left in float32 by name (MXNet's excluded_sym_names).
  std::set<std::string> excluded_names = {};
};

std::set<std::string> DefaultAmpTargetOps();
std::set<std::string> DefaultAmpFloat32Ops();
// Ops whose data, output and gradients may be low precision while their parameters and
// statistics stay float32 (BatchNorm: Note [BatchNorm in low precision]).
std::set<std::string> DataTypedAmpOps();

// Note [AMP pass]
// The symbol with amp_cast nodes inserted so that the target ops compute in the target type and
// everything else as before: each float input of a target op is cast to the target type (a
// float32 parameter becomes its low-precision copy once a step; its gradient flows back through
// the cast in float32, so the optimizer keeps float32 master weights and states, MXNet's
// multi_precision); an op that reads a low-precision entry keeps it when its kernels take the
// type, all its inputs are low-precision and it is not on the float32 list (Reshape, transpose,
// slices, an activation), or, for a data-typed op (BatchNorm, as MXNet's AMP lists run it in
// either type), its data is low-precision: then its float32 parameters stay as they are and its
// first output alone is low-precision. Otherwise the op gets the entry cast back to float32
// (softmax, the losses, LayerNorm, exp, sums, an add of a float32 bias). A cast feeding several
// readers is made once, named as MXNet names it: "<input>_amp_cast_<dtype>" for a variable,
// "<node>_output_amp_cast_<dtype>" for an op's output. The symbol's outputs stay float32 (cast back
// where a target op made them).
Symbol ConvertToMixedPrecision(const Symbol& symbol, const AmpOptions& options);

// The symbol without its amp_cast and amp_multicast nodes (each reader reads what the cast read),
// as MXNet's tojson and save write a converted graph by default (remove_amp_cast=True).
Symbol RemoveAmpCasts(const Symbol& symbol);

}  // namespace cohort
