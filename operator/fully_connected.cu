// FullyConnected on cuBLAS (Note [GPU kernels]). Row-major y = x·wᵀ is column-major
// yᵀ = w·xᵀ, so each product is one GEMM on the arrays as they lie: cublasSgemm for float32
// (TF32 only when asked for), cublasGemmEx with float32 compute for float16 and bfloat16 (tensor
// cores; Note [Low-precision GEMM] is the CPU's counterpart).
#include "operator/common/gpu_common.cuh"
#include "operator/fully_connected.h"

namespace cohort::op {
namespace {

cudaDataType CudaTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return CUDA_R_32F;
    case DType::kFloat16: return CUDA_R_16F;
    case DType::kBFloat16: return CUDA_R_16BF;
    default: break;
  }
  COHORT_THROW() << "FullyConnected on a GPU: " << dtype << " arrays";
  return CUDA_R_32F;  // not reached
}

// Column-major C = op(A)·op(B) + beta·C, every operand of `dtype`, products summed in float32.
void GemmOn(GpuResources::Impl& g, DType dtype, cublasOperation_t op_a, cublasOperation_t op_b,
            int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
            float beta, void* c, int64_t ldc) {
  const float one = 1;
  if (dtype == DType::kFloat32) {
    CUBLAS_CHECK(cublasSgemm(
        g.cublas, op_a, op_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &one,
        static_cast<const float*>(a), static_cast<int>(lda), static_cast<const float*>(b),
        static_cast<int>(ldb), &beta, static_cast<float*>(c), static_cast<int>(ldc)));
    return;
  }
  const cudaDataType type = CudaTypeOf(dtype);
  CUBLAS_CHECK(cublasGemmEx(g.cublas, op_a, op_b, static_cast<int>(m), static_cast<int>(n),
                            static_cast<int>(k), &one, a, type, static_cast<int>(lda), b, type,
                            static_cast<int>(ldb), &beta, c, type, static_cast<int>(ldc),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <typename T>
void AddBias(GpuResources::Impl& g, const NDArray& y, const NDArray& b, int64_t rows, int64_t h) {
  T* out = static_cast<T*>(y.raw_data());
  const T* bias = static_cast<const T*>(b.raw_data());
  ForEach(g, rows * h, [=] __device__(int64_t i) {
    out[i] = T(static_cast<float>(out[i]) + static_cast<float>(bias[i % h]));
  });
}

// A float16 or bfloat16 layer's bias gradient, summed in float32.
template <typename T>
void BiasGradLowPrecision(GpuResources::Impl& g, const NDArray& dy, const NDArray& grad,
                          int64_t rows, int64_t h, bool add) {
  const T* d = static_cast<const T*>(dy.raw_data());
  T* db = static_cast<T*>(grad.raw_data());
  ForEach(g, h, [=] __device__(int64_t j) {
    float acc = add ? static_cast<float>(db[j]) : 0.0f;
    for (int64_t r = 0; r < rows; ++r) acc += static_cast<float>(d[r * h + j]);
    db[j] = T(acc);
  });
}

}  // namespace

void FullyConnectedForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& w,
                              const NDArray* b, const NDArray& y, int64_t rows, int64_t k,
                              int64_t h) {
  GpuResources::Impl& g = Gpu(ctx);
  GemmOn(g, x.dtype(), CUBLAS_OP_T, CUBLAS_OP_N, h, rows, k, w.raw_data(), k, x.raw_data(), k, 0.0f,
         y.raw_data(), h);
  if (!b) return;
  switch (x.dtype()) {
    case DType::kFloat16: return AddBias<float16>(g, y, *b, rows, h);
    case DType::kBFloat16: return AddBias<bfloat16>(g, y, *b, rows, h);
    default: return AddBias<float>(g, y, *b, rows, h);
  }
}

void FullyConnectedBackwardGpu(const OpContext& ctx, const NDArray& dy, const NDArray& x,
                               const NDArray& w, const std::vector<GradReq>& req,
                               const std::vector<NDArray>& grad, int64_t rows, int64_t k,
                               int64_t h) {
  GpuResources::Impl& g = Gpu(ctx);
  const DType dtype = x.dtype();
  if (req[0] != GradReq::kNull) {  // dxᵀ = wᵀ·dyᵀ
    GemmOn(g, dtype, CUBLAS_OP_N, CUBLAS_OP_N, k, rows, h, w.raw_data(), k, dy.raw_data(), h,
           BetaOf(req[0]), grad[0].raw_data(), k);
  }
  if (req[1] != GradReq::kNull) {  // dWᵀ = xᵀ·dy
    GemmOn(g, dtype, CUBLAS_OP_N, CUBLAS_OP_T, k, h, rows, x.raw_data(), k, dy.raw_data(), h,
           BetaOf(req[1]), grad[1].raw_data(), k);
  }
  if (req.size() > 2 && req[2] != GradReq::kNull) {
    // One thread per hidden unit: neighbouring threads read neighbouring addresses. float32
    // layers keep the CPU's exact order (FullyConnectedBiasGrad); others sum in float32 too.
    const bool add = req[2] == GradReq::kAdd;
    if (dtype == DType::kFloat32) {
      const float* d = G(dy);
      float* db = G(grad[2]);
      ForEach(g, h, [=] __device__(int64_t j) {
        db[j] = FullyConnectedBiasGrad(d, rows, h, j, add ? db[j] : 0.0f);
      });
      return;
    }
    if (dtype == DType::kFloat16) {
      BiasGradLowPrecision<float16>(g, dy, grad[2], rows, h, add);
    } else {
      BiasGradLowPrecision<bfloat16>(g, dy, grad[2], rows, h, add);
    }
  }
}

}  // namespace cohort::op
