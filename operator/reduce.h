// sum, mean, max, min, prod, nansum, nanprod and norm over axes: the parameters, and each output
// element's reduction and each input element's gradient, shared by the CPU kernel (reduce.cc) and
// the CUDA kernel (reduce.cu). The reduced shape (the input's with reduced axes 1) broadcasts to
// the input's, so broadcast.h's layout maps between the two (Note [Broadcast layout]): an output
// element reduces the input elements that broadcast from it, in order.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "base/half.h"
#include "operator/broadcast.h"
#include "operator/common/exact_math.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

// sum, mean and max also run as rows (Note [Reduce as rows]); the others through the layout.
enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kNanSum, kNanProd, kNorm1, kNorm2 };
inline bool ReducesAsRows(ReduceKind kind) { return kind <= ReduceKind::kMax; }

// The input of a reduction as (lead, outer, size, inner) rows (Note [Reduce as rows]).
struct ReduceRowsShape {
  bool rows = false;  // false: the reduction is not rows
  int64_t lead = 1, outer = 1, size = 1, inner = 1;
};

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
  // The input as rows where its axes allow (Note [Reduce as rows]).
  ReduceRowsShape RowsShape(const Shape& in) const;
};

struct ReduceInput {
  const float* x;
  COHORT_HOST_DEVICE float operator()(int64_t i) const { return x[i]; }
};

// The element a kind reduces: NaN as 0 for nansum and 1 for nanprod, |x| for the 1-norm, x² for
// the 2-norm.
struct ReduceTerm {
  ReduceKind kind;
  const float* x;
  COHORT_HOST_DEVICE float operator()(int64_t i) const {
    const float v = x[i];
    switch (kind) {
      case ReduceKind::kNanSum: return v != v ? 0.0f : v;
      case ReduceKind::kNanProd: return v != v ? 1.0f : v;
      case ReduceKind::kNorm1: return fabsf(v);
      case ReduceKind::kNorm2: return v * v;
      default: return v;
    }
  }
};
struct ProdOp {
  COHORT_HOST_DEVICE float operator()(float a, float b) const { return a * b; }
};
struct MinKeepingNaNOp {  // a NaN on either side is the result, and stays once there
  COHORT_HOST_DEVICE float operator()(float a, float b) const { return a > b || b != b ? b : a; }
};

// Output element j; the layout is BroadcastLayout::Make(kept, kept, input shape) and `count`
// the number of input elements per output element. Elements combine in order.
COHORT_HOST_DEVICE float ReduceValue(ReduceKind kind, const BroadcastLayout& l, int64_t j,
                                     const float* x, int64_t count) {
  const ReduceInput term{x};
  const ReduceTerm mapped{kind, x};
  switch (kind) {
    case ReduceKind::kSum: return BroadcastGather(l, 0, j, term);
    case ReduceKind::kMean: return BroadcastGather(l, 0, j, term) / static_cast<float>(count);
    // A NaN anywhere among the elements is the maximum (minimum), as in MXNet.
    case ReduceKind::kMax: return BroadcastReduce(l, 0, j, term, MaxKeepingNaNOp{}, -INFINITY);
    case ReduceKind::kMin: return BroadcastReduce(l, 0, j, term, MinKeepingNaNOp{}, INFINITY);
    case ReduceKind::kProd:
    case ReduceKind::kNanProd: return BroadcastReduce(l, 0, j, mapped, ProdOp{}, 1.0f);
    case ReduceKind::kNanSum:
    case ReduceKind::kNorm1: return BroadcastGather(l, 0, j, mapped);
    case ReduceKind::kNorm2: return sqrtf(BroadcastGather(l, 0, j, mapped));
  }
  return 0;
}

// Note [Typed reductions]
// Element types other than float32 take the general path (an output element at a time through
// the layout), accumulating in double for float64, in float for the half types (as MXNet), and in
// 64 bits for integers, which wrap to the element type as numpy's and MXNet's int32 sums do:
// sums, products, max and min are exact; an integer mean is the (wrapped) sum divided by the
// count, truncated toward zero, as MXNet computes it; nansum and nanprod on integers are sum and
// prod. The norms take the floating types only. Gradients are float32.
template <typename T>
using ReduceAcc = std::conditional_t<
    !std::is_same_v<ComputeType<T>, T>, ComputeType<T>,  // the half types: float
    std::conditional_t<std::is_floating_point_v<T>, double,
                       std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>;

inline bool ReduceTakes(ReduceKind kind, DType dtype) {
  if (dtype == DType::kBool) return false;
  const bool floating = dtype == DType::kFloat32 || dtype == DType::kFloat64 ||
                        dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  return floating || (kind != ReduceKind::kNorm1 && kind != ReduceKind::kNorm2);
}

template <typename T>
COHORT_HOST_DEVICE T ReduceValueTyped(ReduceKind kind, const BroadcastLayout& l, int64_t j,
                                      const T* x, int64_t count) {
  using A = ReduceAcc<T>;
  constexpr bool kFloating = !std::is_integral_v<A>;
  const auto term = [x, kind](int64_t i) {
    const A v = static_cast<A>(x[i]);
    if constexpr (kFloating) {
      if (kind == ReduceKind::kNanSum && v != v) return A(0);
      if (kind == ReduceKind::kNanProd && v != v) return A(1);
      if (kind == ReduceKind::kNorm1) return v < 0 ? -v : v;
      if (kind == ReduceKind::kNorm2) return v * v;
    }
    return v;
  };
  const auto add = [](A a, A b) { return WrapAdd(a, b); };
  const auto mul = [](A a, A b) { return WrapMul(a, b); };
  // A NaN anywhere is the extreme, and stays (as MXNet's max and min).
  const auto max = [](A a, A b) { return a < b || b != b ? b : a; };
  const auto min = [](A a, A b) { return a > b || b != b ? b : a; };
  A lowest, highest;
  if constexpr (kFloating) {
    lowest = -INFINITY;
    highest = INFINITY;
  } else {
    lowest = std::numeric_limits<A>::lowest();
    highest = std::numeric_limits<A>::max();
  }
  switch (kind) {
    case ReduceKind::kMax: return static_cast<T>(BroadcastReduce(l, 0, j, term, max, lowest));
    case ReduceKind::kMin: return static_cast<T>(BroadcastReduce(l, 0, j, term, min, highest));
    case ReduceKind::kProd:
    case ReduceKind::kNanProd: return static_cast<T>(BroadcastReduce(l, 0, j, term, mul, A(1)));
    case ReduceKind::kMean: {
      const A sum = BroadcastReduce(l, 0, j, term, add, A(0));
      const A n = static_cast<A>(count > 0 ? count : 1);
      if constexpr (kFloating) {
        return static_cast<T>(sum / n);
      } else {  // the sum wrapped to T first, as MXNet's int32 mean divides it
        return static_cast<T>(static_cast<A>(static_cast<T>(sum)) / n);
      }
    }
    case ReduceKind::kNorm2: {
      const A sum = BroadcastReduce(l, 0, j, term, add, A(0));
      if constexpr (kFloating) {
        return static_cast<T>(sqrt(static_cast<double>(sum)));
      } else {
        return static_cast<T>(sum);  // not taken (ReduceTakes)
      }
    }
    default: return static_cast<T>(BroadcastReduce(l, 0, j, term, add, A(0)));
  }
}

// Note [Reduce as rows]
// Most reductions read the input as rows (Note [Row lanes]): once axes of extent 1 are set aside,
// the input is a (lead, outer, size, inner) array whose `lead` and `size` axes are reduced and
// whose `outer` and `inner` are kept: output element r = o·inner + i reduces row r of each lead
// block, the rows' totals added in lead order. That covers every axis, the last ones, the first
// ones, a run in the middle (lead 1), and a run at the start with another later, as a
// per-channel mean over axes (0, 2, 3) of NCHW. The CPU runs rows on its threads, each in
// SumOf16's vectorized order (rows `inner` apart a block of rows at a time: reduce.cc), the GPU
// spreads a row over a block, and neither does index arithmetic per element. Other reductions
// (axes 1 and 3 of four) take the general path above, an output element or an input element at
// a time through the layout. `op_bench` forward / backward in ms on this machine's CPU, through
// the layout before and as rows now: 1024x1024, sum of everything 1.99 / 2.02 before, 0.054 /
// 0.042 now; axis 1 2.01 / 4.01, 0.057 / 0.045; axis 0 3.35 / 4.02, 0.12 / 0.061; max alike;
// 64x128x128, axes (0, 2) 4.0 / 6.0, 0.10 / 0.060; 32x64x16x16, axes (0, 2, 3) 0.042 / 0.028 now.

// Row r's first element in the first lead block: RowBase's inverse, and the output element.
COHORT_HOST_DEVICE int64_t ReduceRowOf(int64_t base, int64_t size, int64_t inner) {
  return base / (size * inner) * inner + base % (size * inner);
}

// Output element r (row r) of a row reduction: Σ, Σ / count or max (NaN kept, as MXNet does).
struct ReduceRows {
  ReduceKind kind;
  const float* x;
  float* y;
  int64_t size, inner;
  int64_t lead = 1, lead_stride = 0;  // lead blocks of lead_stride = outer·size·inner elements

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    RunRowWithStride(*this, lanes, base, inner);
  }
  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes, typename Stride>
  COHORT_HOST_DEVICE void Row(Lanes lanes, int64_t base, Stride stride) const {
    float v = kind == ReduceKind::kMax ? -INFINITY : 0.0f;
    bool nan = false;
    for (int64_t l = 0; l < lead; ++l) {
      const float* row = x + l * lead_stride + base;
      const auto at = [&](int64_t c) { return row[c * stride]; };
      if (kind == ReduceKind::kMax) {
        v = MaxOp{}(v, lanes.Max(size, at));  // MaxOp drops a NaN: look for one apart
        nan = nan || lanes.Max(size, [&](int64_t c) { return at(c) != at(c) ? 1.0f : 0.0f; }) > 0;
      } else {
        const float part = lanes.Sum(size, at);
        v = l == 0 ? part : v + part;
      }
    }
    if (nan) v = NAN;
    if (kind == ReduceKind::kMean) v /= static_cast<float>(lead * size);
    if (lanes.first() == 0) y[ReduceRowOf(base, size, inner)] = v;
  }
};

// The gradient of row r's elements in every lead block: ReduceGrad's, with dy and y read once.
struct ReduceGradRows {
  ReduceKind kind;
  GradReq req;
  const float *dy, *x, *y;  // x and y null unless max
  float* dx;
  int64_t size, inner;
  int64_t lead = 1, lead_stride = 0;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    RunRowWithStride(*this, lanes, base, inner);
  }
  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes, typename Stride>
  COHORT_HOST_DEVICE void Row(Lanes lanes, int64_t base, Stride stride) const {
    const int64_t r = ReduceRowOf(base, size, inner);
    const float g =
        kind == ReduceKind::kMean ? dy[r] / static_cast<float>(lead * size) : dy[r];
    for (int64_t l = 0; l < lead; ++l) {
      const int64_t first = l * lead_stride + base;
      if (kind == ReduceKind::kMax) {
        const float top = y[r];
        WriteRowGrad(lanes, size, first, stride, req, dx,
                     [&](int64_t, int64_t k) { return x[k] == top ? g : 0.0f; });
      } else {
        WriteRowGrad(lanes, size, first, stride, req, dx, [&](int64_t, int64_t) { return g; });
      }
    }
  }
};

// The gradient of input element i: its output's head gradient (divided by count for mean; for
// max and min only where x equals the extreme, ties all included; prod's y / x and the norms'
// sign(x) and x / y, as MXNet's backward ops; nothing for a NaN that nansum or nanprod skipped).
COHORT_HOST_DEVICE float ReduceGrad(ReduceKind kind, const BroadcastLayout& l, int64_t i,
                                    const float* dy, const float* x, const float* y,
                                    int64_t count) {
  const int64_t j = BroadcastSource(l, 0, i);
  switch (kind) {
    case ReduceKind::kSum: return dy[j];
    case ReduceKind::kMean: return dy[j] / static_cast<float>(count);
    case ReduceKind::kMax:
    case ReduceKind::kMin: return x[i] == y[j] ? dy[j] : 0.0f;
    case ReduceKind::kProd: return dy[j] * (y[j] / x[i]);
    case ReduceKind::kNanSum: return x[i] != x[i] ? 0.0f : dy[j];
    case ReduceKind::kNanProd: return x[i] != x[i] ? 0.0f : dy[j] * (y[j] / x[i]);
    case ReduceKind::kNorm1: return x[i] > 0 ? dy[j] : (x[i] < 0 ? -dy[j] : 0.0f);
    case ReduceKind::kNorm2: return dy[j] * (x[i] / y[j]);
  }
  return 0;
}
// What a kind's gradient reads.
inline bool ReduceGradReadsInput(ReduceKind kind) {
  return kind != ReduceKind::kSum && kind != ReduceKind::kMean;
}
inline bool ReduceGradReadsOutput(ReduceKind kind) {
  return kind == ReduceKind::kMax || kind == ReduceKind::kMin || kind == ReduceKind::kProd ||
         kind == ReduceKind::kNanProd || kind == ReduceKind::kNorm2;
}

}  // namespace cohort::op
