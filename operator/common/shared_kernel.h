// What the CPU and the CUDA kernels of every op share: grad_req writes, the reduction operators
// and the serial lanes that run a row body on one thread (Note [Shared kernel logic]).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

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

// Σ v[k · stride] over k in [0, count), in order from 0: the second pass of a GPU sum split into
// parts whose sums lie `stride` apart (Note [Column sums in chunks], the depthwise weight
// gradient).
COHORT_HOST_DEVICE float SumInOrder(const float* v, int64_t count, int64_t stride) {
  float sum = 0;
  for (int64_t k = 0; k < count; ++k) sum += v[k * stride];
  return sum;
}

// dst[i] = v (kWrite) or dst[i] += v (kAdd); callers skip kNull. v is in T's ComputeType (float
// for the half types, which add in float and round once).
template <typename T>
COHORT_HOST_DEVICE void AssignReq(GradReq req, T* dst, int64_t i, ComputeType<T> v) {
  if (req == GradReq::kAdd)
    dst[i] = ConvertValue<T>(ConvertValue<ComputeType<T>>(dst[i]) + v);
  else
    dst[i] = ConvertValue<T>(v);
}

// dx[k] = grad(c, k), or += for kAdd, at k = base + c·stride for the lane's positions c of a
// row: the request tested once, outside the loops, which vectorize even in place.
COHORT_EXEC_CHECK_DISABLE
template <typename Lanes, typename Stride, typename Grad>
COHORT_HOST_DEVICE void WriteRowGrad(Lanes lanes, int64_t size, int64_t base, Stride stride,
                                     GradReq req, float* dx, Grad grad) {
  if (req == GradReq::kAdd) {
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      dx[base + c * stride] += grad(c, base + c * stride);
    }
  } else {
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      dx[base + c * stride] = grad(c, base + c * stride);
    }
  }
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
struct MaxKeepingNaNOp {  // a NaN on either side is the result, and stays once there
  template <typename T>
  COHORT_HOST_DEVICE T operator()(T a, T b) const {
    return a < b || b != b ? b : a;
  }
};

// Σ f(i) in 16 interleaved partial sums combined pairwise at the end: a fixed order, so every
// run and every CPU (whatever its vector width) gives the same result, and 16 independent adds
// per step that vectorize (a single running float sum is a chain of dependent adds; 8 partials
// still wait on the adds' latency: 2.6x slower over rows of 128). Add may be called for several
// runs (each run's element i goes to partial i % 16).
struct PartialSums16 {
  static constexpr int kLanes = 16;
  float acc[kLanes] = {};

  COHORT_EXEC_CHECK_DISABLE
  template <typename F>
  COHORT_HOST_DEVICE void Add(int64_t n, F f) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) acc[j] += f(i + j);
    }
    for (; i < n; ++i) acc[i % kLanes] += f(i);
  }
  COHORT_HOST_DEVICE float Total() {
    for (int width = kLanes / 2; width >= 1; width /= 2) {
      for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
    }
    return acc[0];
  }
};
// Σ f(i) for i in [0, n), in PartialSums16's order.
COHORT_EXEC_CHECK_DISABLE
template <typename F>
COHORT_HOST_DEVICE float SumOf16(int64_t n, F f) {
  PartialSums16 sums;
  sums.Add(n, f);
  return sums.Total();
}
// max f(i) over [0, n) (-inf for n = 0), MaxOp's order per lane.
COHORT_EXEC_CHECK_DISABLE
template <typename F>
COHORT_HOST_DEVICE float MaxOf(int64_t n, F f) {
  float max = -INFINITY;
  COHORT_SIMD_MAX(max)
  for (int64_t i = 0; i < n; ++i) max = MaxOp{}(max, f(i));
  return max;
}

// Note [Row lanes]
// Softmax-like ops work on rows of an (outer, size, inner) array: row r holds the `size` values
// spaced `inner` apart from RowBase(r). A row body (in the op's header) is a functor with
//   COHORT_EXEC_CHECK_DISABLE template <typename Lanes>
//   COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const;
// that visits c = lanes.first(), += lanes.step() in its elementwise loops, and takes a row's
// totals with lanes.Sum(size, f) and lanes.Max(size, f) (f(c) the value at position c), which
// every lane receives. SerialLanes runs a row on one thread (the CPU, and the GPU when rows are
// many and strided), its totals in SumOf16's fixed order; the GPU's BlockLanes spreads a row over
// a block (operator/common/pointwise_gpu.cuh).
// Each element is visited by the same lane in every pass, so a body may write y[k] where it read
// x[k] (in place).
struct SerialLanes {
  COHORT_HOST_DEVICE int64_t first() const { return 0; }
  COHORT_HOST_DEVICE int64_t step() const { return 1; }
  COHORT_EXEC_CHECK_DISABLE
  template <typename F>
  COHORT_HOST_DEVICE float Sum(int64_t size, F f) const {
    return SumOf16(size, f);
  }
  COHORT_EXEC_CHECK_DISABLE
  template <typename F>
  COHORT_HOST_DEVICE float Max(int64_t size, F f) const {
    return MaxOf(size, f);
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
  return lanes.Max(size, [&](int64_t c) { return row[c * stride]; });
}

COHORT_HOST_DEVICE int64_t RowBase(int64_t r, int64_t size, int64_t inner) {
  return r / inner * size * inner + r % inner;
}

}  // namespace cohort::op
