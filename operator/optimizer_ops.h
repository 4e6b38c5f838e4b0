// MXNet's optimizer update operators (sgd_update, sgd_mom_update, nag_mom_update,
// signsgd_update, signum_update, adam_update, rmsprop_update, rmspropalex_update, ftrl_update,
// ftml_update, lamb_update_phase1, lamb_update_phase2): the element-by-element rules of
// MXNet 1.9.1's kernels, shared by the CPU kernel (optimizer_ops.cc) and the CUDA kernel
// (optimizer_ops.cu).
//
// Note [Update operators]
// An update op reads (weight, grad) and writes the new weight to its output; its optimizer
// states (mom, mean, var, n, ...) are inputs that it updates in place, which MXNet marks as
// mutated inputs and Cohort makes auxiliary states, the slots that ops write in place
// (BatchNorm's moving statistics): nd.sgd_mom_update(w, g, mom, out=w) passes them after the
// arguments as MXNet's signature lists them. The rules are MXNet's to the order of operations, in
// the weight's type, so that states and weights match MXNet's (tests/python/test_update_ops.py
// against MXNet 1.9.1's values):
//   - a gradient is clipped where clip_gradient >= 0 (0 clips to zero, as MXNet's kernels do);
//   - sgd, sgd_mom, nag_mom and signum add the weight decay after clipping; adam, rmsprop,
//     rmspropalex and ftml before it; ftrl decays in its denominator; signsgd takes the sign of
//     the raw gradient (its rescale and clip have no effect, as in MXNet);
//   - adam has no bias correction here (MXNet's Python optimizer folds it into lr);
//   - optimizers call them in place (out=weight), and MXNet's nag_mom kernel then reads the
//     new weight for its momentum's decay term: Cohort's reads the output whatever `out` is, so
//     that MXNet's NAG optimizer (and Cohort's trainer, update_rule.h) are matched; a call with
//     another `out` differs from MXNet's by lr · wd · (w' − w) in the momentum.
// No gradient: the ops are steps of training, not part of a model (Operator::HasGradient).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "base/host_device.h"
#include "operator/common/operator.h"
#include "optimizer/update_rule.h"

namespace cohort::op {

// MXNet's parameters of the update operators: the shared rule's fields (optimizer/
// update_rule.h, which cohort-train's optimizers run too) parsed from the op's attributes.
struct UpdateOpParam : UpdateParams {
  // `op` is the registered name (sgd_update, ...), for errors.
  static UpdateOpParam Parse(UpdateKind kind, const std::string& op, const Attrs& attrs);
  // The states the kind updates in place, in MXNet's input order (Note [Update operators]).
  std::vector<std::string> StateNames() const;
};

struct LambParam : LambRule {
  static LambParam Parse(int phase, const Attrs& attrs);
};

// optimizer_ops.cu (Note [GPU kernels]): UpdateElementOf over every element, states in place.
void UpdateGpu(const OpContext& ctx, const UpdateOpParam& p, const NDArray& weight,
               const NDArray& grad, const std::vector<NDArray>& states, const NDArray& out);
// The LAMB phases' elements: phase 1 with in = (weight, grad) and states (mean, var), phase 2
// with in = (weight, g, r1, r2).
void LambGpu(const OpContext& ctx, int phase, const LambParam& p, const std::vector<NDArray>& in,
             const std::vector<NDArray>& states, const NDArray& out);

}  // namespace cohort::op
