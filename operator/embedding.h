// Embedding and take: the parameters and the row lookup that the CPU kernel (embedding.cc) and
// the CUDA kernel (embedding.cu) share. take(a, indices) is Embedding with a as the table (its
// rows the slices of axis 0) and a choice of what out-of-range indices mean.
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct EmbeddingParam {
  int64_t input_dim = 0;
  int64_t output_dim = 0;

  static EmbeddingParam Parse(const Attrs& attrs);
};

// Whether an index (a float, truncated as MXNet does) names a row of the table. The CPU refuses
// one that does not; a GPU kernel cannot, and EmbeddingRow clamps it into the table, as MXNet's
// GPU Embedding (take with mode clip) does.
COHORT_HOST_DEVICE bool EmbeddingIndexValid(float index, int64_t input_dim) {
  const int64_t row = static_cast<int64_t>(index);
  return row >= 0 && row < input_dim;
}
// With `wrap` (take's mode "wrap") an index counts modulo the table's rows instead.
COHORT_HOST_DEVICE int64_t EmbeddingRow(float index, int64_t input_dim, bool wrap = false) {
  const int64_t row = static_cast<int64_t>(index);
  if (wrap) {
    const int64_t r = row % input_dim;
    return r < 0 ? r + input_dim : r;
  }
  return row < 0 ? 0 : row >= input_dim ? input_dim - 1 : row;
}

// take's handling of indices outside [0, rows): MXNet's modes.
enum class TakeMode { kClip, kWrap, kRaise };

struct TakeParam {
  TakeMode mode = TakeMode::kClip;

  static TakeParam Parse(const Attrs& attrs);  // only axis 0 is supported
};

}  // namespace cohort::op
