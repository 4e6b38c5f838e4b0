// dot and batch_dot on cuBLAS (Note [GPU kernels]): each of matmul.h's products is one
// strided batched GEMM (cublasSgemmStridedBatched; float16/bfloat16 through
// cublasGemmStridedBatchedEx with float32 compute). Row-major c = op(a)·op(b) is column-major cᵀ =
// op(b)ᵀ·op(a)ᵀ, so the call takes b before a, on the arrays as they lie.
#include "operator/common/gpu_common.cuh"
#include "operator/matmul.h"

namespace cohort::op {

void BatchedGemmGpu(const OpContext& ctx, const BatchedGemm& p) {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  GpuResources::Impl& g = Gpu(ctx);
  const float one = 1;
  const int lda = static_cast<int>(p.ta ? p.m : p.k);
  const int ldb = static_cast<int>(p.tb ? p.k : p.n);
  const cublasOperation_t op_b = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (p.dtype == DType::kFloat32) {
    CUBLAS_CHECK(cublasSgemmStridedBatched(
        g.cublas, op_b, op_a, static_cast<int>(p.n), static_cast<int>(p.m), static_cast<int>(p.k),
        &one, static_cast<const float*>(p.b), ldb, p.stride_b, static_cast<const float*>(p.a), lda,
        p.stride_a, &p.beta, static_cast<float*>(p.c), static_cast<int>(p.n), p.stride_c,
        static_cast<int>(p.batch)));
    return;
  }
  // float16/bfloat16 operands, float32 compute (tensor cores).
  COHORT_CHECK(p.dtype == DType::kFloat16 || p.dtype == DType::kBFloat16)
      << "dot on a GPU: " << p.dtype << " arrays";
  const cudaDataType type = p.dtype == DType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      g.cublas, op_b, op_a, static_cast<int>(p.n), static_cast<int>(p.m), static_cast<int>(p.k),
      &one, p.b, type, ldb, p.stride_b, p.a, type, lda, p.stride_a, &p.beta, p.c, type,
      static_cast<int>(p.n), p.stride_c, static_cast<int>(p.batch), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
}

}  // namespace cohort::op
