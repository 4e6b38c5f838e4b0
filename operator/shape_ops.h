// Flatten, Reshape, expand_dims, squeeze and Concat: Concat's parameters and the layout of its
// joined array, which the CPU kernel (shape_ops.cc) and the CUDA kernel (shape_ops.cu) both use.
// The others only relabel memory (copies where the planner did not share it). shape_array and
// size_array write the input's shape (or size) as int64, as MXNet does; reshape_like relabels
// lhs with (part of) rhs's shape.
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "base/shape.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct ConcatParam {
  int num_args = 1;
  int dim = 1;

  static ConcatParam Parse(const Attrs& attrs);
};

// The joined array of a Concat as `outer` rows of `row` values; a part of extent e along dim
// covers `width` = e · inner consecutive values of every row.
struct ConcatRows {
  int64_t outer = 1, row = 1, inner = 1;
};
inline ConcatRows ConcatRowsOf(const Shape& joined, int dim) {
  ConcatRows r;
  for (int d = 0; d < dim; ++d) r.outer *= joined[d];
  for (int d = dim + 1; d < joined.ndim(); ++d) r.inner *= joined[d];
  r.row = joined[dim] * r.inner;
  return r;
}

// Where element k of a part `width` values wide lies in the joined array, from the part's first
// column `offset`.
COHORT_HOST_DEVICE int64_t ConcatJoinedIndex(int64_t k, int64_t width, int64_t row,
                                             int64_t offset) {
  return k / width * row + offset + k % width;
}

// shape_array's (all) or size_array's (size_only) value k of a shape.
struct ShapeValues {
  int64_t dims[Shape::kMaxNdim] = {};
  int ndim = 0;
  bool size_only = false;
};
COHORT_HOST_DEVICE int64_t ShapeValue(const ShapeValues& s, int64_t k) {
  if (!s.size_only) return s.dims[k];
  int64_t size = 1;
  for (int d = 0; d < s.ndim; ++d) size *= s.dims[d];
  return size;
}

// shape_ops.cu (Note [GPU kernels]): out[k] = ShapeValue(s, k); a zeroed array.
void ShapeArrayGpu(const OpContext& ctx, const ShapeValues& s, const NDArray& out);
void ZeroGpu(const OpContext& ctx, const NDArray& a);

}  // namespace cohort::op
