// ThreadArena.
#include "base/thread_arena.h"

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "base/env.h"
#include "base/error.h"

namespace cohort {

namespace {

// oneTBB lets no more threads work than the machine has cores unless told otherwise, and says so
// on stderr when arenas ask for more: a count the user set (COHORT_NUM_THREADS, `threads`) above
// the cores would be cut without being honoured. Raises the limit to `threads` when below it.
// The limit in force is the lowest of the live global_controls, so the old one goes first.
void AllowThreads(int threads) {
  static std::mutex mutex;
  static std::unique_ptr<oneapi::tbb::global_control> control;
  using oneapi::tbb::global_control;
  std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<size_t>(threads) <=
      global_control::active_value(global_control::max_allowed_parallelism)) {
    return;
  }
  control.reset();
  control = std::make_unique<global_control>(global_control::max_allowed_parallelism, threads);
}

}  // namespace

ThreadArena::ThreadArena(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : Env().num_threads), arena_(num_threads_) {
  AllowThreads(std::max(num_threads_, Env().num_threads));  // the arena starts threads on first use
}

ThreadArena& HostArena() {
  static ThreadArena arena;
  return arena;
}

std::vector<int> SplitThreads(int total, int parts) {
  COHORT_CHECK_GT(parts, 0) << "SplitThreads needs at least one device";
  std::vector<int> out(parts, std::max(1, total / parts));
  if (total > parts) {
    for (int i = 0; i < total % parts; ++i) ++out[i];
  }
  return out;
}

}  // namespace cohort
