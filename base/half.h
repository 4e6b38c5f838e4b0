// float16 and bfloat16 storage types with round-to-nearest-even conversions to and from float,
// on either side (the CPU kernels and the CUDA kernels of ops that take half types share them).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace cohort {

// IEEE 754 binary16 bits -> float (exact).
COHORT_HOST_DEVICE float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return BitsFloat(sign | 0x7f800000u | (mantissa << 13));
  return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float -> IEEE 754 binary16 bits, rounding to nearest even; overflow gives infinity.
COHORT_HOST_DEVICE uint16_t FloatToHalfBits(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // infinity stays infinity; NaN stays a quiet NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below 2^-14: subnormal half, in units of 2^-24 (rint: to even)
    const float scaled = BitsFloat(abs) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rintf(scaled)));
  }
  uint32_t h = ((abs >> 23) - 112) << 10 | ((abs >> 13) & 0x3ffu);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<uint16_t>(sign | h);
}

COHORT_HOST_DEVICE float BFloat16BitsToFloat(uint16_t b) {
  return BitsFloat(static_cast<uint32_t>(b) << 16);
}

COHORT_HOST_DEVICE uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// 16-bit float storage (MXNet's float16). Arithmetic goes through float.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  COHORT_HOST_DEVICE explicit float16(float f) : bits(FloatToHalfBits(f)) {}
  COHORT_HOST_DEVICE explicit operator float() const { return HalfBitsToFloat(bits); }
  COHORT_HOST_DEVICE static float16 FromBits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

// Brain float 16 storage (MXNet's bfloat16). Arithmetic goes through float.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  COHORT_HOST_DEVICE explicit bfloat16(float f) : bits(FloatToBFloat16Bits(f)) {}
  COHORT_HOST_DEVICE explicit operator float() const { return BFloat16BitsToFloat(bits); }
  COHORT_HOST_DEVICE static bfloat16 FromBits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

// The type a kernel computes an element of T in: float for the half types, T otherwise.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<float16> {
  using type = float;
};
template <>
struct ComputeTypeOf<bfloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

}  // namespace cohort
