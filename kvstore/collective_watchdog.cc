// CollectiveWatchdog (Note [Collective deadline]).
#include "kvstore/collective_watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include "base/logging.h"

namespace cohort {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CollectiveWatchdog::CollectiveWatchdog(int rank, double timeout_seconds)
    : rank_(rank), timeout_(timeout_seconds) {
  if (timeout_ > 0) thread_ = std::thread([this] { Run(); });
}

CollectiveWatchdog::~CollectiveWatchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

namespace {
std::atomic<int> waiting_on{-1};
}  // namespace

void NoteWaitingOn(int world_rank) { waiting_on.store(world_rank, std::memory_order_relaxed); }
int WaitingOn() { return waiting_on.load(std::memory_order_relaxed); }

CollectiveWatchdog::Scope::Scope(CollectiveWatchdog& dog, const char* what, int64_t bytes)
    : dog_(dog) {
  waiting_on.store(-1, std::memory_order_relaxed);
  dog_.what_.store(what, std::memory_order_relaxed);
  dog_.bytes_.store(bytes, std::memory_order_relaxed);
  dog_.count_.fetch_add(1, std::memory_order_relaxed);
  dog_.started_ns_.store(NowNs(), std::memory_order_release);
}

CollectiveWatchdog::Scope::~Scope() { dog_.started_ns_.store(0, std::memory_order_release); }

namespace {
std::mutex hooks_mutex;
std::map<int, std::function<void()>>& Hooks() {
  static auto* hooks = new std::map<int, std::function<void()>>;  // alive during exit
  return *hooks;
}
}  // namespace

int AddAbortHook(std::function<void()> hook) {
  static int next = 0;
  std::lock_guard<std::mutex> lock(hooks_mutex);
  Hooks()[++next] = std::move(hook);
  return next;
}

void RemoveAbortHook(int id) {
  std::lock_guard<std::mutex> lock(hooks_mutex);
  Hooks().erase(id);
}

namespace {
std::mutex probes_mutex;
std::map<int, std::function<std::string()>>& Probes() {
  static auto* probes = new std::map<int, std::function<std::string()>>;  // alive during exit
  return *probes;
}

// What the first probe that failed says, or "".
std::string DeadPeer() {
  std::lock_guard<std::mutex> lock(probes_mutex);
  for (auto& [id, probe] : Probes()) {
    if (std::string gone = probe(); !gone.empty()) return gone;
  }
  return "";
}
}  // namespace

int AddLivenessProbe(std::function<std::string()> probe) {
  static int next = 0;
  std::lock_guard<std::mutex> lock(probes_mutex);
  Probes()[++next] = std::move(probe);
  return next;
}

void RemoveLivenessProbe(int id) {
  std::lock_guard<std::mutex> lock(probes_mutex);
  Probes().erase(id);
}

int RunAbortHooks() {
  std::map<int, std::function<void()>> hooks;
  {
    std::lock_guard<std::mutex> lock(hooks_mutex);
    hooks.swap(Hooks());  // once
  }
  for (auto& [id, hook] : hooks) hook();
  return static_cast<int>(hooks.size());
}

void CollectiveWatchdog::Run() {
  const auto tick = std::chrono::milliseconds(timeout_ < 4 ? 50 : 250);
  int64_t warned_for = -1;
  int64_t last_tick = NowNs();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, tick, [this] { return stop_; })) {
    const int64_t now = NowNs();
    // A tick far later than asked: this process itself was stopped (SIGSTOP) or starved, and
    // the wait is its own doing, not the other workers'.
    const double gap = static_cast<double>(now - std::exchange(last_tick, now)) * 1e-9;
    const int64_t started = started_ns_.load(std::memory_order_acquire);
    if (started == 0) continue;
    const double waited = static_cast<double>(now - started) * 1e-9;
    const int64_t count = count_.load(std::memory_order_relaxed);
    // Note [TCP ring liveness]: a peer known to be gone ends the wait now, not at the deadline.
    if (const std::string gone = waited > 0.5 ? DeadPeer() : ""; !gone.empty()) {
      std::fprintf(stderr,
                   "cohort: rank %d: %s #%lld (%lld bytes) waited %.1f s: %s; ending this process "
                   "(exit %d) so that the job ends\n",
                   rank_, what_.load(), static_cast<long long>(count),
                   static_cast<long long>(bytes_.load()), waited, gone.c_str(), kExitCode);
      std::fflush(stderr);
      std::fflush(stdout);
      RunAbortHooks();
      _exit(kExitCode);
    }
    if (waited > timeout_) {
      char cause[160];
      const int peer = waiting_on.load(std::memory_order_relaxed);
      if (gap > timeout_ / 2) {
        std::snprintf(cause, sizeof(cause),
                      "this process was suspended or starved for %.1f s (SIGSTOP?), and the "
                      "other workers have given up on it",
                      gap);
      } else if (peer >= 0) {
        std::snprintf(cause, sizeof(cause),
                      "it waits on rank %d, which stalled, died or lost its link, or itself "
                      "waits on one that did",
                      peer);
      } else {
        std::snprintf(cause, sizeof(cause), "a worker stalled, died or lost its link");
      }
      std::fprintf(stderr,
                   "cohort: rank %d: %s #%lld (%lld bytes) waited %.1f s, more than "
                   "COHORT_COMM_TIMEOUT=%g s: %s; ending this process (exit %d) so that the job "
                   "ends\n",
                   rank_, what_.load(), static_cast<long long>(count),
                   static_cast<long long>(bytes_.load()), waited, timeout_, cause, kExitCode);
      std::fflush(stderr);
      std::fflush(stdout);
      RunAbortHooks();
      _exit(kExitCode);
    }
    if (waited > timeout_ / 4 && warned_for != count) {
      warned_for = count;
      if (gap > waited / 2) {  // the wait is mostly this process's own standstill
        Log().warn(
            "rank {}: {} #{} has waited {:.1f} s: this process was suspended or starved "
            "for {:.1f} s (COHORT_COMM_TIMEOUT={} s)",
            rank_, what_.load(), count, waited, gap, timeout_);
      } else {
        Log().warn(
            "rank {}: {} #{} has waited {:.1f} s for the other workers "
            "(COHORT_COMM_TIMEOUT={} s)",
            rank_, what_.load(), count, waited, timeout_);
      }
    }
  }
}

}  // namespace cohort
