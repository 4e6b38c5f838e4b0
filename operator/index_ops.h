// argmax, argmin and argmax_channel: the position of the largest (smallest) element along an
// axis, shared by the CPU kernel (index_ops.cc) and the CUDA kernel (index_ops.cu). Positions
// are float32, as MXNet returns them; the first of equal elements wins, and the first NaN wins. And
// one_hot, from positions back to rows of `depth`. No gradient. And pick and fill_element_0index,
// which read positions.
#pragma once

#include <cstdint>
#include <optional>

#include "base/half.h"
#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct ArgReduceParam {
  bool is_max = true;
  std::optional<int> axis;  // none: the flattened array
  bool keepdims = false;

  // `op` is "argmax", "argmin" or "argmax_channel" (the last axis).
  static ArgReduceParam Parse(const std::string& op, const Attrs& attrs);
  // The input as (outer, size, inner) around the reduced axis.
  void Rows(const Shape& in, int64_t* outer, int64_t* size, int64_t* inner) const;
  Shape OutShape(const Shape& in) const;
};

// Output element j (j = o · inner + i): the position along the axis of the extreme element of
// x[o, :, i].
// Any element type (compared in its ComputeType); the position is returned as a float.
template <typename T = float>
COHORT_HOST_DEVICE float ArgReduceAt(const T* x, int64_t j, int64_t size, int64_t inner,
                                     bool is_max) {
  using C = ComputeType<T>;
  const T* row = x + j / inner * size * inner + j % inner;
  int64_t best = 0;
  C v = static_cast<C>(row[0]);
  for (int64_t c = 1; c < size; ++c) {
    const C y = static_cast<C>(row[c * inner]);
    // The first NaN is the extreme, as numpy's argmax and argmin take it.
    if (v == v && (y != y || (is_max ? y > v : y < v))) {
      v = y;
      best = c;
    }
  }
  return static_cast<float>(best);
}

struct OneHotParam {
  int64_t depth = 0;
  float on_value = 1, off_value = 0;
  static OneHotParam Parse(const Attrs& attrs);
};

// Element j (= i · depth + c) of one_hot: on where c is index i's position (truncated, as MXNet
// casts it), off elsewhere and for every position outside [0, depth).
COHORT_HOST_DEVICE float OneHotValue(const OneHotParam& p, const float* indices, int64_t j) {
  const float index = indices[j / p.depth];
  const int64_t c = j % p.depth;
  return index >= 0 && index < static_cast<float>(p.depth) && static_cast<int64_t>(index) == c
             ? p.on_value
             : p.off_value;
}

// pick (choose_element_0index): out[o, i] = x[o, index[o, i], i] along `axis`; an index out of
// [0, size) is clipped (mode clip, MXNet's default) or wrapped (mode wrap). fill_element_0index:
// lhs (n, m) with element (r, index[r]) replaced by mhs[r], indices clipped.
struct PickParam {
  ArgReduceParam geometry;  // axis and keepdims (argmax's shapes)
  bool wrap = false;

  static PickParam Parse(const Attrs& attrs);
};

// The element of x (as (outer, size, inner)) that output j (= o · inner + i) picks. A position
// is truncated toward zero as MXNet casts it; NaN is taken as 0 (casting it is undefined).
COHORT_HOST_DEVICE int64_t PickSource(const float* index, int64_t j, int64_t size, int64_t inner,
                                      bool wrap) {
  float v = index[j];
  v = v != v ? 0.0f : v < -1e18f ? -1e18f : v > 1e18f ? 1e18f : v;
  int64_t c = static_cast<int64_t>(v);
  if (wrap) {
    c %= size;
    if (c < 0) c += size;
  } else {
    c = c < 0 ? 0 : c >= size ? size - 1 : c;
  }
  return j / inner * size * inner + c * inner + j % inner;
}

// index_ops.cu (Note [GPU kernels]). Backward scatters into data_grad (zeroed first for write);
// every output has its own source element, so there are no conflicts.
void PickForwardGpu(const OpContext& ctx, const float* x, const float* index, int64_t n,
                    int64_t size, int64_t inner, bool wrap, float* y);
void PickBackwardGpu(const OpContext& ctx, const float* dy, const float* index, int64_t n,
                     int64_t size, int64_t inner, bool wrap, GradReq req, const NDArray& data_grad);
// fill_element_0index: out = lhs with (r, index[r]) = mhs[r]; gradients: lhs the head's outside
// those elements, mhs the head's at them.
void FillElementForwardGpu(const OpContext& ctx, const NDArray& lhs, const NDArray& mhs,
                           const NDArray& index, const NDArray& out);
void FillElementBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& index,
                            GradReq lhs_req, const NDArray& lhs_grad, GradReq mhs_req,
                            const NDArray& mhs_grad);

// batch_take(a, indices): out[i] = a[i, indices[i]] with `a` as rows of its last axis (m
// elements) and one int32 index a row, clipped to [0, m) as MXNet's kernel clips it.
COHORT_HOST_DEVICE int64_t BatchTakeSource(const int32_t* indices, int64_t i, int64_t m) {
  const int64_t c = indices[i];
  return i * m + (c < 0 ? 0 : c >= m ? m - 1 : c);
}

// index_ops.cu (Note [GPU kernels]).
void BatchTakeGpu(const OpContext& ctx, const NDArray& a, const NDArray& indices,
                  const NDArray& out);
void OneHotGpu(const OpContext& ctx, const OneHotParam& p, const NDArray& indices,
               const NDArray& out);

}  // namespace cohort::op
