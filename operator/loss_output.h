// Loss layers (SoftmaxOutput, LinearRegressionOutput, LogisticRegressionOutput,
// MAERegressionOutput, MakeLoss) and BlockGrad: parameters, enums, and the per-row and
// per-element math that the CPU kernels (loss_output.cc) and the CUDA kernels (loss_output.cu)
// share.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "operator/common/fast_math.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

enum class LossNormalization { kNull, kBatch, kValid };
LossNormalization ParseLossNormalization(ParamReader& r);

struct SoftmaxOutputParam {
  float grad_scale = 1.0f;
  float ignore_label = -1.0f;
  bool multi_output = false;
  bool use_ignore = false;
  bool preserve_shape = false;
  LossNormalization normalization = LossNormalization::kNull;
  float smooth_alpha = 0.0f;

  static SoftmaxOutputParam Parse(const Attrs& attrs);
};

// The divisor of SoftmaxOutput's gradient for `outer` samples of `inner` positions, `valid` of
// the labels not ignored. As MXNet: multi_output gradients are also divided by the positions per
// sample, except under "valid" normalization.
COHORT_HOST_DEVICE float SoftmaxOutputNorm(const SoftmaxOutputParam& p, int64_t outer,
                                           int64_t inner, int64_t valid) {
  float norm = 1;
  if (p.normalization == LossNormalization::kBatch) norm = static_cast<float>(outer);
  if (p.normalization == LossNormalization::kValid) {
    norm = static_cast<float>(valid > 1 ? valid : 1);
  }
  if (p.multi_output && p.normalization != LossNormalization::kValid) {
    norm *= static_cast<float>(inner);
  }
  return norm;
}

COHORT_HOST_DEVICE bool SoftmaxOutputIgnored(const SoftmaxOutputParam& p, float label) {
  return p.use_ignore && label == p.ignore_label;
}

// The smoothed target of the classes other than the label: smooth_alpha / (classes - 1).
COHORT_HOST_DEVICE float SoftmaxOutputOffTarget(const SoftmaxOutputParam& p, int64_t classes) {
  return p.smooth_alpha / (classes - 1 > 1 ? static_cast<float>(classes - 1) : 1.0f);
}

// The gradient at class c of a position whose label is `label` and softmax output y:
// (y - target) · scale, target one-hot (or smoothed: 1 - smooth_alpha at the label, `off`
// (SoftmaxOutputOffTarget, computed once per call) elsewhere); 0 where the label is ignored. A
// label outside the classes matches none (the CPU refuses it before; a GPU kernel cannot).
COHORT_HOST_DEVICE float SoftmaxOutputGrad(const SoftmaxOutputParam& p, float y, float label,
                                           int64_t c, float off, float scale) {
  if (SoftmaxOutputIgnored(p, label)) return 0;
  const bool hit = c == static_cast<int64_t>(label);
  const float want = p.smooth_alpha > 0 ? (hit ? 1 - p.smooth_alpha : off) : (hit ? 1.0f : 0.0f);
  return (y - want) * scale;
}

// SoftmaxOutput's forward: y = e^(x - max) / Σ e^(x - max) over each row, summed in float
// (FastExp and the passes as softmax's, so that the loops vectorize; y may be x).
struct SoftmaxOutputRows {
  const float* x;
  float* y;
  int64_t size, stride;

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
    const float max = RowMax(lanes, xr, size, s);
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      yr[c * s] = FastExp(xr[c * s] - max);
    }
    const float sum = lanes.Sum(size, [&](int64_t c) { return yr[c * s]; });
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) yr[c * s] /= sum;
  }
};

enum class RegressionKind { kLinear, kLogistic, kMAE };

// out = data, or sigmoid(data) for the logistic kind.
COHORT_HOST_DEVICE float RegressionValue(RegressionKind kind, float x) {
  return kind == RegressionKind::kLogistic ? 1.0f / (1.0f + expf(-x)) : x;
}
// (y - label), or its sign for MAE, times scale (grad_scale over the values per sample). MAE's
// gradient where y equals the label is 0, the subgradient PyTorch's L1 loss takes; MXNet 1.9.1
// gives -scale there.
COHORT_HOST_DEVICE float RegressionGrad(RegressionKind kind, float y, float label, float scale) {
  const float d = y - label;
  const float g = kind == RegressionKind::kMAE ? (d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f) : d;
  return g * scale;
}

struct MakeLossParam {
  float grad_scale = 1.0f;
  float valid_thresh = 0.0f;
  LossNormalization normalization = LossNormalization::kNull;

  static MakeLossParam Parse(const Attrs& attrs);
};

// Whether a MakeLoss output counts for "valid" normalization.
COHORT_HOST_DEVICE bool MakeLossCounts(const MakeLossParam& p, float y) {
  return y > p.valid_thresh;
}

}  // namespace cohort::op
