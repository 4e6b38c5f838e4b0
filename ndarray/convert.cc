// float32 <-> float16/bfloat16 conversion loops (ndarray/convert.h).
#include "ndarray/convert.h"

#include <cstring>

#include "base/cpu_clones.h"
#include "base/error.h"
#include "base/half.h"

namespace cohort {
namespace {

// base/half.h's, branchless so that the loops vectorise (Note [Branchless half conversions]).
inline uint16_t BFloat16BitsOf(float f) { return FloatToBFloat16Bits(f); }

inline float FloatOfBFloat16Bits(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

COHORT_CPU_CLONES void WidenBFloat16(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = FloatOfBFloat16Bits(src[i]);
}
COHORT_CPU_CLONES void NarrowBFloat16(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16BitsOf(src[i]);
}
COHORT_CPU_CLONES void WidenFloat16(const float16* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
COHORT_CPU_CLONES void NarrowFloat16(const float* src, int64_t n, float16* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float16(src[i]);
}

COHORT_CPU_CLONES void AddNarrowedBFloat16(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16BitsOf(src[i] + FloatOfBFloat16Bits(dst[i]));
}
COHORT_CPU_CLONES void AddNarrowedFloat16(const float* src, int64_t n, float16* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float16(src[i] + static_cast<float>(dst[i]));
}

COHORT_CPU_CLONES void AddWidenedBFloat16(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] += FloatOfBFloat16Bits(src[i]);
}
COHORT_CPU_CLONES void AddWidenedFloat16(const float16* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] += static_cast<float>(src[i]);
}
COHORT_CPU_CLONES void AddWidenedRoundedBFloat16(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = FloatOfBFloat16Bits(BFloat16BitsOf(dst[i] + FloatOfBFloat16Bits(src[i])));
  }
}
COHORT_CPU_CLONES void AddWidenedRoundedFloat16(const float16* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<float>(float16(dst[i] + static_cast<float>(src[i])));
  }
}
COHORT_CPU_CLONES void RoundThroughBFloat16(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = FloatOfBFloat16Bits(BFloat16BitsOf(data[i]));
}
COHORT_CPU_CLONES void RoundThroughFloat16(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(float16(data[i]));
}

}  // namespace

void AddWidened(DType dtype, const void* src, int64_t n, float* dst) {
  if (dtype == DType::kBFloat16)
    return AddWidenedBFloat16(static_cast<const uint16_t*>(src), n, dst);
  COHORT_CHECK(dtype == DType::kFloat16) << "AddWidened: " << dtype;
  AddWidenedFloat16(static_cast<const float16*>(src), n, dst);
}

void AddWidenedRounded(DType dtype, const void* src, int64_t n, float* dst) {
  if (dtype == DType::kBFloat16) {
    return AddWidenedRoundedBFloat16(static_cast<const uint16_t*>(src), n, dst);
  }
  COHORT_CHECK(dtype == DType::kFloat16) << "AddWidenedRounded: " << dtype;
  AddWidenedRoundedFloat16(static_cast<const float16*>(src), n, dst);
}

void RoundThrough(DType dtype, float* data, int64_t n) {
  if (dtype == DType::kBFloat16) return RoundThroughBFloat16(data, n);
  COHORT_CHECK(dtype == DType::kFloat16) << "RoundThrough: " << dtype;
  RoundThroughFloat16(data, n);
}

void WidenToFloat(DType dtype, const void* src, int64_t n, float* dst) {
  if (dtype == DType::kBFloat16) return WidenBFloat16(static_cast<const uint16_t*>(src), n, dst);
  COHORT_CHECK(dtype == DType::kFloat16) << "WidenToFloat: " << dtype;
  WidenFloat16(static_cast<const float16*>(src), n, dst);
}

void NarrowFromFloat(const float* src, int64_t n, DType dtype, void* dst) {
  if (dtype == DType::kBFloat16) return NarrowBFloat16(src, n, static_cast<uint16_t*>(dst));
  COHORT_CHECK(dtype == DType::kFloat16) << "NarrowFromFloat: " << dtype;
  NarrowFloat16(src, n, static_cast<float16*>(dst));
}

void StoreNarrowed(const float* src, int64_t n, DType dtype, void* dst, bool add) {
  if (!add) return NarrowFromFloat(src, n, dtype, dst);
  if (dtype == DType::kBFloat16) return AddNarrowedBFloat16(src, n, static_cast<uint16_t*>(dst));
  COHORT_CHECK(dtype == DType::kFloat16) << "StoreNarrowed: " << dtype;
  AddNarrowedFloat16(src, n, static_cast<float16*>(dst));
}

}  // namespace cohort
