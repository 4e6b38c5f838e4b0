// The optimizers' updates on the GPU: update_rule.h's element functions, one grid-stride loop a
// kind, and LAMB's step (phase 1, the two norms, phase 2), all on the default stream.
#include <cuda_runtime.h>

#include <cmath>

#include "base/dtype.h"
#include "base/error_cuda.h"
#include "ndarray/cuda_device_guard.h"
#include "optimizer/update_rule.h"

namespace cohort {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65536 ? blocks : 65536);
}

template <UpdateKind K>
__global__ void UpdateKernel(UpdateParams p, float* w, const float* g, float* s0, float* s1,
                             float* s2, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    UpdateElementOf<K, float>(p, i, w, g, s0, s1, s2, w);
  }
}

__global__ void LambPhase1Kernel(LambRule r, const float* w, const float* g, float* mean,
                                 float* var, float* direction, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    LambPhase1Element(r, i, w, g, mean, var, direction);
  }
}

// sums[0] += Σ a², sums[1] += Σ b², in double (one atomic a block).
__global__ void SquaredNormsKernel(const float* a, const float* b, double* sums, int64_t n) {
  __shared__ double block_a[kThreads], block_b[kThreads];
  double sa = 0, sb = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    sa += static_cast<double>(a[i]) * a[i];
    sb += static_cast<double>(b[i]) * b[i];
  }
  block_a[threadIdx.x] = sa;
  block_b[threadIdx.x] = sb;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      block_a[threadIdx.x] += block_a[threadIdx.x + half];
      block_b[threadIdx.x] += block_b[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], block_a[0]);
    atomicAdd(&sums[1], block_b[0]);
  }
}

__global__ void LambPhase2Kernel(LambRule r, float* w, const float* direction, const double* sums,
                                 int64_t n) {
  const float r1 = static_cast<float>(sqrt(sums[0])), r2 = static_cast<float>(sqrt(sums[1]));
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    LambPhase2Element(r, i, w, direction, &r1, &r2, w);
  }
}

// Note [Multi-precision weights]: a weight's master copy and its half-precision values.
template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = To(static_cast<float>(x[i]));
  }
}

template <typename From>
void LaunchCast(const From* x, DType to, void* y, int64_t n) {
  if (to == DType::kFloat16) {
    CastKernel<<<Blocks(n), kThreads>>>(x, static_cast<float16*>(y), n);
  } else if (to == DType::kBFloat16) {
    CastKernel<<<Blocks(n), kThreads>>>(x, static_cast<bfloat16*>(y), n);
  } else {
    COHORT_CHECK(to == DType::kFloat32) << "CastOnGpu: to " << to;
    CastKernel<<<Blocks(n), kThreads>>>(x, static_cast<float*>(y), n);
  }
}

}  // namespace

void CastOnGpu(int device, const void* src, DType from, void* dst, DType to, int64_t n) {
  if (n <= 0) return;
  CudaDeviceGuard guard(device);
  if (from == DType::kFloat16) {
    LaunchCast(static_cast<const float16*>(src), to, dst, n);
  } else if (from == DType::kBFloat16) {
    LaunchCast(static_cast<const bfloat16*>(src), to, dst, n);
  } else {
    COHORT_CHECK(from == DType::kFloat32) << "CastOnGpu: from " << from;
    LaunchCast(static_cast<const float*>(src), to, dst, n);
  }
  CUDA_CHECK(cudaGetLastError());
}

void ApplyUpdateOnGpu(const UpdateParams& p, int device, float* w, const float* g, float* s0,
                      float* s1, float* s2, int64_t n) {
  if (n <= 0) return;
  CudaDeviceGuard guard(device);
  DispatchUpdateKind(p.kind, [&](auto kind) {
    UpdateKernel<decltype(kind)::value><<<Blocks(n), kThreads>>>(p, w, g, s0, s1, s2, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void LambStepOnGpu(const LambRule& rule, int device, float* w, const float* g, float* mean,
                   float* var, float* direction, double* sums, int64_t n) {
  if (n <= 0) return;
  CudaDeviceGuard guard(device);
  LambPhase1Kernel<<<Blocks(n), kThreads>>>(rule, w, g, mean, var, direction, n);
  CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * sizeof(double), 0));
  SquaredNormsKernel<<<Blocks(n) < 1024 ? Blocks(n) : 1024, kThreads>>>(w, direction, sums, n);
  LambPhase2Kernel<<<Blocks(n), kThreads>>>(rule, w, direction, sums, n);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace cohort
