// ThreadArena.
#include "base/thread_arena.h"

#include <oneapi/tbb/global_control.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/env.h"
#include "base/error.h"

namespace cohort {

namespace {

// oneTBB lets no more threads work than the machine has cores unless told otherwise, and says so
// on stderr when arenas ask for more: a count the user set (COHORT_NUM_THREADS, `threads`) above
// the cores would be cut without being honoured. Raises the limit to `threads` when below it.
// The limit in force is the lowest of the live global_controls, so the old one goes first.
// A thread count the process cannot start ends it with SIGABRT inside oneTBB, which cannot
// report a failed thread creation; and more threads than cores only slow the kernels down. So:
// a count whose thread stacks would take more than half the address-space limit (ulimit -v) is
// refused, naming both, and one above the cores is warned of once.
void CheckThreadCount(int threads) {
  static std::once_flag warned;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores > 0 && threads > cores) {
    std::call_once(warned, [&] {
      std::fprintf(stderr,
                   "cohort: warning: %d kernel threads (COHORT_NUM_THREADS or the config's "
                   "`threads`) on %d cores: more threads than cores run slower, not faster\n",
                   threads, cores);
    });
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  using oneapi::tbb::global_control;
  const auto stack =
      static_cast<double>(global_control::active_value(global_control::thread_stack_size));
  const double needed = stack * threads, available = static_cast<double>(limit.rlim_cur);
  if (needed > available / 2) {
    throw ConfigError("kernel threads: " + std::to_string(threads) + " threads need " +
                          std::to_string(static_cast<int64_t>(needed / (1 << 20))) +
                          " MiB of stacks, more than half the address-space limit of " +
                          std::to_string(static_cast<int64_t>(available / (1 << 20))) +
                          " MiB (ulimit -v): set COHORT_NUM_THREADS or `threads` lower",
                      __FILE__, __LINE__);
  }
}

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
  CheckThreadCount(std::max(num_threads_, Env().num_threads));
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
