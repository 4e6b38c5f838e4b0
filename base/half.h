// float16 and bfloat16 storage types with round-to-nearest-even conversions to and from float,
// on either side (the CPU kernels and the CUDA kernels of ops that take half types share them).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace cohort {

// Note [Branchless half conversions]
// The conversions below have no branches (selects instead), so that a kernel's loop over an
// array vectorises; with branches, each float16 element took a scalar call (elemwise_add of 1M
// float16 values: 14.4 ms against float32's 0.53 on the Intel Xeon). They follow Fabian
// Giesen's half_to_float_fast4 and float_to_half_fast3_rtne: integer rebiasing, and float
// additions of normal numbers for the subnormal halves (exact, and unaffected by flush-to-zero).
// tests/base/dtype_test.cc checks them against the definitions over every half and a sweep of
// floats.

// IEEE 754 binary16 bits -> float (exact).
COHORT_HOST_DEVICE float HalfBitsToFloat(uint16_t h) {
  constexpr uint32_t kExponent = 0x7c00u << 13;  // the half's exponent bits, moved to a float's
  const uint32_t bits = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exponent = bits & kExponent;
  const uint32_t normal = bits + ((127u - 15u) << 23);
  const uint32_t inf_nan = normal + ((128u - 16u) << 23);  // exponent all ones, mantissa kept
  // Zero or subnormal: mantissa · 2^-24, as (2^-14 + mantissa · 2^-24) - 2^-14.
  const uint32_t subnormal = FloatBits(BitsFloat(normal + (1u << 23)) - BitsFloat(113u << 23));
  const uint32_t magnitude = exponent == kExponent ? inf_nan : (exponent == 0 ? subnormal : normal);
  return BitsFloat(magnitude | (static_cast<uint32_t>(h) & 0x8000u) << 16);
}

// float -> IEEE 754 binary16 bits, rounding to nearest even; overflow gives infinity, a NaN
// stays a quiet NaN.
COHORT_HOST_DEVICE uint16_t FloatToHalfBits(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  // 2^16 and above (after rounding, past 65504), infinity or NaN.
  const uint32_t huge = abs > 0x7f800000u ? 0x7e00u : 0x7c00u;
  // Below 2^-14: adding 0.5 leaves the value in units of 2^-24 at the bottom of the mantissa,
  // rounded to nearest even by the addition.
  constexpr uint32_t kHalf = 126u << 23;  // 0.5f
  const uint32_t subnormal = FloatBits(BitsFloat(abs) + BitsFloat(kHalf)) - kHalf;
  // Normal: the exponent rebiased, the dropped 13 bits rounded to nearest even (a carry may
  // reach the exponent, and from 65520 on, infinity).
  const uint32_t normal = (abs + ((15u - 127u) << 23) + 0xfffu + ((abs >> 13) & 1u)) >> 13;
  const uint32_t h = abs >= (143u << 23) ? huge : (abs < (113u << 23) ? subnormal : normal);
  return static_cast<uint16_t>(sign | h);
}

COHORT_HOST_DEVICE float BFloat16BitsToFloat(uint16_t b) {
  return BitsFloat(static_cast<uint32_t>(b) << 16);
}

// Rounding to nearest even; a NaN stays a quiet NaN (Note [Branchless half conversions]).
COHORT_HOST_DEVICE uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
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

// float(T(f)): f rounded to T and widened back. For bfloat16 in 32-bit steps (the bits
// FloatToBFloat16Bits keeps, the rest cleared), so that a loop of it vectorises at a float
// loop's full width: through 16-bit lanes GCC took half of it (AVX2's, for vpblendvb).
template <typename T>
COHORT_HOST_DEVICE float RoundedThrough(float f) {
  return static_cast<float>(T(f));
}
template <>
COHORT_HOST_DEVICE float RoundedThrough<bfloat16>(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
  const uint32_t nan = (x & 0xffff0000u) | 0x400000u;
  return BitsFloat((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

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
