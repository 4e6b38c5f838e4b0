// CachingPool: keeps freed blocks for reuse so a training loop allocates nothing from the driver.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace cohort {

// Note [Caching device allocator]
// cudaMalloc and cudaFree synchronise the device and cost tens of microseconds, so GPU memory is
// taken from a per-device CachingPool: sizes are rounded (RoundAllocSize) so that blocks fit
// again next step, a freed block goes to a free list keyed by its rounded size, and the next
// request of that size takes it back without calling the driver. After the first training step
// every allocation is a hit. When the driver runs out of memory the pool returns every cached
// block and tries once more before it reports the failure. The pool itself is plain C++ over two
// callbacks, so its logic is tested on the CPU.
// The pool knows no streams (PyTorch's records one per block): a freed block may be handed out
// at once, so whoever frees device memory must know that no queued work still uses it, or that
// whatever takes the block next is ordered after that work. Today a free follows a wait (the
// executor's stream, a bucket's NCCL work, the staging events, a synchronous copy), or its block
// can only go to work queued after it on the legacy stream or a blocking one (optimizer states
// replaced on load); a temporary freed right after an asynchronous copy, and taken by a
// non-blocking stream, would not be safe.
class CachingPool {
 public:
  // raw_alloc returns nullptr when out of memory; raw_free releases what raw_alloc returned.
  using RawAlloc = std::function<void*(size_t bytes)>;
  using RawFree = std::function<void(void* ptr)>;

  struct Stats {
    size_t live_bytes = 0;    // handed out and not yet freed (rounded sizes)
    size_t cached_bytes = 0;  // held in free lists
    size_t raw_allocs = 0;    // calls to raw_alloc
    size_t hits = 0;          // requests served from a free list
  };

  CachingPool(RawAlloc raw_alloc, RawFree raw_free);
  ~CachingPool();
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;

  // A block of at least `bytes`; throws cohort::Error when even an emptied cache cannot serve it.
  void* Alloc(size_t bytes);
  // Gives back a block from Alloc; `bytes` is the size that was asked for.
  void Free(void* ptr, size_t bytes);
  // Returns every cached block to raw_free.
  void ReleaseCached();
  Stats stats() const;

 private:
  void ReleaseCachedLocked();

  RawAlloc raw_alloc_;
  RawFree raw_free_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_lists_;
  Stats stats_;
};

// Requests below 1 MiB round up to a power of two (at least 512 bytes); larger ones to a
// multiple of 2 MiB, which bounds the waste to 2 MiB per block while keeping sizes reusable.
size_t RoundAllocSize(size_t bytes);

}  // namespace cohort
