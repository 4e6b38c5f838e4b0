// slice_axis and SliceChannel (split), slice (crop), slice_like and flip (reverse), and the
// window assignments _slice_assign and _slice_assign_scalar: the
// parameters and the index map from an output element to the input element it copies, shared
// by the CPU kernel (slice.cc) and the CUDA kernel (slice.cu). slice_axis and SliceChannel take
// a window [begin, begin + size) of one axis; slice, slice_like and flip a strided window of
// every axis (a negative step walks backwards). Backward writes the head gradient back into the
// window (every output element has its own input element).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct SliceAxisParam {
  int axis = 0;
  int64_t begin = 0;
  std::optional<int64_t> end;  // None: to the end

  static SliceAxisParam Parse(const Attrs& attrs);
};

struct SliceChannelParam {
  int num_outputs = 1;
  int axis = 1;
  bool squeeze_axis = false;

  static SliceChannelParam Parse(const std::string& op, const Attrs& attrs);
};

// A window of `size` positions from `begin` along the middle axis of an (outer, extent, inner)
// array.
struct SliceWindow {
  int64_t extent, begin, size, inner;
};

// The input element that output element i of the window copies.
COHORT_HOST_DEVICE int64_t SliceSource(const SliceWindow& w, int64_t i) {
  const int64_t block = w.size * w.inner;
  return i / block * w.extent * w.inner + w.begin * w.inner + i % block;
}

// slice, slice_like and flip: where each axis starts and how far apart its elements are, in
// input elements (negative: backwards), and the output's extents.
struct StridedWindow {
  int ndim = 0;
  int64_t out_dim[Shape::kMaxNdim] = {};
  int64_t step[Shape::kMaxNdim] = {};
  int64_t offset = 0;  // the input element of output element 0
};

// The input element that output element i of a strided window copies.
COHORT_HOST_DEVICE int64_t StridedSource(const StridedWindow& w, int64_t i) {
  int64_t source = w.offset;
  for (int d = w.ndim - 1; d >= 0; --d) {
    source += (i % w.out_dim[d]) * w.step[d];
    i /= w.out_dim[d];
  }
  return source;
}

// The number of elements of a strided window.
COHORT_HOST_DEVICE int64_t StridedWindowSize(const StridedWindow& w) {
  int64_t n = 1;
  for (int d = 0; d < w.ndim; ++d) n *= w.out_dim[d];
  return n;
}

enum class StridedKind { kSlice, kSliceLike, kFlip };

struct StridedParam {
  StridedKind kind = StridedKind::kSlice;
  // slice: per axis from the first (None: Python's default); slice_like and flip: axes.
  std::vector<std::optional<int64_t>> begin, end, step;
  std::vector<int> axes;

  static StridedParam Parse(const std::string& op, const Attrs& attrs);
  // Python's slice semantics per axis (out-of-range bounds clamp), from the input's shape and
  // (slice_like) the shape to match; throws naming the op for a zero step or a bad axis.
  StridedWindow Window(const Shape& in, const Shape& like) const;
  static Shape OutShape(const StridedWindow& w);
};

// slice.cu (Note [GPU kernels]). Backward zeroes in_grad first for kWrite (the window need not
// cover it) and like_grad (slice_like's second input, or null) always.
void StridedForwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& in,
                       const NDArray& out);
void StridedBackwardGpu(const OpContext& ctx, const StridedWindow& w, GradReq req,
                        const NDArray& out_grad, const NDArray& in_grad, const NDArray* like_grad);

// _slice_assign (_crop_assign) and _slice_assign_scalar (_crop_assign_scalar): the output is
// lhs with the window's elements StridedSource(w, i) replaced by rhs[i] (or by the scalar).
// Forward takes every dtype; backward gives lhs the head gradient outside the window and rhs the
// window's (float32).
void SliceAssignForwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& lhs,
                           const NDArray* rhs, double scalar, const NDArray& out);
void SliceAssignBackwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& out_grad,
                            GradReq lhs_req, const NDArray& lhs_grad, GradReq rhs_req,
                            const NDArray* rhs_grad);

}  // namespace cohort::op
