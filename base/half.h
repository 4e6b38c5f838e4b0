// float16 and bfloat16 storage types with round-to-nearest-even conversions to and from float.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace cohort {

// IEEE 754 binary16 bits -> float (exact).
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float -> IEEE 754 binary16 bits, rounding to nearest even; overflow gives infinity.
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // infinity stays infinity; NaN stays a quiet NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below 2^-14: subnormal half, in units of 2^-24
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t h = ((abs >> 23) - 112) << 10 | ((abs >> 13) & 0x3ffu);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<uint16_t>(sign | h);
}

inline float BFloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// 16-bit float storage (MXNet's float16). Arithmetic goes through float.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(FloatToHalfBits(f)) {}
  explicit operator float() const { return HalfBitsToFloat(bits); }
  static float16 FromBits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

// Brain float 16 storage (MXNet's bfloat16). Arithmetic goes through float.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(FloatToBFloat16Bits(f)) {}
  explicit operator float() const { return BFloat16BitsToFloat(bits); }
  static bfloat16 FromBits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

}  // namespace cohort
