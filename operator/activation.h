// Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu, selu, gelu,
// prelu): the parameters, and each function with its derivative, shared by the CPU loops
// (activation.cc) and the CUDA kernels (activation.cu).
#pragma once

#include <cmath>

#include "base/host_device.h"
#include "operator/common/fast_math.h"
#include "operator/common/operator.h"

namespace cohort::op {

enum class ActType { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign, kLeaky, kElu, kSelu, kGelu };

// Activation's and LeakyReLU's attributes (LeakyReLU takes leaky, elu, selu and gelu).
struct ActivationParam {
  ActType act_type = ActType::kRelu;
  float slope = 0.25f;  // leaky and elu

  static ActivationParam ParseActivation(const Attrs& attrs);
  static ActivationParam ParseLeakyReLU(const Attrs& attrs);
  // relu, sigmoid, tanh and softrelu differentiate from their output alone.
  bool GradReadsInput() const { return act_type >= ActType::kSoftsign; }
};

constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluLambda = 1.0507009873554805f;
constexpr float kSqrtHalf = 0.70710678118654752f;    // GELU's 1/√2
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // its 1/√(2π)

// y = f(x). The act type is uniform over a loop: the CPU instantiates one loop per type, the
// GPU's switch never diverges.
COHORT_HOST_DEVICE float ActivationValue(ActType act, float x, float slope) {
  switch (act) {
    case ActType::kRelu: return x > 0 || x != x ? x : 0.0f;  // NaN stays NaN, as in MXNet
    case ActType::kSigmoid: return FastSigmoid(x);
    case ActType::kTanh: return FastTanh(x);
    case ActType::kSoftrelu: return x > 20 ? x : log1pf(expf(x));
    case ActType::kSoftsign: return x / (1 + fabsf(x));
    case ActType::kLeaky: return x > 0 ? x : slope * x;
    case ActType::kElu: return x > 0 ? x : slope * expm1f(x);
    case ActType::kSelu: return kSeluLambda * (x > 0 ? x : kSeluAlpha * expm1f(x));
    case ActType::kGelu: return 0.5f * x * (1.0f + FastErf(x * kSqrtHalf));  // MXNet's erf form
  }
  return 0;
}

// f'(x) from the input x and the output y = f(x); x is 0 for the types that read y alone.
COHORT_HOST_DEVICE float ActivationDerivative(ActType act, float x, float y, float slope) {
  switch (act) {
    case ActType::kRelu: return y != y ? y : (y > 0 ? 1.0f : 0.0f);  // NaN in, NaN out
    case ActType::kSigmoid: return y * (1 - y);
    case ActType::kTanh: return 1 - y * y;
    case ActType::kSoftrelu: return -expm1f(-y);  // sigmoid(x) = 1 - e^-y
    case ActType::kSoftsign: {
      const float d = 1 + fabsf(x);
      return 1 / (d * d);
    }
    case ActType::kLeaky: return x > 0 ? 1.0f : slope;
    case ActType::kElu: return x > 0 ? 1.0f : slope * expf(x);
    // The true derivative λ·α·eˣ for x < 0. MXNet 1.9.1 computes λ·(α + y) there, which is not
    // (x = -0.15: 1.4965 against 1.5091); Cohort does not copy the error.
    case ActType::kSelu: return kSeluLambda * (x > 0 ? 1.0f : kSeluAlpha * expf(x));
    case ActType::kGelu: {  // Φ(x) + x·φ(x): erf's e^(-x²/2) is φ's, computed once
      const float a = fabsf(x * kSqrtHalf);
      const float e = FastExp(-a * a);
      const float erf = copysignf(1.0f - ErfPoly(a) * e, x);
      return 0.5f * (1.0f + erf) + x * kInvSqrt2Pi * e;
    }
  }
  return 0;
}

// LeakyReLU's prelu: y = x > 0 ? x : γ_c·x with a learned slope γ per channel (axis 1; one
// slope for all when γ has one element). Element k of an (outer, channels, inner) array is in
// channel (k / inner) % channels.
COHORT_HOST_DEVICE int64_t PreluChannel(int64_t k, int64_t channels, int64_t inner) {
  return (k / inner) % channels;
}
COHORT_HOST_DEVICE float PreluValue(float x, float gamma) { return x > 0 ? x : gamma * x; }
COHORT_HOST_DEVICE float PreluInputGrad(float g, float x, float gamma) {
  return x > 0 ? g : gamma * g;
}
// γ_c's gradient: Σ g·x over the channel's elements with x <= 0, in (outer, inner) order.
COHORT_HOST_DEVICE float PreluGammaGrad(const float* dy, const float* x, int64_t c, int64_t outer,
                                        int64_t channels, int64_t inner) {
  float sum = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = (o * channels + c) * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const float v = x[base + i];
      sum += v > 0 ? 0.0f : dy[base + i] * v;
    }
  }
  return sum;
}

}  // namespace cohort::op
