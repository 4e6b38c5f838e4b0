// argmax, argmin and argmax_channel: the position of the largest (smallest) element along an
// axis, shared by the CPU kernel (index_ops.cc) and the CUDA kernel (index_ops.cu). Positions
// are float32, as MXNet returns them; the first of equal elements wins. And one_hot, from
// positions back to rows of `depth`. No gradient.
#pragma once

#include <cstdint>
#include <optional>

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
COHORT_HOST_DEVICE float ArgReduceAt(const float* x, int64_t j, int64_t size, int64_t inner,
                                     bool is_max) {
  const float* row = x + j / inner * size * inner + j % inner;
  int64_t best = 0;
  float v = row[0];
  for (int64_t c = 1; c < size; ++c) {
    const float y = row[c * inner];
    if (is_max ? y > v : y < v) {
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

// index_ops.cu (Note [GPU kernels]).
void OneHotGpu(const OpContext& ctx, const OneHotParam& p, const NDArray& indices,
               const NDArray& out);

}  // namespace cohort::op
