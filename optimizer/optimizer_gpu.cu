// ApplyUpdateOnGpu: update_rule.h's ApplyUpdate, one grid-stride loop on the GPU.
#include <cuda_runtime.h>

#include "base/error_cuda.h"
#include "ndarray/cuda_device_guard.h"
#include "optimizer/update_rule.h"

namespace cohort {
namespace {

__global__ void UpdateKernel(UpdateRule r, float* w, const float* g, float* s0, float* s1,
                             int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    ApplyUpdate(r, w, g, s0, s1, i);
  }
}

}  // namespace

void ApplyUpdateOnGpu(const UpdateRule& rule, int device, float* w, const float* g, float* s0,
                      float* s1, int64_t n) {
  if (n <= 0) return;
  CudaDeviceGuard guard(device);
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  UpdateKernel<<<static_cast<int>(blocks < 65536 ? blocks : 65536), kThreads>>>(rule, w, g, s0, s1,
                                                                                n);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace cohort
