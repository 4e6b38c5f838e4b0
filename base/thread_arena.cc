// ThreadArena.
#include "base/thread_arena.h"

#include <algorithm>

#include "base/env.h"
#include "base/error.h"

namespace cohort {

ThreadArena::ThreadArena(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : Env().num_threads), arena_(num_threads_) {}

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
