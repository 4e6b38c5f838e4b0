// GEMMs of float16 and bfloat16 operands with float32 accumulation, on the CPU (Note [Low-precision
// GEMM]).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace cohort {
class NDArray;
}

namespace cohort::op {

struct OpContext;

// Note [Low-precision GEMM]
// Row-major C (float32, leading dimension ldc) = op(A)·op(B) + beta·C, beta 0 or 1, for A and B
// of `dtype` (float16 or bfloat16), products summed in float32. bfloat16 runs on oneDNN's matmul
// where its bfloat16 products outpace float32's: on CPUs with AMX, and on AMD's with AVX512-BF16
// (an EPYC of Zen 4: FullyConnected 1.5-1.9x float32 on one core), one primitive per shape made
// on first use and kept by the thread, so a training step allocates nothing. Elsewhere the
// operands are widened to float32 and multiplied by Gemm: an Intel Xeon with AVX512-BF16 and no
// AMX (a virtual machine's) runs VDPBF16PS at half the rate of its float32 FMAs (one core, 12
// independent accumulators: 84 against 171 GFLOP/s), and oneDNN's
// bfloat16 matmul took twice float32's time there (op_bench FullyConnected 2048x128 -> 512:
// 4.3 against 2.0 ms forward); a CPU without AVX-512 falls under the rule too, and one where
// oneDNN makes no bfloat16 matmul though the rule asks for it is widened as well (said once).
// float16 is always widened: CPUs without AVX512-FP16 have no float16 arithmetic.
// The rule depends on the CPU only, so a machine's results are the same from run to run.
// FullyConnected's chunks share its weight (and in backward the output gradient and data): each
// chunk's call widened all of a shared operand again, so the op widens each once for all of them
// (LowPrecisionOperandOf): bfloat16 op_bench FullyConnected 4096x128 -> 512 on the Xeon, forward
// 5.7-5.8 -> 5.5 ms, backward 10.0-10.3 -> 9.4 ms; the GPT's bfloat16 step (2 devices) 14,049-
// 16,909 -> 17,288-18,182 tokens/s in alternating runs. (FullyConnected now widens its data and
// output gradient a block of rows at a time instead: Note [Low-precision row blocks].)
// The callers write C back in the operands' dtype, in the same pass over it.
// Whether bfloat16 products run on oneDNN's bfloat16 matmul (else widened): the rule above, from
// the CPU's vendor and features.
bool BFloat16MatmulPays(bool amd, bool avx512_bf16, bool amx_bf16);
// The rule for this CPU (Convolution's bfloat16 layers follow it too, Note [bfloat16
// convolution]).
bool BFloat16ProductsPayHere();
// Whether products of `dtype` operands (float16 or bfloat16) are widened to float32 here:
// float16 always, bfloat16 where its products do not pay.
bool ProductsWidenHere(DType dtype);

void GemmLowPrecision(DType dtype, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                      int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, float beta,
                      float* c, int64_t ldc);

// An operand that an op's chunks share (FullyConnected's weight, Convolution's operands):
// where GemmLowPrecision would widen it in every chunk's call (float16; bfloat16 where its
// products do not pay), LowPrecisionOperandOf widens all of it once, in parallel, into the
// calling thread's scratch `slot` (4 to 6), and the chunks multiply those floats.
struct LowPrecisionOperand {
  DType dtype;
  const void* data;      // the array's own values
  const float* widened;  // the same widened, or null
  // The operand from element `offset` on.
  LowPrecisionOperand At(int64_t offset) const {
    return {dtype, static_cast<const char*>(data) + offset * 2,
            widened ? widened + offset : nullptr};
  }
};
LowPrecisionOperand LowPrecisionOperandOf(const OpContext& ctx, const NDArray& a, int slot);
// GemmLowPrecision of two such operands: Gemm on their floats when both were widened.
void GemmLowPrecision(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                      const LowPrecisionOperand& a, int64_t lda, const LowPrecisionOperand& b,
                      int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace cohort::op
