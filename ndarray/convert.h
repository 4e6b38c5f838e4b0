// float32 <-> float16/bfloat16 conversion loops, vectorised (amp_cast and the low-precision
// kernels' widen and narrow steps, Note [Low-precision GEMM]; the ring's narrow wire, Note
// [Gradient compression]). They are compiled for AVX-512 and AVX2 too (base/cpu_clones.h): a
// kernel's own loop of T(float) conversions runs at the baseline ISA's width (SSE2), 2-4 times
// slower (Note [Low-precision write-back]).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace cohort {

// dst[i] = float(src[i]) for src of `dtype` (float16 or bfloat16).
void WidenToFloat(DType dtype, const void* src, int64_t n, float* dst);
// dst[i] = src[i] rounded to `dtype` (float16 or bfloat16; to nearest even, NaN kept).
void NarrowFromFloat(const float* src, int64_t n, DType dtype, void* dst);
// dst[i] = src[i], or with `add` (float(dst[i]) + src[i]), rounded once to `dtype` (float16 or
// bfloat16), in one pass: a low-precision op's float32 results written back, a kAdd gradient
// onto the old one (Note [Low-precision write-back]).
void StoreNarrowed(const float* src, int64_t n, DType dtype, void* dst, bool add);
// dst[i] += float(src[i]) for src of `dtype` (float16 or bfloat16), in one pass.
void AddWidened(DType dtype, const void* src, int64_t n, float* dst);
// dst[i] = float((dst[i] + float(src[i])) rounded to `dtype`): the sum, rounded, in one pass.
void AddWidenedRounded(DType dtype, const void* src, int64_t n, float* dst);
// data[i] = float(data[i] rounded to `dtype`): what a round trip through the type leaves.
void RoundThrough(DType dtype, float* data, int64_t n);

}  // namespace cohort
