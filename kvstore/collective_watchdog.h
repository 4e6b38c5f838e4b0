// CollectiveWatchdog: ends a process whose collective waits longer than COHORT_COMM_TIMEOUT
// (Note [Collective deadline]).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace cohort {

// Note [Collective deadline]
// A worker that stalls (SIGSTOP, a swapped-out host) or loses its link leaves every other worker
// blocked in its next collective, forever. Each collective of the mpi kvstore is therefore timed
// by a watchdog thread: at a quarter of COHORT_COMM_TIMEOUT it warns (as Horovod's stall check
// does), past the whole of it it prints which collective waited and exits the process with code
// 124; mpirun then ends every rank. The watchdog never calls into MPI (which runs
// MPI_THREAD_SERIALIZED), and the collective itself stays the blocking call it was: timing it
// costs two atomic stores. The nccl kvstore's wait for its reduction is timed the same way, and
// past the deadline the abort hooks call ncclCommAbort before the exit. That is PyTorch's NCCL
// watchdog design: blocking communicators aborted from another thread. It departs from NCCL's
// non-blocking communicators (ncclConfig_t.blocking = 0), which would need every NCCL call
// polled.

// What must happen before a process ends a job it cannot finish (AbortDistributedJob, a
// collective past its deadline): NCCL communicators are aborted (ncclCommAbort), so that their
// kernels stop waiting for peers that will never come and the GPUs are left usable. Hooks run
// once, in any thread, and must not block.
int AddAbortHook(std::function<void()> hook);  // returns an id for RemoveAbortHook
void RemoveAbortHook(int id);
int RunAbortHooks();  // returns how many ran

// Note [TCP ring liveness]: probes that say, without blocking, whether a peer is known to be gone
// (its host answers no keepalive probe): "" while all is well, else what failed. While a
// collective waits, the watchdog asks them every tick and ends the process as past the deadline
// when one answers, so that a lost host is named by Cohort whatever collective waits on it.
int AddLivenessProbe(std::function<std::string()> probe);  // returns an id for RemoveLivenessProbe
void RemoveLivenessProbe(int id);

// The rank (of MPI_COMM_WORLD) the collective in progress waits on, when its transport can tell
// (the TCP ring: the previous rank's bytes have not come, or the next rank takes none); -1 when
// unknown. The deadline's message names it; each collective's Scope clears it.
void NoteWaitingOn(int world_rank);
int WaitingOn();

class CollectiveWatchdog {
 public:
  static constexpr int kExitCode = 124;  // as timeout(1)

  // timeout_seconds <= 0 switches it off (no thread).
  CollectiveWatchdog(int rank, double timeout_seconds);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  // Times one collective while alive. `what` must outlive it (a string literal).
  class Scope {
   public:
    Scope(CollectiveWatchdog& dog, const char* what, int64_t bytes);
    ~Scope();

   private:
    CollectiveWatchdog& dog_;
  };

 private:
  void Run();

  const int rank_;
  const double timeout_;
  std::atomic<int64_t> started_ns_{0};  // 0: no collective in progress
  std::atomic<const char*> what_{""};
  std::atomic<int64_t> bytes_{0}, count_{0};
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace cohort
