// DeviceWorkers: a long-lived thread per device but the first (which runs on the caller), so
// that all devices run a step at once without creating threads or allocating per step.
#pragma once

#include <condition_variable>
#include <cstdint>
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

  int size() const { return num_devices_; }

  // Calls fn(device) for every device at once, device 0 on the calling thread and each other on
  // its own, and returns when all are done; an exception thrown by any of them is rethrown here
  // (device 0's first).
  template <typename Fn>
  void Run(Fn& fn) {
    RunErased([](void* f, int device) { (*static_cast<Fn*>(f))(device); }, &fn);
  }

 private:
  void RunErased(void (*call)(void*, int), void* fn);
  void Loop(int device);

  int num_devices_;
  std::vector<std::thread> threads_;  // devices 1 .. num_devices - 1
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
