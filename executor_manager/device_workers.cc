// DeviceWorkers.
#include "executor_manager/device_workers.h"

namespace cohort {

// Device 0 runs on the calling thread, which would otherwise only wait: one hand-over fewer
// per Run (a condition-variable wake-up costs tens of microseconds, a sizeable share of a small
// model's step).
DeviceWorkers::DeviceWorkers(int num_devices) : num_devices_(num_devices) {
  for (int d = 1; d < num_devices; ++d) threads_.emplace_back([this, d] { Loop(d); });
}

DeviceWorkers::~DeviceWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : threads_) t.join();
}

void DeviceWorkers::RunErased(void (*call)(void*, int), void* fn) {
  if (threads_.empty()) {  // one device: run it here, no hand-over
    call(fn, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    call_ = call;
    fn_ = fn;
    pending_ = static_cast<int>(threads_.size());
    error_ = nullptr;
    ++generation_;
  }
  start_.notify_all();
  std::exception_ptr mine;
  try {
    call(fn, 0);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void DeviceWorkers::Loop(int device) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    lock.unlock();
    std::exception_ptr error;
    try {
      call_(fn_, device);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_.notify_all();
  }
}

}  // namespace cohort
