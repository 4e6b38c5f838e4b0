// Storage allocation per context.
#include "ndarray/storage.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <mutex>
#include <vector>

#include "base/env.h"
#include "base/error.h"
#include "ndarray/caching_pool.h"
#include "ndarray/device_api.h"

namespace cohort {
namespace {

// One caching pool per GPU, made on first use (Note [Caching device allocator]).
CachingPool& DevicePool(int device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<CachingPool>> pools;
  std::lock_guard<std::mutex> lock(mutex);
  if (pools.empty()) pools.resize(device::Count());
  COHORT_CHECK(device >= 0 && device < static_cast<int>(pools.size()))
      << "gpu:" << device << " does not exist: this process sees " << pools.size() << " GPU(s)";
  if (!pools[device]) {
    pools[device] = std::make_unique<CachingPool>(
        [device](size_t bytes) { return device::Malloc(device, bytes); },
        [device](void* ptr) { device::Free(device, ptr); });
  }
  return *pools[device];
}

}  // namespace

int64_t HostBytesAvailable() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0, available = -1, swap = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") available = kb * 1024;
    if (key == "SwapFree:") swap = kb * 1024;
    meminfo.ignore(64, '\n');
  }
  return available < 0 ? -1 : available + swap;
}

std::shared_ptr<Storage> Storage::Alloc(size_t bytes, Context ctx) {
  void* data = nullptr;
  if (bytes > 0) {
    switch (ctx.type) {
      case DeviceType::kCPU: {
        const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
        data = std::aligned_alloc(kHostAlignment, rounded);
        if (data == nullptr) {
          throw OutOfMemoryError("out of host memory: cannot allocate " + std::to_string(bytes) +
                                     " bytes",
                                 __FILE__, __LINE__);
        }
        break;
      }
      case DeviceType::kCPUPinned: data = device::MallocPinned(bytes); break;
      case DeviceType::kGPU:
        if (Env().gpu_mem_pool) {
          data = DevicePool(ctx.id).Alloc(bytes);
          break;
        }
        COHORT_CHECK(ctx.id >= 0 && ctx.id < device::Count())
            << ctx << " does not exist: this process sees " << device::Count() << " GPU(s)";
        data = device::Malloc(ctx.id, bytes);
        if (data == nullptr) {
          throw OutOfMemoryError("out of memory on " + ctx.ToString() + ": cannot allocate " +
                                     std::to_string(bytes) + " bytes",
                                 __FILE__, __LINE__);
        }
        break;
    }
  }
  return std::make_shared<Storage>(Key(), data, bytes, ctx);
}

std::shared_ptr<Storage> Storage::Wrap(void* data, size_t bytes, Context ctx,
                                       std::function<void()> release) {
  auto storage = std::make_shared<Storage>(Key(), data, bytes, ctx);
  storage->release_ = std::move(release);
  return storage;
}

Storage::~Storage() {
  if (release_) {
    try {
      release_();
    } catch (...) {  // a destructor must not throw
    }
    return;
  }
  if (!data_) return;
  try {
    switch (ctx_.type) {
      case DeviceType::kCPU: std::free(data_); break;
      case DeviceType::kCPUPinned: device::FreePinned(data_); break;
      case DeviceType::kGPU:
        if (Env().gpu_mem_pool) {
          DevicePool(ctx_.id).Free(data_, size_);
        } else {
          device::Free(ctx_.id, data_);
        }
        break;
    }
  } catch (const Error&) {
    // A destructor must not throw; a failing free (driver shutting down) only leaks.
  }
}

void ReleaseCachedDeviceMemory(int device) {
  if (device::Count() > device) DevicePool(device).ReleaseCached();
}

}  // namespace cohort
