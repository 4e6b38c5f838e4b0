// Pad (pad): numpy.pad's constant, edge and reflect modes with MXNet's flattened pad_width
// (before_1, after_1, ..., before_N, after_N). Each output coordinate reads one input
// coordinate per axis (or the constant); backward gathers, for each input element, the head
// gradients of the output elements that read it, in output order (so CPU and GPU add the same
// terms in the same order, without atomics). Shared by the CPU kernel (pad.cc) and the CUDA
// kernel (pad.cu).
#pragma once

#include <cstdint>
#include <vector>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

enum class PadMode { kConstant, kEdge, kReflect };

struct PadParam {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> width;  // before and after, per axis
  float constant = 0;

  static PadParam Parse(const Attrs& attrs);
  // Throws naming the op when pad_width does not fit the input (reflect: at most extent - 1).
  Shape OutShape(const Shape& in) const;
};

struct PadLayout {
  int ndim = 0;
  int64_t in_dim[Shape::kMaxNdim] = {}, out_dim[Shape::kMaxNdim] = {};
  int64_t before[Shape::kMaxNdim] = {};
  PadMode mode = PadMode::kConstant;
  float constant = 0;
};

// The input coordinate that output coordinate o of axis d reads; -1 for constant padding.
// Reflect mirrors about the edge without repeating it (numpy's 'reflect'), once.
COHORT_HOST_DEVICE int64_t PadSource(const PadLayout& l, int d, int64_t o) {
  const int64_t n = l.in_dim[d], c = o - l.before[d];
  if (c >= 0 && c < n) return c;
  if (l.mode == PadMode::kConstant) return -1;
  if (l.mode == PadMode::kEdge || n == 1) return c < 0 ? 0 : n - 1;
  return c < 0 ? -c : 2 * (n - 1) - c;
}

// Output element i.
COHORT_HOST_DEVICE float PadValue(const PadLayout& l, const float* x, int64_t i) {
  int64_t source = 0, stride = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    const int64_t c = PadSource(l, d, i % l.out_dim[d]);
    i /= l.out_dim[d];
    if (c < 0) return l.constant;
    source += c * stride;
    stride *= l.in_dim[d];
  }
  return x[source];
}

// The gradient of input element j: Σ dy over the output elements that read it, in output order.
// Per axis those output coordinates are at most three runs (reflect: the mirror before, the
// element itself, the mirror after; edge: one run through the padding).
COHORT_HOST_DEVICE float PadGrad(const PadLayout& l, const float* dy, int64_t j) {
  int64_t first[Shape::kMaxNdim][3], count[Shape::kMaxNdim][3];
  int runs[Shape::kMaxNdim];
  for (int d = l.ndim - 1; d >= 0; --d) {
    const int64_t n = l.in_dim[d], c = j % n, b = l.before[d], out = l.out_dim[d];
    j /= n;
    int r = 0;
    if (l.mode == PadMode::kEdge) {
      const int64_t lo = c == 0 ? 0 : c + b, hi = c == n - 1 ? out - 1 : c + b;
      first[d][r] = lo;
      count[d][r++] = hi - lo + 1;
    } else {
      if (l.mode == PadMode::kReflect && c >= 1 && c <= b) {
        first[d][r] = b - c;
        count[d][r++] = 1;
      }
      first[d][r] = c + b;
      count[d][r++] = 1;
      const int64_t mirror = b + 2 * (n - 1) - c;
      if (l.mode == PadMode::kReflect && c <= n - 2 && mirror >= b + n && mirror < out) {
        first[d][r] = mirror;
        count[d][r++] = 1;
      }
    }
    runs[d] = r;
  }
  // An odometer over (run, offset) per axis, the last axis fastest: output order.
  int run[Shape::kMaxNdim] = {};
  int64_t offset[Shape::kMaxNdim] = {};
  float sum = 0;
  while (true) {
    int64_t index = 0;
    for (int d = 0; d < l.ndim; ++d) index = index * l.out_dim[d] + first[d][run[d]] + offset[d];
    sum += dy[index];
    int d = l.ndim - 1;
    for (; d >= 0; --d) {
      if (++offset[d] < count[d][run[d]]) break;
      offset[d] = 0;
      if (++run[d] < runs[d]) break;
      run[d] = 0;
    }
    if (d < 0) return sum;
  }
}

// pad.cu (Note [GPU kernels]).
void PadForwardGpu(const OpContext& ctx, const PadLayout& l, const NDArray& in, const NDArray& out);
void PadBackwardGpu(const OpContext& ctx, const PadLayout& l, GradReq req, const NDArray& out_grad,
                    const NDArray& in_grad);

}  // namespace cohort::op
