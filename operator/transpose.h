// transpose: the parameters and the index map from an output element to the input element it
// copies, shared by the CPU kernel (transpose.cc) and the CUDA kernel (transpose.cu). Backward
// is the same map run the other way (each input element is read by exactly one output).
#pragma once

#include <cstdint>
#include <vector>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct TransposeParam {
  std::vector<int> axes;  // empty: reverse the axes

  static TransposeParam Parse(const Attrs& attrs);
};

// The output's dimensions with the input stride of each (adjacent axes that stay adjacent are
// merged, so (B,T,H,D) -> (B,H,T,D) is 4-d but a no-op permutation is 1-d).
struct TransposeLayout {
  static constexpr int kMaxDims = 8;
  int ndim = 0;
  int64_t out_dim[kMaxDims] = {};
  int64_t in_stride[kMaxDims] = {};

  // Throws naming the axes when they are not a permutation of in's.
  static TransposeLayout Make(const TransposeParam& p, const Shape& in, Shape* out);
};

COHORT_HOST_DEVICE int64_t TransposeSource(const TransposeLayout& l, int64_t i) {
  int64_t offset = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    offset += (i % l.out_dim[d]) * l.in_stride[d];
    i /= l.out_dim[d];
  }
  return offset;
}

}  // namespace cohort::op
