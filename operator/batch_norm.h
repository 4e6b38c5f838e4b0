// BatchNorm over axis 1 (channels): the parameters and the per-channel and per-element math that
// the CPU kernel (batch_norm.cc) and the CUDA kernel (batch_norm.cu) share. Each side reduces a
// channel's sums its own way (rows in float, rows added in double) and hands them to these.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct BatchNormParam {
  float eps = 1e-3f;
  float momentum = 0.9f;
  bool fix_gamma = true;
  bool use_global_stats = false;
  bool output_mean_var = false;

  static BatchNormParam Parse(const Attrs& attrs);
  Attrs ToAttrs() const;
  // Whether a forward normalises by the batch's statistics (else by the moving ones).
  bool BatchStats(bool is_train) const { return is_train && !use_global_stats; }
};

// moving = moving · momentum + batch · (1 - momentum).
COHORT_HOST_DEVICE float BatchNormMoving(float moving, float batch, float momentum) {
  return moving * momentum + batch * (1 - momentum);
}

// What the third output ("var") holds, as in MXNet 1.x (whose docs call it the inverse std):
// 1 / sqrt(var + eps) of the statistics the forward normalised by. Backward reads it back.
COHORT_HOST_DEVICE float BatchNormInvStd(const BatchNormParam& p, float var) {
  return 1.0f / sqrtf(var + p.eps);
}

// y = x · scale + shift for one channel of mean mu and inverse std inv_std.
struct BatchNormAffine {
  float scale, shift;
};
COHORT_HOST_DEVICE BatchNormAffine BatchNormAffineOf(const BatchNormParam& p, float gamma,
                                                     float beta, float mu, float inv_std) {
  const float scale = (p.fix_gamma ? 1.0f : gamma) * inv_std;
  return {scale, beta - mu * scale};
}
COHORT_HOST_DEVICE float BatchNormValue(BatchNormAffine a, float x) {
  return x * a.scale + a.shift;
}

// One channel's gradients from its sums Σ dy and Σ dy (x - mean) over m elements:
// dgamma = Σ dy xhat (0 with fix_gamma), dbeta = Σ dy, and
// dx = g inv_std (dy - mean(dy) - xhat mean(dy xhat)), xhat = (x - mean) inv_std, written
// dx = a (dy - b - (x - mean) k); with global statistics the mean and variance are constants:
// dx = g inv_std dy.
struct BatchNormGrad {
  float a, b, k, dgamma, dbeta;
};
COHORT_HOST_DEVICE BatchNormGrad BatchNormGradOf(const BatchNormParam& p, bool batch_stats,
                                                 float gamma, float inv_std, double sum_dy,
                                                 double sum_dy_xmu, double m) {
  const double sum_dy_xhat = sum_dy_xmu * inv_std;
  BatchNormGrad r;
  r.dgamma = p.fix_gamma ? 0.0f : static_cast<float>(sum_dy_xhat);
  r.dbeta = static_cast<float>(sum_dy);
  r.a = (p.fix_gamma ? 1.0f : gamma) * inv_std;
  r.b = batch_stats ? static_cast<float>(sum_dy / m) : 0.0f;
  r.k = batch_stats ? static_cast<float>(sum_dy_xhat / m) * inv_std : 0.0f;
  return r;
}
COHORT_HOST_DEVICE float BatchNormInputGrad(const BatchNormGrad& g, float dy, float x, float mu) {
  return g.a * (dy - g.b - (x - mu) * g.k);
}

}  // namespace cohort::op
