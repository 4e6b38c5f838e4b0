// What the CPU and the CUDA kernels of every op share: grad_req writes, the reduction operators
// and the serial lanes that run a row body on one thread (Note [Shared kernel logic]).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

// Note [Shared kernel logic]
// Each op's header (operator/<op>.h) holds its parameters, its enums and its per-element and
// per-row math as COHORT_HOST_DEVICE functions; its CPU kernel (<op>.cc) and its CUDA kernel
// (<op>.cu) both call them, so the CPU tests execute the arithmetic that the GPU runs, and the
// .cu files hold only the parallel decomposition and the launches. Both sides compile without
// FMA contraction (-ffp-contract=off, nvcc --fmad=false) and so round alike: where the two walk
// the data in the same order they agree to the bit. tests/operator/shared_header_test.cc checks
// that every op's .cu includes its header and calls its functions.

// dst[i] = v (kWrite) or dst[i] += v (kAdd); callers skip kNull.
COHORT_HOST_DEVICE void AssignReq(GradReq req, float* dst, int64_t i, float v) {
  if (req == GradReq::kAdd)
    dst[i] += v;
  else
    dst[i] = v;
}

struct SumOp {
  template <typename T>
  COHORT_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp {  // std::max's order: a NaN in `a` stays, one in `b` is dropped
  template <typename T>
  COHORT_HOST_DEVICE T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// Note [Row lanes]
// Softmax-like ops work on rows of an (outer, size, inner) array: row r holds the `size` values
// spaced `inner` apart from RowBase(r). A row body (in the op's header) is a functor with
//   COHORT_EXEC_CHECK_DISABLE template <typename Lanes>
//   COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const;
// that visits c = lanes.first(), += lanes.step() and combines partial results with
// lanes.Reduce. SerialLanes runs it on one thread (the CPU, and the GPU when rows are many and
// strided); the GPU's BlockLanes spreads a row over a block (operator/common/pointwise_gpu.cuh).
// Each element is visited by the same lane in every pass, so a body may write y[k] where it read
// x[k] (in place).
struct SerialLanes {
  COHORT_HOST_DEVICE int64_t first() const { return 0; }
  COHORT_HOST_DEVICE int64_t step() const { return 1; }
  template <typename T, typename Op>
  COHORT_HOST_DEVICE T Reduce(T v, Op) const {
    return v;
  }
};

// A row stride known to be 1: row bodies run their loops with it when rows are contiguous, so
// that the CPU compiler vectorizes them (a runtime stride made them gathers).
struct UnitStride {
  COHORT_HOST_DEVICE constexpr operator int64_t() const { return 1; }
};

// A row body's operator() in one line: body.Row(lanes, base, s) with s a UnitStride when the
// rows are contiguous, else the runtime stride.
COHORT_EXEC_CHECK_DISABLE
template <typename Body, typename Lanes>
COHORT_HOST_DEVICE void RunRowWithStride(const Body& body, Lanes lanes, int64_t base,
                                         int64_t stride) {
  if (stride == 1) {
    body.Row(lanes, base, UnitStride{});
  } else {
    body.Row(lanes, base, stride);
  }
}

// The maximum of a row of `size` values spaced `stride` apart, over all lanes (MaxOp's order).
COHORT_EXEC_CHECK_DISABLE
template <typename Lanes, typename Stride>
COHORT_HOST_DEVICE float RowMax(Lanes lanes, const float* row, int64_t size, Stride stride) {
  float max = -INFINITY;
  COHORT_SIMD_MAX(max)
  for (int64_t c = lanes.first(); c < size; c += lanes.step()) max = MaxOp{}(max, row[c * stride]);
  return lanes.Reduce(max, MaxOp{});
}

COHORT_HOST_DEVICE int64_t RowBase(int64_t r, int64_t size, int64_t inner) {
  return r / inner * size * inner + r % inner;
}

}  // namespace cohort::op
