// Whether float32 values are finite, read from their bits: NaN and the infinities, and only
// they, have every exponent bit set. The host check (AllFinite, kvstore.cc) and the GPU's
// (device::MarkNonFinite, device_api.cu) both fold an array into the largest exponent it holds
// (a max, exact in any order, which vectorizes where a float sum would not) and test that, so
// the CPU tests execute the GPU's test too.
#pragma once

#include <cstdint>

#include "base/host_device.h"

namespace cohort {

inline constexpr uint32_t kFloatExponentBits = 0x7f800000u;

COHORT_HOST_DEVICE uint32_t FloatExponent(uint32_t bits) { return bits & kFloatExponentBits; }
COHORT_HOST_DEVICE bool IsNonFiniteExponent(uint32_t exponent) {
  return exponent == kFloatExponentBits;
}

}  // namespace cohort
