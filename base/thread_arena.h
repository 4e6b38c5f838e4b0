// ThreadArena: a oneTBB task arena with a fixed number of threads.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <cstdint>
#include <vector>

namespace cohort {

// The CPU threads one device may use. CPU devices that run at once each get an arena holding
// their share of the cores, so they split the machine instead of oversubscribing it; kernels run
// their parallel loops inside the arena of the device that calls them.
class ThreadArena {
 public:
  // num_threads <= 0 means Env().num_threads.
  explicit ThreadArena(int num_threads = 0);
  ThreadArena(const ThreadArena&) = delete;
  ThreadArena& operator=(const ThreadArena&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn inside the arena: parallel loops in fn use at most num_threads() threads.
  template <typename Fn>
  decltype(auto) Execute(Fn&& fn) {
    return arena_.execute(std::forward<Fn>(fn));
  }

  // body(begin, end) over sub-ranges of [begin, end) of at least `grain` items, in the arena.
  template <typename Body>
  void ParallelFor(int64_t begin, int64_t end, int64_t grain, const Body& body) {
    if (end <= begin) return;
    if (num_threads_ == 1 || end - begin <= grain) {
      body(begin, end);
      return;
    }
    arena_.execute([&] {
      oneapi::tbb::parallel_for(
          oneapi::tbb::blocked_range<int64_t>(begin, end, grain > 0 ? grain : 1),
          [&](const oneapi::tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
    });
  }

 private:
  int num_threads_;
  oneapi::tbb::task_arena arena_;
};

// The arena for host work done between device steps by the calling thread (kvstore sums,
// optimizer updates, weight copies): Env().num_threads threads, created on first use. The
// device threads are idle then, so this work may take every core of the process.
ThreadArena& HostArena();

// Splits `total` threads among `parts` devices as evenly as possible, at least one each.
std::vector<int> SplitThreads(int total, int parts);

}  // namespace cohort
