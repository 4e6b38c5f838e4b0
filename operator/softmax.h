// softmax and log_softmax along an axis, with temperature: the parameters and the row bodies
// (Note [Row lanes]) that the CPU kernel (softmax.cc) and the CUDA kernel (softmax.cu) both run.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "operator/common/shared_kernel.h"

namespace cohort::op {

struct SoftmaxParam {
  int axis = -1;
  float temperature = 1.0f;  // MXNet's "None" means 1

  // `op` is "softmax" or "log_softmax", for messages.
  static SoftmaxParam Parse(const std::string& op, const Attrs& attrs);
};

// y = softmax((x - max) / t), or its log, over each row; sums in double. y may be x.
struct SoftmaxRows {
  const float* x;
  float* y;
  int64_t size, stride;
  float t;
  bool log;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    const float* xr = x + base;
    float* yr = y + base;
    const float max = RowMax(lanes, xr, size, stride);
    double sum = 0;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      sum += expf((xr[c * stride] - max) / t);
    }
    const float log_sum = static_cast<float>(::log(lanes.Reduce(sum, SumOp{})));
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const float z = (xr[c * stride] - max) / t - log_sum;
      yr[c * stride] = log ? z : expf(z);
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
    double dot = 0;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const int64_t k = base + c * stride;
      dot += log ? dy[k] : dy[k] * y[k];
    }
    const float d = static_cast<float>(lanes.Reduce(dot, SumOp{}));
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const int64_t k = base + c * stride;
      const float g = log ? dy[k] - expf(y[k]) * d : y[k] * (dy[k] - d);
      AssignReq(req, dx, k, g / t);
    }
  }
};

}  // namespace cohort::op
