// FullyConnected on cuBLAS (Note [GPU kernels]). Row-major y = x·wᵀ is column-major
// yᵀ = w·xᵀ, so each product is one cublasSgemm on the arrays as they lie.
#include "operator/common/gpu_common.cuh"
#include "operator/fully_connected.h"

namespace cohort::op {

void FullyConnectedForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& w,
                              const NDArray* b, const NDArray& y, int64_t rows, int64_t k,
                              int64_t h) {
  GpuResources::Impl& g = Gpu(ctx);
  const float one = 1, zero = 0;
  CUBLAS_CHECK(cublasSgemm(g.cublas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(h),
                           static_cast<int>(rows), static_cast<int>(k), &one, G(w),
                           static_cast<int>(k), G(x), static_cast<int>(k), &zero, G(y),
                           static_cast<int>(h)));
  if (b) {
    float* out = G(y);
    const float* bias = G(*b);
    ForEach(g, rows * h, [=] __device__(int64_t i) { out[i] += bias[i % h]; });
  }
}

void FullyConnectedBackwardGpu(const OpContext& ctx, const NDArray& dy, const NDArray& x,
                               const NDArray& w, const std::vector<GradReq>& req,
                               const std::vector<NDArray>& grad, int64_t rows, int64_t k,
                               int64_t h) {
  GpuResources::Impl& g = Gpu(ctx);
  const float one = 1;
  if (req[0] != GradReq::kNull) {  // dxᵀ = wᵀ·dyᵀ
    const float beta = BetaOf(req[0]);
    CUBLAS_CHECK(cublasSgemm(g.cublas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(k),
                             static_cast<int>(rows), static_cast<int>(h), &one, G(w),
                             static_cast<int>(k), G(dy), static_cast<int>(h), &beta, G(grad[0]),
                             static_cast<int>(k)));
  }
  if (req[1] != GradReq::kNull) {  // dWᵀ = xᵀ·dy
    const float beta = BetaOf(req[1]);
    CUBLAS_CHECK(cublasSgemm(g.cublas, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(k),
                             static_cast<int>(h), static_cast<int>(rows), &one, G(x),
                             static_cast<int>(k), G(dy), static_cast<int>(h), &beta, G(grad[1]),
                             static_cast<int>(k)));
  }
  if (req.size() > 2 && req[2] != GradReq::kNull) {
    // One thread per hidden unit: neighbouring threads read neighbouring addresses.
    const float* d = G(dy);
    float* db = G(grad[2]);
    const bool add = req[2] == GradReq::kAdd;
    ForEach(g, h, [=] __device__(int64_t j) {
      db[j] = FullyConnectedBiasGrad(d, rows, h, j, add ? db[j] : 0.0f);
    });
  }
}

}  // namespace cohort::op
