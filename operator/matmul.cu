// dot and batch_dot on cuBLAS (Note [GPU kernels]): each of matmul.h's products is one
// cublasSgemmStridedBatched. Row-major c = op(a)·op(b) is column-major cᵀ = op(b)ᵀ·op(a)ᵀ, so
// the call takes b before a, on the arrays as they lie.
#include "operator/common/gpu_common.cuh"
#include "operator/matmul.h"

namespace cohort::op {

void BatchedGemmGpu(const OpContext& ctx, const BatchedGemm& p) {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  GpuResources::Impl& g = Gpu(ctx);
  const float one = 1;
  const int lda = static_cast<int>(p.ta ? p.m : p.k);
  const int ldb = static_cast<int>(p.tb ? p.k : p.n);
  CUBLAS_CHECK(cublasSgemmStridedBatched(
      g.cublas, p.tb ? CUBLAS_OP_T : CUBLAS_OP_N, p.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(p.n), static_cast<int>(p.m), static_cast<int>(p.k), &one, p.b, ldb,
      p.stride_b, p.a, lda, p.stride_a, &p.beta, p.c, static_cast<int>(p.n), p.stride_c,
      static_cast<int>(p.batch)));
}

}  // namespace cohort::op
