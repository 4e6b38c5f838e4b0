// Broadcasting binary ops (broadcast_add/sub/mul/div/maximum/minimum/power and the comparisons
// broadcast_equal/not_equal/greater/greater_equal/lesser/lesser_equal) and `where`: the kinds,
// the index layout that maps an output element to each input's element, and the values and
// gradients, shared by the CPU kernels (broadcast.cc) and the CUDA kernels (broadcast.cu).
// Forward computes in every numeric dtype (half types in float); gradients are float32.
#pragma once

#include <cmath>
#include <cstdint>

#include "operator/common/exact_math.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

enum class BroadcastKind {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kPower,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLesser,
  kLesserEqual
};

// Any numeric T, as numpy (operator/common/exact_math.h); comparisons give 1 or 0 in T.
template <typename T>
COHORT_HOST_DEVICE T BroadcastValue(BroadcastKind kind, T a, T b) {
  switch (kind) {
    case BroadcastKind::kAdd: return WrapAdd(a, b);
    case BroadcastKind::kSub: return WrapSub(a, b);
    case BroadcastKind::kMul: return WrapMul(a, b);
    case BroadcastKind::kDiv: return Divide(a, b);
    // A NaN on either side is the result, as in MXNet (a NaN must not vanish inside a network).
    case BroadcastKind::kMaximum: return a > b || a != a ? a : b;
    case BroadcastKind::kMinimum: return a < b || a != a ? a : b;
    case BroadcastKind::kPower: return Power(a, b);
    case BroadcastKind::kEqual: return a == b ? T(1) : T(0);
    case BroadcastKind::kNotEqual: return a != b ? T(1) : T(0);
    case BroadcastKind::kGreater: return a > b ? T(1) : T(0);
    case BroadcastKind::kGreaterEqual: return a >= b ? T(1) : T(0);
    case BroadcastKind::kLesser: return a < b ? T(1) : T(0);
    case BroadcastKind::kLesserEqual: return a <= b ? T(1) : T(0);
  }
  return T(0);
}

// ∂y/∂a (side 0) or ∂y/∂b (side 1) at (a, b); MXNet's choices where it is not defined:
// maximum sends the gradient to a where a >= b, minimum where a <= b; comparisons have none.
COHORT_HOST_DEVICE float BroadcastPartial(BroadcastKind kind, int side, float a, float b) {
  switch (kind) {
    case BroadcastKind::kAdd: return 1.0f;
    case BroadcastKind::kSub: return side == 0 ? 1.0f : -1.0f;
    case BroadcastKind::kMul: return side == 0 ? b : a;
    case BroadcastKind::kDiv: return side == 0 ? 1.0f / b : -a / (b * b);
    case BroadcastKind::kMaximum: return (side == 0) == (a >= b) ? 1.0f : 0.0f;
    case BroadcastKind::kMinimum: return (side == 0) == (a <= b) ? 1.0f : 0.0f;
    case BroadcastKind::kPower: return side == 0 ? b * powf(a, b - 1.0f) : powf(a, b) * logf(a);
    default: return 0.0f;
  }
}
inline bool BroadcastHasGradient(BroadcastKind kind) { return kind <= BroadcastKind::kPower; }
// add and sub differentiate without reading the inputs.
inline bool BroadcastGradReadsInputs(BroadcastKind kind) {
  return kind != BroadcastKind::kAdd && kind != BroadcastKind::kSub;
}

// Note [Broadcast layout]
// The output's dimensions, with each input's element stride per output dimension (0 where that
// input has extent 1 and is broadcast). Adjacent dimensions that broadcast alike are merged, so
// the common cases collapse to one or two dimensions: (B,H,T,T) + (1,1,T,T) is (B·H, T·T).
// Backward gathers: the gradient of input element j sums the head gradients of every output
// element that read j, in output order, on both sides; so CPU and GPU sum in the same order and
// no atomics are needed.
struct BroadcastLayout {
  static constexpr int kMaxDims = 8;
  int ndim = 0;
  int64_t out_dim[kMaxDims] = {};
  int64_t out_stride[kMaxDims] = {};  // the output's own (row-major) strides
  int64_t stride[2][kMaxDims] = {};   // per input; 0 where it is broadcast
  int64_t in_size[2] = {1, 1};

  // Requires out = the broadcast of a and b (same ndim after padding on the left with 1s).
  static BroadcastLayout Make(const Shape& a, const Shape& b, const Shape& out);
  int64_t out_size() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= out_dim[d];
    return n;
  }
};

// The element of input `side` that output element i reads.
COHORT_HOST_DEVICE int64_t BroadcastSource(const BroadcastLayout& l, int side, int64_t i) {
  int64_t offset = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    offset += (i % l.out_dim[d]) * l.stride[side][d];
    i /= l.out_dim[d];
  }
  return offset;
}

// term(i) combined with `op` over the output elements i that read element j of input `side`
// (Note [Broadcast layout]), in increasing i, starting from `init` (in init's type).
COHORT_EXEC_CHECK_DISABLE
template <typename Term, typename Op, typename Acc>
COHORT_HOST_DEVICE Acc BroadcastReduce(const BroadcastLayout& l, int side, int64_t j,
                                       const Term& term, Op op, Acc init) {
  // The output offset of j's own coordinates, and the extents of the broadcast dimensions.
  int64_t base = 0, spread = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    if (l.stride[side][d] == 0) {
      spread *= l.out_dim[d];
    } else {
      const int64_t extent = l.out_dim[d];
      base += (j % extent) * l.out_stride[d];
      j /= extent;
    }
  }
  Acc acc = init;
  for (int64_t k = 0; k < spread; ++k) {
    int64_t offset = base, rest = k;
    for (int d = l.ndim - 1; d >= 0; --d) {
      if (l.stride[side][d] != 0) continue;
      offset += (rest % l.out_dim[d]) * l.out_stride[d];
      rest /= l.out_dim[d];
    }
    acc = op(acc, term(offset));
  }
  return acc;
}

// Σ term(i) over the output elements i that read element j of input `side`.
COHORT_EXEC_CHECK_DISABLE
template <typename Term>
COHORT_HOST_DEVICE float BroadcastGather(const BroadcastLayout& l, int side, int64_t j,
                                         const Term& term) {
  return BroadcastReduce(l, side, j, term, SumOp{}, 0.0f);
}

// The head-gradient term of output element i for input `side`.
struct BroadcastGradTerm {
  const BroadcastLayout* l;
  BroadcastKind kind;
  int side;
  const float *dy, *a, *b;  // a and b may be null when the kind does not read them
  COHORT_HOST_DEVICE float operator()(int64_t i) const {
    if (a == nullptr) return dy[i] * BroadcastPartial(kind, side, 0.0f, 0.0f);
    return dy[i] *
           BroadcastPartial(kind, side, a[BroadcastSource(*l, 0, i)], b[BroadcastSource(*l, 1, i)]);
  }
};

// where(condition, x, y): x where the condition is nonzero, y elsewhere. The condition has x's
// shape, or is a vector over x's first dimension (`row` = x.size / condition.size elements each).
COHORT_HOST_DEVICE float WhereValue(const float* cond, const float* x, const float* y, int64_t i,
                                    int64_t row) {
  return cond[i / row] != 0.0f ? x[i] : y[i];
}
// The gradient of x (side 0) or y (side 1) at element i.
COHORT_HOST_DEVICE float WhereGrad(const float* cond, int side, float g, int64_t i, int64_t row) {
  return (cond[i / row] != 0.0f) == (side == 0) ? g : 0.0f;
}

}  // namespace cohort::op
