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
};

// acc + Σ_r dy[r·h + j] over `rows` rows, in row order: the bias gradient of hidden unit j onto
// 0 (kWrite) or its old value (kAdd).
COHORT_HOST_DEVICE float FullyConnectedBiasGrad(const float* dy, int64_t rows, int64_t h, int64_t j,
                                                float acc) {
  for (int64_t r = 0; r < rows; ++r) acc += dy[r * h + j];
  return acc;
}

}  // namespace cohort::op
