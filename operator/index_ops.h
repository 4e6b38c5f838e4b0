// argmax, argmin and argmax_channel: the position of the largest (smallest) element along an
// axis, shared by the CPU kernel (index_ops.cc) and the CUDA kernel (index_ops.cu). Positions
// are float32, as MXNet returns them; the first of equal elements wins. No gradient.
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

}  // namespace cohort::op
