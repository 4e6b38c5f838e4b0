// device_api on the CUDA runtime.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/error_cuda.h"
#include "base/half.h"
#include "ndarray/cuda_device_guard.h"
#include "ndarray/device_api.h"
#include "ndarray/finite.h"

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

template <typename From, typename To>
__global__ void CastKernel(const From* src, To* dst, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    dst[i] = To(static_cast<float>(src[i]));
  }
}

template <typename From, typename To>
void LaunchCast(const void* src, void* dst, size_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const size_t blocks = (n + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(blocks < 4096 ? blocks : 4096);
  CastKernel<From, To>
      <<<grid, kThreads, 0, stream>>>(static_cast<const From*>(src), static_cast<To*>(dst), n);
  CUDA_CHECK(cudaGetLastError());
}

// Note [Non-finite flags on the GPU]
// One launch checks up to kFlagTable arrays, their pointers and sizes passed by value in the
// kernel's parameters (2 KB, under the classic 4 KB limit), so nothing is copied to the device
// first. Block row y reads array y with a grid-stride loop and writes its flag straight into
// mapped, page-locked host memory when the largest exponent there is all ones (several blocks
// may write the same 1). The flags live in one buffer per device that only grows, so a step
// allocates nothing.
constexpr int kFlagTable = 128;
constexpr int kFlagThreads = 256;
constexpr int kFlagBlocksPerArray = 128;  // enough to keep every SM reading a large gradient

struct FlagTable {
  const uint32_t* bits[kFlagTable];
  size_t size[kFlagTable];
};

__global__ void __launch_bounds__(kFlagThreads)
    MarkNonFiniteKernel(FlagTable table, uint8_t* flags) {
  const uint32_t* bits = table.bits[blockIdx.y];
  const size_t n = table.size[blockIdx.y];
  uint32_t largest = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    largest = max(largest, FloatExponent(bits[i]));
  }
  if (IsNonFiniteExponent(largest)) flags[blockIdx.y] = 1;
}

struct MappedFlags {
  uint8_t* host = nullptr;
  uint8_t* device = nullptr;
  size_t capacity = 0;
};

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

void CastAsync(const void* src, DType from, void* dst, DType to, size_t n, int device,
               void* stream) {
  if (n == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (from == DType::kFloat32 && to == DType::kBFloat16)
    return LaunchCast<float, bfloat16>(src, dst, n, s);
  if (from == DType::kFloat32 && to == DType::kFloat16)
    return LaunchCast<float, float16>(src, dst, n, s);
  if (from == DType::kBFloat16 && to == DType::kFloat32)
    return LaunchCast<bfloat16, float>(src, dst, n, s);
  if (from == DType::kFloat16 && to == DType::kFloat32)
    return LaunchCast<float16, float>(src, dst, n, s);
  COHORT_THROW() << "device::CastAsync: " << from << " to " << to
                 << " (float32 to and from bfloat16 or float16 only)";
}

void MarkNonFinite(int device, const float* const* arrays, const size_t* sizes, int count,
                   uint8_t* flags) {
  if (count == 0) return;
  // Per device, kept from one call to the next and freed at exit (before the runtime's own
  // teardown, which was set up first), so that compute-sanitizer's leak check finds none.
  struct Buffers {
    std::vector<MappedFlags> per_device;
    ~Buffers() {
      for (const MappedFlags& b : per_device) {
        if (b.host != nullptr) (void)cudaFreeHost(b.host);  // at exit: nothing to report to
      }
    }
  };
  static std::mutex mutex;
  static Buffers buffers;
  std::lock_guard<std::mutex> lock(mutex);
  DeviceGuard guard(device);
  if (buffers.per_device.size() <= static_cast<size_t>(device)) {
    buffers.per_device.resize(device + 1);
  }
  MappedFlags& buffer = buffers.per_device[device];
  if (buffer.capacity < static_cast<size_t>(count)) {
    if (buffer.host != nullptr) CUDA_CHECK(cudaFreeHost(buffer.host));
    buffer = {};
    void* host = nullptr;
    CUDA_CHECK(cudaHostAlloc(&host, count, cudaHostAllocMapped | cudaHostAllocPortable));
    void* on_device = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&on_device, host, 0));
    buffer = {static_cast<uint8_t*>(host), static_cast<uint8_t*>(on_device),
              static_cast<size_t>(count)};
  }
  std::memset(buffer.host, 0, count);
  for (int first = 0; first < count; first += kFlagTable) {
    const int in_table = count - first < kFlagTable ? count - first : kFlagTable;
    FlagTable table{};
    size_t largest = 0;
    for (int i = 0; i < in_table; ++i) {
      table.bits[i] = reinterpret_cast<const uint32_t*>(arrays[first + i]);
      table.size[i] = sizes[first + i];
      largest = sizes[first + i] > largest ? sizes[first + i] : largest;
    }
    const size_t blocks = (largest + kFlagThreads - 1) / kFlagThreads;
    const dim3 grid(static_cast<unsigned>(blocks < kFlagBlocksPerArray ? (blocks ? blocks : 1)
                                                                        : kFlagBlocksPerArray),
                    static_cast<unsigned>(in_table));
    // The legacy default stream: it starts after the work queued on the blocking streams
    // (executors, kvstores) that wrote the arrays, as a cudaMemcpy of them would.
    MarkNonFiniteKernel<<<grid, kFlagThreads, 0, cudaStreamLegacy>>>(table,
                                                                      buffer.device + first);
    CUDA_CHECK(cudaGetLastError());
  }
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  std::memcpy(flags, buffer.host, count);
}

}  // namespace cohort::device
