// softmax, log_softmax and softmin along an axis, with temperature: the parameters and the row
// bodies (Note [Row lanes]) that the CPU kernel (softmax.cc) and the CUDA kernel (softmax.cu) both
// run.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "operator/common/fast_math.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

struct SoftmaxParam {
  int axis = -1;
  float temperature = 1.0f;  // MXNet's "None" means 1

  // `op` is "softmax" or "log_softmax", for messages.
  static SoftmaxParam Parse(const std::string& op, const Attrs& attrs);
};

// y = softmax((x - max) / t), or its log, over each row (softmin: t negated). y may be x. One
// exponential per element (FastExp, which vectorizes), summed in float: a row's sum is of terms in
// (0, 1].
struct SoftmaxRows {
  const float* x;
  float* y;
  int64_t size, stride;
  float t;
  bool log;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    RunRowWithStride(*this, lanes, base, stride);
  }

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes, typename Stride>
  COHORT_HOST_DEVICE void Row(Lanes lanes, int64_t base, Stride s) const {
    const float* xr = x + base;
    float* yr = y + base;
    // The largest x / t: the row's maximum, or its minimum for a negative t (softmin).
    const float max = t > 0 ? RowMax(lanes, xr, size, s)
                            : -lanes.Max(size, [&](int64_t c) { return -xr[c * s]; });
    const float inv_t = 1.0f / t;
    float total;
    if (log) {
      total = lanes.Sum(size, [&](int64_t c) { return FastExp((xr[c * s] - max) * inv_t); });
    } else {  // keep each exponential in y (x is not read again: y may be x)
      COHORT_INDEPENDENT
      for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
        yr[c * s] = FastExp((xr[c * s] - max) * inv_t);
      }
      total = lanes.Sum(size, [&](int64_t c) { return yr[c * s]; });
    }
    if (log) {
      const float log_sum = logf(total);
      COHORT_INDEPENDENT
      for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
        yr[c * s] = (xr[c * s] - max) * inv_t - log_sum;
      }
    } else {
      const float inv = 1.0f / total;
      COHORT_INDEPENDENT
      for (int64_t c = lanes.first(); c < size; c += lanes.step()) yr[c * s] *= inv;
    }
  }
};

// dx (=|+=) (y (dy - Σ dy·y), or dy - e^y Σ dy for log) / t over each row; dx may be dy.
struct SoftmaxGradRows {
  const float* y;
  const float* dy;
  float* dx;
  int64_t size, stride;
  float t;
  bool log;
  GradReq req;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    RunRowWithStride(*this, lanes, base, stride);
  }

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes, typename Stride>
  COHORT_HOST_DEVICE void Row(Lanes lanes, int64_t base, Stride s) const {
    const float d = lanes.Sum(size, [&](int64_t c) {
      const int64_t k = base + c * s;
      return log ? dy[k] : dy[k] * y[k];
    });
    const float inv_t = 1.0f / t;
    WriteRowGrad(lanes, size, base, s, req, dx, [&](int64_t, int64_t k) {
      return (log ? dy[k] - FastExp(y[k]) * d : y[k] * (dy[k] - d)) * inv_t;
    });
  }
};

}  // namespace cohort::op
