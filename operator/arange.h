// _arange and _contrib_arange_like: evenly spaced values (GluonNLP builds its causal masks from
// them inside the graph). The parameters and the value at each position, shared by the CPU
// kernel (arange.cc) and the CUDA kernel (arange.cu).
#pragma once

#include <cstdint>
#include <optional>

#include "base/dtype.h"
#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct ArangeParam {
  double start = 0;
  std::optional<double> stop;  // _arange: None means [0, start)
  double step = 1;
  int64_t repeat = 1;
  std::optional<int> axis;  // _contrib_arange_like: None means the data's whole shape
  DType dtype = DType::kFloat32;  // _arange's output

  // `op` is "_arange" or "_contrib_arange_like".
  static ArangeParam Parse(const std::string& op, const Attrs& attrs);
};

// The value at flat position i: start + ⌊i / repeat⌋ · step, computed in double and converted
// to T (float32 by default; _arange's dtype: integers exact up to 2^53).
template <typename T = float>
COHORT_HOST_DEVICE T ArangeValue(double start, double step, int64_t repeat, int64_t i) {
  return ConvertValue<T>(start + static_cast<double>(i / repeat) * step);
}

}  // namespace cohort::op
