// exp, tanh and sigmoid for float kernels, written so that the compiler vectorizes the loops
// that call them (libm's scalar tanhf alone took 40% of a LeNet training step). Vectorizing
// needs branch-free code and -fno-trapping-math (set for operator/ in its CMakeLists.txt); loops
// over them are worth compiling for AVX2/AVX-512 too (COHORT_CPU_CLONES, kernel_util.h).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace cohort::op {

// e^x with a relative error below 3e-7 (Cephes' expf polynomial after Cody-Waite reduction).
// NaN stays NaN; inputs above 88.0 saturate at about 1.6e38 (never infinite), and below -87.3
// the result is exactly 0 (never denormal). A softmax's masked entries (a logit far below the
// row's maximum) are therefore 0: clamped to e^-87.3 ≈ 1.2e-38 instead, they became denormal
// once scaled by 1/Σ, and every multiplication with them took a microcode assist (half the
// attention's softmax time in a causal GPT).
COHORT_HOST_DEVICE float FastExp(float x) {
  const bool below = x < -87.3f;  // (a NaN x passes both tests unchanged)
  x = below ? -87.3f : x;
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln 2): adding 1.5 * 2^23 rounds to nearest and leaves n in the low mantissa
  // bits, with no float-to-int conversion (which GCC vectorizes badly: that conversion made
  // tanh 5x slower than the rest of its arithmetic).
  constexpr float kRound = 12582912.0f;
  const float shifted = x * 1.44269504088896341f + kRound;
  const float nf = shifted - kRound;
  const int32_t n = static_cast<int32_t>(FloatBits(shifted) - FloatBits(kRound));
  const float r = x - nf * 0.693359375f + nf * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return below ? 0.0f : p * BitsFloat(static_cast<uint32_t>(n + 127) << 23);
}

// tanh with an absolute error below 3e-7: Cephes' odd polynomial near 0, 1 - 2/(e^2|x| + 1)
// elsewhere.
COHORT_HOST_DEVICE float FastTanh(float x) {
  float a = fabsf(x);
  a = a > 9.0f ? 9.0f : a;  // tanh(9) is 1 in float
  const float z = x * x;
  const float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                        1.33314422036e-1f) *
                           z -
                       3.33332819422e-1f) *
                          z * x +
                      x;
  const float large = copysignf(1.0f - 2.0f / (FastExp(2.0f * a) + 1.0f), x);
  return a < 0.625f ? small : large;
}

COHORT_HOST_DEVICE float FastSigmoid(float x) { return 1.0f / (1.0f + FastExp(-x)); }

// erf with an absolute error below 3e-7 (Abramowitz and Stegun 7.1.26), branch-free: for GELU,
// whose value 0.5·x·(1 + erf(x/√2)) and derivative it leaves accurate to a few units of float's
// last place (libm's erff does not vectorize: GELU took 4 ns an element).
// erf(x) = sign(x)·(1 - ErfPoly(|x|)·e^(-x²)); callers that need e^(-x²) too share it.
COHORT_HOST_DEVICE float ErfPoly(float a) {
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  return ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t +
          0.254829592f) *
         t;
}
COHORT_HOST_DEVICE float FastErf(float x) {
  const float a = fabsf(x);
  return copysignf(1.0f - ErfPoly(a) * FastExp(-a * a), x);
}

}  // namespace cohort::op
