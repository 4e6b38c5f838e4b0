#include "ndarray/caching_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "base/error.h"

namespace cohort {
namespace {

// A raw allocator over malloc with a byte budget, counting calls.
struct FakeDevice {
  explicit FakeDevice(size_t b) : budget(b) {}
  size_t budget;
  size_t used = 0;
  int allocs = 0, frees = 0;
  std::map<void*, size_t> live;

  CachingPool MakePool() {
    return CachingPool(
        [this](size_t n) -> void* {
          if (used + n > budget) return nullptr;
          ++allocs;
          used += n;
          void* p = std::malloc(n);
          live[p] = n;
          return p;
        },
        [this](void* p) {
          ++frees;
          used -= live.at(p);
          live.erase(p);
          std::free(p);
        });
  }
};

TEST(RoundAllocSize, PowersOfTwoThenTwoMegabyteSteps) {
  EXPECT_EQ(RoundAllocSize(1), 512u);
  EXPECT_EQ(RoundAllocSize(513), 1024u);
  EXPECT_EQ(RoundAllocSize(1 << 20), 1u << 20);
  EXPECT_EQ(RoundAllocSize((1 << 20) + 1), 2u << 20);
  EXPECT_EQ(RoundAllocSize((5u << 20) + 7), 6u << 20);
}

TEST(CachingPool, FreedBlocksAreReusedWithoutRawAllocations) {
  FakeDevice dev{1 << 30};
  CachingPool pool = dev.MakePool();
  // A "training step": the same sizes asked for and freed each iteration.
  std::set<void*> first_step;
  for (int step = 0; step < 5; ++step) {
    void* a = pool.Alloc(1000);
    void* b = pool.Alloc(3 << 20);
    void* c = pool.Alloc(1000);
    if (step == 0) first_step = {a, b, c};
    EXPECT_EQ((std::set<void*>{a, b, c}), first_step) << "step " << step;
    pool.Free(a, 1000);
    pool.Free(b, 3 << 20);
    pool.Free(c, 1000);
  }
  EXPECT_EQ(dev.allocs, 3);
  CachingPool::Stats s = pool.stats();
  EXPECT_EQ(s.raw_allocs, 3u);
  EXPECT_EQ(s.hits, 12u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.cached_bytes, 1024u + 1024u + (4u << 20));
}

TEST(CachingPool, OutOfMemoryReleasesTheCacheAndRetries) {
  FakeDevice dev{8 << 20};
  CachingPool pool = dev.MakePool();
  void* a = pool.Alloc(6 << 20);
  pool.Free(a, 6 << 20);          // cached, still counted against the device
  void* b = pool.Alloc(4 << 20);  // does not fit beside the cached 6 MiB block
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(dev.frees, 1);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  try {
    pool.Alloc(6 << 20);
    FAIL();
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  pool.Free(b, 4 << 20);
  pool.ReleaseCached();
  EXPECT_EQ(dev.used, 0u);
}

TEST(CachingPool, DestructorReturnsCachedBlocks) {
  FakeDevice dev{1 << 30};
  {
    CachingPool pool = dev.MakePool();
    pool.Free(pool.Alloc(10), 10);
  }
  EXPECT_EQ(dev.frees, 1);
  EXPECT_TRUE(dev.live.empty());
}

}  // namespace
}  // namespace cohort
