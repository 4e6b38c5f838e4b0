// float32 <-> float16/bfloat16 conversion loops, vectorised (amp_cast and the low-precision
// kernels' widen and narrow steps; Note [Low-precision GEMM]).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace cohort::op {

// dst[i] = float(src[i]) for src of `dtype` (float16 or bfloat16).
void WidenToFloat(DType dtype, const void* src, int64_t n, float* dst);
// dst[i] = src[i] rounded to `dtype` (float16 or bfloat16; to nearest even, NaN kept).
void NarrowFromFloat(const float* src, int64_t n, DType dtype, void* dst);

}  // namespace cohort::op
