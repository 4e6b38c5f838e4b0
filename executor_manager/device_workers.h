// DeviceWorkers: one long-lived thread per device, so that all devices run a step at once
// without creating threads or allocating per step.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cohort {

class DeviceWorkers {
 public:
  explicit DeviceWorkers(int num_devices);
  ~DeviceWorkers();
  DeviceWorkers(const DeviceWorkers&) = delete;
  DeviceWorkers& operator=(const DeviceWorkers&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  // Calls fn(device) on every device's thread and returns when all are done; the first exception
  // thrown by any of them is rethrown here.
  template <typename Fn>
  void Run(Fn& fn) {
    RunErased([](void* f, int device) { (*static_cast<Fn*>(f))(device); }, &fn);
  }

 private:
  void RunErased(void (*call)(void*, int), void* fn);
  void Loop(int device);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  void (*call_)(void*, int) = nullptr;
  void* fn_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace cohort
