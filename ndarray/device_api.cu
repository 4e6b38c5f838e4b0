// device_api on the CUDA runtime.
#include <cstdint>
#include <cstring>

#include "base/error_cuda.h"
#include "ndarray/cuda_device_guard.h"
#include "ndarray/device_api.h"

namespace cohort::device {
namespace {

using DeviceGuard = CudaDeviceGuard;

template <typename T>
__global__ void FillKernel(T* dst, T value, size_t count) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

template <typename T>
void LaunchFill(void* dst, const void* pattern, size_t count) {
  T value;
  std::memcpy(&value, pattern, sizeof(T));
  constexpr int kThreads = 256;
  const size_t blocks = (count + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(blocks < 65535 ? blocks : 65535);
  FillKernel<T><<<grid, kThreads>>>(static_cast<T*>(dst), value, count);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

bool BuiltWithCuda() { return true; }

int Count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: clear the sticky error and report none
    return 0;
  }
  return count;
}

void* Malloc(int device, size_t bytes) {
  DeviceGuard guard(device);
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  CUDA_CHECK(status);
  return ptr;
}

void Free(int device, void* ptr) {
  DeviceGuard guard(device);
  CUDA_CHECK(cudaFree(ptr));
}

void* MallocPinned(size_t bytes) {
  void* ptr = nullptr;
  CUDA_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable));
  return ptr;
}

void FreePinned(void* ptr) { CUDA_CHECK(cudaFreeHost(ptr)); }

void Copy(void* dst, Context dst_ctx, const void* src, Context src_ctx, size_t bytes) {
  if (bytes == 0) return;
  if (dst_ctx.is_gpu() && src_ctx.is_gpu() && dst_ctx.id != src_ctx.id) {
    CUDA_CHECK(cudaMemcpyPeer(dst, dst_ctx.id, src, src_ctx.id, bytes));
    return;
  }
  DeviceGuard guard(dst_ctx.is_gpu() ? dst_ctx.id : src_ctx.id);
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

void Fill(void* dst, int device, const void* pattern, size_t elem_size, size_t count) {
  if (count == 0) return;
  DeviceGuard guard(device);
  switch (elem_size) {
    case 1: LaunchFill<uint8_t>(dst, pattern, count); return;
    case 2: LaunchFill<uint16_t>(dst, pattern, count); return;
    case 4: LaunchFill<uint32_t>(dst, pattern, count); return;
    case 8: LaunchFill<uint64_t>(dst, pattern, count); return;
  }
  COHORT_THROW() << "device::Fill: element size " << elem_size << " is not 1, 2, 4 or 8";
}

}  // namespace cohort::device
