// Shared by the CUDA kernels (operator/*.cu): GpuResources::Impl, cached cuDNN plans, launch
// helpers and typed device access. Only nvcc sees this header.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "base/error_cuda.h"  // after cublas/cudnn: defines CUBLAS_CHECK and CUDNN_CHECK
#include "ndarray/storage.h"
#include "operator/common/gpu_resources.h"
#include "operator/common/operator.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

// Descriptors and algorithm choices that depend only on an op and its input shape: made on the
// first step, reused afterwards, so a training step creates no cuDNN descriptors.
struct GpuPlan {
  virtual ~GpuPlan() = default;
};

struct GpuPlanKey {
  uint64_t op;  // Operator::id(): an address could be reused by a later operator
  Shape shape;
  int tag;  // one op may keep several plans (e.g. forward and backward of different shapes)
  bool operator==(const GpuPlanKey&) const = default;
};
struct GpuPlanKeyHash {
  size_t operator()(const GpuPlanKey& k) const {
    size_t h = std::hash<uint64_t>()(k.op) ^ (static_cast<size_t>(k.tag) * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < k.shape.ndim(); ++i) h = h * 1000003u ^ static_cast<size_t>(k.shape[i]);
    return h;
  }
};

struct GpuResources::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  bool tf32 = false;  // COHORT_GPU_TF32: convolutions may use TF32 math (cuDNN's default math)
  bool deterministic = true;  // COHORT_GPU_DETERMINISTIC: convolution algorithms of fixed bits
  std::shared_ptr<Storage> workspace;
  std::unordered_map<GpuPlanKey, std::unique_ptr<GpuPlan>, GpuPlanKeyHash> plans;

  // Device scratch of at least `bytes`, valid until the next call (one stream uses it, in
  // order). It grows on the first steps and is then reused.
  void* Workspace(size_t bytes);

  // The plan of operator `op` (its id()) for input shape `shape`: make() builds it the first
  // time.
  template <typename Plan, typename Make>
  Plan& CachedPlan(uint64_t op, const Shape& shape, int tag, Make make) {
    auto [it, fresh] = plans.try_emplace(GpuPlanKey{op, shape, tag});
    if (fresh) {
      try {
        it->second = make();
      } catch (...) {
        plans.erase(it);
        throw;
      }
    }
    return static_cast<Plan&>(*it->second);
  }
};

// The GPU resources of the executor running this op.
inline GpuResources::Impl& Gpu(const OpContext& ctx) {
  COHORT_CHECK(ctx.gpu != nullptr) << "a GPU kernel ran without the executor's GpuResources";
  return ctx.gpu->impl();
}

// The float32 device data of an array used by a GPU kernel.
inline float* G(const NDArray& a) {
  COHORT_CHECK(a.dtype() == DType::kFloat32 && a.ctx().is_gpu())
      << "GPU kernels take float32 arrays on a GPU, got " << a.dtype() << " on " << a.ctx();
  return static_cast<float*>(a.raw_data());
}

// Grid-stride loops: enough blocks to fill the GPU, each thread taking every stride-th element.
constexpr int kCudaThreads = 256;
inline int CudaBlocks(int64_t n) {
  const int64_t blocks = (n + kCudaThreads - 1) / kCudaThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65536 ? 65536 : blocks));
}
#define COHORT_CUDA_LOOP(i, n)                                                           \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename F>
__global__ void ForEachKernel(int64_t n, F f) {
  COHORT_CUDA_LOOP(i, n) f(i);
}

// Runs f(i) for i in [0, n) on the executor's stream; f is a __device__ lambda.
template <typename F>
void ForEach(const GpuResources::Impl& g, int64_t n, F f) {
  if (n <= 0) return;
  ForEachKernel<<<CudaBlocks(n), kCudaThreads, 0, g.stream>>>(n, f);
  CUDA_CHECK(cudaGetLastError());
}

// Copies `bytes` between device buffers on the executor's stream (identity ops, Concat).
inline void CopyOnStream(const GpuResources::Impl& g, void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g.stream));
}

// A 4-d NCHW float tensor descriptor (cuDNN wants at least 4 dimensions).
inline void SetTensor4d(cudnnTensorDescriptor_t d, int64_t n, int64_t c, int64_t h, int64_t w,
                        cudnnDataType_t type = CUDNN_DATA_FLOAT) {
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, type, static_cast<int>(n),
                                         static_cast<int>(c), static_cast<int>(h),
                                         static_cast<int>(w)));
}

// cuDNN's blend factors for a grad_req: beta 0 overwrites, 1 accumulates.
inline float BetaOf(GradReq req) { return req == GradReq::kAdd ? 1.0f : 0.0f; }

}  // namespace cohort::op
