// CachingPool.
#include "ndarray/caching_pool.h"

#include <bit>

#include "base/error.h"

namespace cohort {

size_t RoundAllocSize(size_t bytes) {
  constexpr size_t kMinBlock = 512;
  constexpr size_t kSmallLimit = size_t{1} << 20;
  constexpr size_t kLargeStep = size_t{2} << 20;
  if (bytes <= kMinBlock) return kMinBlock;
  if (bytes <= kSmallLimit) return std::bit_ceil(bytes);
  return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
}

CachingPool::CachingPool(RawAlloc raw_alloc, RawFree raw_free)
    : raw_alloc_(std::move(raw_alloc)), raw_free_(std::move(raw_free)) {}

// At exit the device runtime may be gone before this static pool, and its free fails: the
// memory goes with the process, and a destructor must not throw.
CachingPool::~CachingPool() {
  try {
    ReleaseCachedLocked();
  } catch (const std::exception&) {
  }
}

void* CachingPool::Alloc(size_t bytes) {
  const size_t size = RoundAllocSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = free_lists_.find(size); it != free_lists_.end() && !it->second.empty()) {
    void* ptr = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= size;
    stats_.live_bytes += size;
    ++stats_.hits;
    return ptr;
  }
  void* ptr = raw_alloc_(size);
  ++stats_.raw_allocs;
  if (!ptr && stats_.cached_bytes > 0) {  // out of memory: give the cache back and try once more
    ReleaseCachedLocked();
    ptr = raw_alloc_(size);
    ++stats_.raw_allocs;
  }
  if (ptr == nullptr) {
    throw OutOfMemoryError("out of memory: cannot allocate " + std::to_string(size) +
                               " bytes (" + std::to_string(stats_.live_bytes) + " bytes in use)",
                           __FILE__, __LINE__);
  }
  stats_.live_bytes += size;
  return ptr;
}

void CachingPool::Free(void* ptr, size_t bytes) {
  if (!ptr) return;
  const size_t size = RoundAllocSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  free_lists_[size].push_back(ptr);
  stats_.live_bytes -= size;
  stats_.cached_bytes += size;
}

void CachingPool::ReleaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCachedLocked();
}

void CachingPool::ReleaseCachedLocked() {
  for (auto& [size, blocks] : free_lists_) {
    for (void* ptr : blocks) raw_free_(ptr);
  }
  free_lists_.clear();
  stats_.cached_bytes = 0;
}

CachingPool::Stats CachingPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace cohort
