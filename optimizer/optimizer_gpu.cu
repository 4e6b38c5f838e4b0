// StepOnGpu: optimizer.cc's update rules, elementwise on the GPU.
#include <cuda_runtime.h>

#include "base/error_cuda.h"
#include "optimizer/optimizer_gpu.h"

namespace cohort {
namespace {

__global__ void StepKernel(GpuStepRule r, float* w, const float* g, float* s0, float* s1,
                           int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float grad = g[i] * r.rescale;
    // std::clamp's comparisons, which keep a NaN (fminf/fmaxf would replace it by -clip).
    if (r.clip > 0) grad = grad < -r.clip ? -r.clip : (r.clip < grad ? r.clip : grad);
    switch (r.kind) {
      case GpuStepRule::kSGD:
        grad += r.wd * w[i];
        if (r.momentum > 0) {
          s0[i] = r.momentum * s0[i] - r.lr * grad;
          w[i] += s0[i];
        } else {
          w[i] -= r.lr * grad;
        }
        break;
      case GpuStepRule::kNAG:
        grad += r.wd * w[i];
        s0[i] = r.momentum * s0[i] + grad;
        w[i] -= r.lr * (grad + r.momentum * s0[i]);
        break;
      case GpuStepRule::kAdam:
      case GpuStepRule::kAdamW: {
        const bool decoupled = r.kind == GpuStepRule::kAdamW;
        if (!decoupled) grad += r.wd * w[i];
        s0[i] = r.beta1 * s0[i] + r.one_minus_beta1 * grad;
        s1[i] = r.beta2 * s1[i] + r.one_minus_beta2 * grad * grad;
        if (decoupled) w[i] -= r.lr * r.wd * w[i];
        w[i] -= r.lr_t * s0[i] / (sqrtf(s1[i]) + r.epsilon);
        break;
      }
      case GpuStepRule::kRMSProp:
        grad += r.wd * w[i];
        s0[i] = (1 - r.gamma1) * grad * grad + r.gamma1 * s0[i];
        w[i] -= r.lr * grad / sqrtf(s0[i] + r.epsilon);
        break;
    }
  }
}

}  // namespace

void StepOnGpu(const GpuStepRule& rule, int device, float* w, const float* g, float* s0, float* s1,
               int64_t n) {
  if (n <= 0) return;
  int previous = 0;
  CUDA_CHECK(cudaGetDevice(&previous));
  CUDA_CHECK(cudaSetDevice(device));
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  StepKernel<<<static_cast<int>(blocks < 65536 ? blocks : 65536), kThreads>>>(rule, w, g, s0, s1,
                                                                              n);
  const cudaError_t status = cudaGetLastError();
  cudaSetDevice(previous);
  CUDA_CHECK(status);
}

}  // namespace cohort
