// SIGINT/SIGTERM handlers that record the signal (Note [Stop on a signal]), taken on a thread of
// their own (Note [Signals on a thread of their own]).
#include "base/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace cohort {
namespace {

std::atomic<int> first_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs a lock-free flag");

extern "C" void OnStopSignal(int signo) {
  int expected = 0;
  if (!first_signal.compare_exchange_strong(expected, signo)) _exit(128 + signo);  // the second
  // It may come before training runs (mpirun ends a job whose other rank failed its setup), so
  // it says a signal came before what it does.
  static const char kMessage[] =
      "cohort: signal received, stopping at the next step's end (a second one ends it now)\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

}  // namespace

// Note [Signals on a thread of their own]
// A handler runs on whichever thread the kernel picks, on that thread's stack, below its stack
// pointer. oneDNN's JIT GEMM kernels keep data there (valgrind: reads "on thread 1's stack"
// below rsp), so a SIGTERM landing on a thread inside one corrupted the heap about one stop in
// six ("corrupted size vs. prev_size", cohort_train_signal_cli). So the signals are blocked in
// the installing thread, and thereby in every thread it starts later (the device workers,
// oneDNN's and the prefetchers'), and a thread of their own takes them with sigwait. The handler
// stays installed for threads that already ran (a library's pool made before main).
void InstallStopSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and waits in progress carry on
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  static std::once_flag started;
  std::call_once(started, [] {
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stops, nullptr);
    std::thread([stops] {
      while (true) {
        int signo = 0;
        if (sigwait(&stops, &signo) == 0) OnStopSignal(signo);
      }
    }).detach();
  });
}

int StopSignal() { return first_signal.load(std::memory_order_relaxed); }

void ClearStopSignal() { first_signal.store(0); }

}  // namespace cohort
