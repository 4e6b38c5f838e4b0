// Storage: one block of memory on one context, freed (or returned to its pool) when dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/context.h"

namespace cohort {

// Host memory is 64-byte aligned (cache lines, AVX-512 loads); pinned host memory comes from
// cudaHostAlloc; GPU memory from the device's caching pool (Note [Caching device allocator]).
// NDArrays share a Storage through std::shared_ptr: views keep the block alive.
class Storage {
 public:
  static constexpr size_t kHostAlignment = 64;

  // A block of `bytes` on ctx; zero bytes gives a valid Storage with a null data pointer.
  static std::shared_ptr<Storage> Alloc(size_t bytes, Context ctx);
  // A block owned elsewhere (a DLPack producer's tensor): `release` runs, instead of a free,
  // when the last array over it is dropped.
  static std::shared_ptr<Storage> Wrap(void* data, size_t bytes, Context ctx,
                                       std::function<void()> release);

  // Only Alloc makes a Storage (the key is private); public so make_shared can call it.
  struct Key {
   private:
    Key() = default;
    friend class Storage;
  };
  Storage(Key, void* data, size_t size, Context ctx) : data_(data), size_(size), ctx_(ctx) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  Context ctx() const { return ctx_; }

 private:
  void* data_;
  size_t size_;
  Context ctx_;
  std::function<void()> release_;  // set for wrapped blocks
};

// Frees the GPU blocks cached by device `device`'s pool (no-op without CUDA).
void ReleaseCachedDeviceMemory(int device);

// Host memory a process could still take (MemAvailable + SwapFree in /proc/meminfo), or -1 where
// unknown. Linux grants allocations larger than that and kills the process when it touches
// them, so a large planned allocation is checked against it first.
int64_t HostBytesAvailable();

}  // namespace cohort
