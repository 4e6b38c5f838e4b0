// One input replicated to a larger shape: broadcast_to, broadcast_axis (broadcast_axes),
// broadcast_like, tile and repeat. Each is a broadcast of the input, viewed with extra axes of
// extent 1, to the output viewed alike (tile (a, b) by (r, s): (1, a, 1, b) to (r, a, s, b);
// repeat along axis k: an axis of 1 after k), so broadcast.h's layout maps between them (Note
// [Broadcast layout]) and backward sums each input element's copies in output order. The
// per-element functions are shared by the CPU kernel (replicate.cc) and the CUDA kernel
// (replicate.cu).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/broadcast.h"

namespace cohort::op {

enum class ReplicateKind { kBroadcastTo, kBroadcastAxis, kBroadcastLike, kTile, kRepeat };

struct ReplicateParam {
  ReplicateKind kind = ReplicateKind::kBroadcastTo;
  Shape shape;                                // broadcast_to (0: the input's extent)
  std::vector<int> axes, lhs_axes, rhs_axes;  // broadcast_axis; broadcast_like (empty: all)
  std::vector<int64_t> sizes, reps;           // broadcast_axis; tile
  int64_t repeats = 1;                        // repeat
  std::optional<int> axis;                    // repeat (none: the flattened input)

  static ReplicateParam Parse(const std::string& op, const Attrs& attrs);
  // The output's shape from the input's (and broadcast_like's rhs); throws naming the op when
  // they do not fit.
  Shape OutShape(const Shape& in, const Shape& rhs) const;
  // The input and output viewed with equal ndim, the input's extents 1 or the output's.
  std::pair<Shape, Shape> Views(const Shape& in, const Shape& out) const;
};

// Output element i: the input element it copies (l = BroadcastLayout::Make(in, in, out) of the
// views).
COHORT_HOST_DEVICE float ReplicateValue(const BroadcastLayout& l, const float* x, int64_t i) {
  return x[BroadcastSource(l, 0, i)];
}

// The head gradient of output element i.
struct ReplicateHeadTerm {
  const float* dy;
  COHORT_HOST_DEVICE float operator()(int64_t i) const { return dy[i]; }
};

// The gradient of input element j: the head gradients of its copies, summed in output order.
COHORT_HOST_DEVICE float ReplicateGrad(const BroadcastLayout& l, const float* dy, int64_t j) {
  return BroadcastGather(l, 0, j, ReplicateHeadTerm{dy});
}

// replicate.cu (Note [GPU kernels]).
void ReplicateForwardGpu(const OpContext& ctx, const BroadcastLayout& l, const NDArray& in,
                         const NDArray& out);
// rhs_grad (broadcast_like's, else null) is set to zero.
void ReplicateBackwardGpu(const OpContext& ctx, const BroadcastLayout& l, GradReq req,
                          const NDArray& out_grad, const NDArray& in_grad, const NDArray* rhs_grad);

}  // namespace cohort::op
