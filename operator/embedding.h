// Embedding: the parameters and the row lookup that the CPU kernel (embedding.cc) and the CUDA
// kernel (embedding.cu) share.
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
COHORT_HOST_DEVICE int64_t EmbeddingRow(float index, int64_t input_dim) {
  const int64_t row = static_cast<int64_t>(index);
  return row < 0 ? 0 : row >= input_dim ? input_dim - 1 : row;
}

}  // namespace cohort::op
