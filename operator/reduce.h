// sum, mean and max over axes: the parameters, and each output element's reduction and each
// input element's gradient, shared by the CPU kernel (reduce.cc) and the CUDA kernel
// (reduce.cu). The reduced shape (the input's with reduced axes 1) broadcasts to the input's,
// so broadcast.h's layout maps between the two (Note [Broadcast layout]): an output element
// reduces the input elements that broadcast from it, in order.
#pragma once

#include <cmath>
#include <string>

#include "operator/broadcast.h"

namespace cohort::op {

enum class ReduceKind { kSum, kMean, kMax };

struct ReduceParam {
  ReduceKind kind = ReduceKind::kSum;
  std::vector<int> axes;  // as given; empty: every axis
  bool keepdims = false;
  bool exclude = false;  // reduce the axes not listed

  static ReduceParam Parse(const std::string& op, const Attrs& attrs);
  // The input's shape with the reduced axes set to 1; throws naming an axis out of range.
  Shape KeptShape(const Shape& in) const;
  // What the op outputs: KeptShape without the reduced axes unless keepdims ((1,) for all).
  Shape OutShape(const Shape& in) const;
};

struct ReduceInput {
  const float* x;
  COHORT_HOST_DEVICE float operator()(int64_t i) const { return x[i]; }
};

// Output element j; the layout is BroadcastLayout::Make(kept, kept, input shape) and `count`
// the number of input elements per output element.
COHORT_HOST_DEVICE float ReduceValue(ReduceKind kind, const BroadcastLayout& l, int64_t j,
                                     const float* x, int64_t count) {
  const ReduceInput term{x};
  switch (kind) {
    case ReduceKind::kSum: return BroadcastGather(l, 0, j, term);
    case ReduceKind::kMean: return BroadcastGather(l, 0, j, term) / static_cast<float>(count);
    // A NaN anywhere among the elements is the maximum, as in MXNet.
    case ReduceKind::kMax: return BroadcastReduce(l, 0, j, term, MaxKeepingNaNOp{}, -INFINITY);
  }
  return 0;
}

// The gradient of input element i: its output's head gradient (divided by count for mean; for
// max only where x equals the maximum, ties all included, as MXNet does).
COHORT_HOST_DEVICE float ReduceGrad(ReduceKind kind, const BroadcastLayout& l, int64_t i,
                                    const float* dy, const float* x, const float* y,
                                    int64_t count) {
  const int64_t j = BroadcastSource(l, 0, i);
  switch (kind) {
    case ReduceKind::kSum: return dy[j];
    case ReduceKind::kMean: return dy[j] / static_cast<float>(count);
    case ReduceKind::kMax: return x[i] == y[j] ? dy[j] : 0.0f;
  }
  return 0;
}

}  // namespace cohort::op
