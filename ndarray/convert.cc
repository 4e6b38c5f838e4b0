// float32 <-> float16/bfloat16 conversion loops (ndarray/convert.h).
#include "ndarray/convert.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define COHORT_AVX512_BF16_NARROWING 1
#endif

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
COHORT_CPU_CLONES void NarrowBFloat16Loop(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16BitsOf(src[i]);
}

// Note [AVX512-BF16 narrowing]
// VCVTNEPS2BF16 rounds 16 floats to bfloat16 in one instruction, to nearest even, and makes a
// NaN quiet as BFloat16BitsOf does (its definition is the same), except that it flushes denormal
// floats to zero, which BFloat16BitsOf rounds to bfloat16's denormals. So where the CPU has it
// (Intel's Cooper Lake and Sapphire Rapids, AMD's Zen 4), a block of 16 with no denormal goes
// through the instruction and a block with one through the branchless loop: the same bits as
// everywhere else, checked over all 2^32 floats. 1.7x the loop's speed on 64K floats in cache
// (Intel Xeon, AVX-512: 0.22 -> 0.13 ns a value), which every bfloat16 layer's write-back, cast
// and activation pays once a value.
#ifdef COHORT_AVX512_BF16_NARROWING
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void NarrowBFloat16Avx512Bf16(
    const float* src, int64_t n, uint16_t* dst, bool add) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i min_normal = _mm512_set1_epi32(0x00800000);
  const __m512i zero = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(src + i);
    if (add) {  // dst = round(src + widen(dst))
      const __m256i old = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dst + i));
      x = _mm512_add_ps(x, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(old), 16)));
    }
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(x), abs_mask);
    const __mmask16 denormal =
        _mm512_cmplt_epu32_mask(a, min_normal) & _mm512_cmpneq_epi32_mask(a, zero);
    if (__builtin_expect(denormal != 0, 0)) {
      alignas(64) float sums[16];
      _mm512_store_ps(sums, x);
      for (int j = 0; j < 16; ++j) dst[i + j] = BFloat16BitsOf(sums[j]);
      continue;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)));
  }
  for (; i < n; ++i) {
    dst[i] = BFloat16BitsOf(add ? src[i] + FloatOfBFloat16Bits(dst[i]) : src[i]);
  }
}

bool CpuHasAvx512Bf16() {
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
}
#endif

void NarrowBFloat16(const float* src, int64_t n, uint16_t* dst) {
#ifdef COHORT_AVX512_BF16_NARROWING
  if (CpuHasAvx512Bf16()) return NarrowBFloat16Avx512Bf16(src, n, dst, false);
#endif
  NarrowBFloat16Loop(src, n, dst);
}
COHORT_CPU_CLONES void WidenFloat16(const float16* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
COHORT_CPU_CLONES void NarrowFloat16(const float* src, int64_t n, float16* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float16(src[i]);
}

COHORT_CPU_CLONES void AddNarrowedBFloat16Loop(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16BitsOf(src[i] + FloatOfBFloat16Bits(dst[i]));
}
void AddNarrowedBFloat16(const float* src, int64_t n, uint16_t* dst) {
#ifdef COHORT_AVX512_BF16_NARROWING
  if (CpuHasAvx512Bf16()) return NarrowBFloat16Avx512Bf16(src, n, dst, true);
#endif
  AddNarrowedBFloat16Loop(src, n, dst);
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
