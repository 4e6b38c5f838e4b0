// FullyConnected (out = data · weightᵀ + bias): the parameters and the bias gradient's column
// sum, shared by the CPU kernel (fully_connected.cc, OpenBLAS) and the CUDA kernel
// (fully_connected.cu, cuBLAS).
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct FullyConnectedParam {
  int64_t num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;

  static FullyConnectedParam Parse(const Attrs& attrs);
  Attrs ToAttrs() const;
};

// acc + Σ_r dy[r·h + j] over `rows` rows, in row order: the bias gradient of hidden unit j onto
// 0 (kWrite) or its old value (kAdd).
COHORT_HOST_DEVICE float FullyConnectedBiasGrad(const float* dy, int64_t rows, int64_t h, int64_t j,
                                                float acc) {
  for (int64_t r = 0; r < rows; ++r) acc += dy[r * h + j];
  return acc;
}

// All h bias gradients at once, rows outer: each column adds its rows in the same order as
// FullyConnectedBiasGrad (so the same bits), but the reads follow memory (the CPU's form; the
// column-at-a-time form strode through dy and took as long as the GEMMs of a narrow layer).
// db holds the old values for kAdd.
COHORT_HOST_DEVICE void FullyConnectedBiasGradRows(const float* dy, int64_t rows, int64_t h,
                                                   float* db, bool add) {
  if (!add) {
    for (int64_t j = 0; j < h; ++j) db[j] = 0.0f;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = dy + r * h;
    for (int64_t j = 0; j < h; ++j) db[j] += row[j];
  }
}

}  // namespace cohort::op
