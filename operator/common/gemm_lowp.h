// GEMMs of float16 and bfloat16 operands with float32 accumulation, on the CPU (Note [Low-precision
// GEMM]).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace cohort::op {

// Note [Low-precision GEMM]
// Row-major C (float32, leading dimension ldc) = op(A)·op(B) + beta·C, beta 0 or 1, for A and B
// of `dtype` (float16 or bfloat16), products summed in float32. bfloat16 runs on oneDNN's matmul
// (AVX512-BF16 instructions where the CPU has them: about twice float32's rate), one primitive
// per shape made on first use and kept by the thread, so a training step allocates nothing;
// where oneDNN has no bfloat16 matmul for the CPU, the operands are widened to float32 (said
// once). float16 is always widened: CPUs without AVX512-FP16 have no float16 arithmetic.
// The callers write C back in the operands' dtype, in the same pass over it.
void GemmLowPrecision(DType dtype, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                      int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, float beta,
                      float* c, int64_t ldc);

}  // namespace cohort::op
