// SIGINT/SIGTERM handlers that record the signal (Note [Stop on a signal]).
#include "base/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

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

void InstallStopSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and waits in progress carry on
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int StopSignal() { return first_signal.load(std::memory_order_relaxed); }

void ClearStopSignal() { first_signal.store(0); }

}  // namespace cohort
