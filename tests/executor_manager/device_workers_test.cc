// DeviceWorkers: every device at once, device 0 on the calling thread, errors rethrown.
#include "executor_manager/device_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

namespace cohort {
namespace {

TEST(DeviceWorkers, RunsEveryDeviceAtOnceWithDeviceZeroOnTheCaller) {
  DeviceWorkers workers(3);
  EXPECT_EQ(workers.size(), 3);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> arrived{0};
    std::thread::id ids[3];
    bool all_met[3] = {false, false, false};
    auto fn = [&](int device) {
      ids[device] = std::this_thread::get_id();
      ++arrived;
      // Each device waits until all three are inside: only possible if they run at once.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (arrived.load() < 3 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      all_met[device] = arrived.load() == 3;
    };
    workers.Run(fn);
    for (int d = 0; d < 3; ++d) EXPECT_TRUE(all_met[d]) << "device " << d << ", round " << round;
    EXPECT_EQ(ids[0], std::this_thread::get_id());
    EXPECT_EQ(std::set<std::thread::id>(ids, ids + 3).size(), 3u);
  }
}

TEST(DeviceWorkers, RethrowsAnErrorOfAnyDeviceAndKeepsWorking) {
  DeviceWorkers workers(2);
  for (int failing : {0, 1}) {
    auto fn = [&](int device) {
      if (device == failing) throw std::runtime_error("device " + std::to_string(device));
    };
    try {
      workers.Run(fn);
      ADD_FAILURE() << "no exception from device " << failing;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "device " + std::to_string(failing));
    }
  }
  std::atomic<int> runs{0};
  auto fn = [&](int) { ++runs; };
  workers.Run(fn);
  EXPECT_EQ(runs.load(), 2);
}

TEST(DeviceWorkers, OneDeviceRunsOnTheCaller) {
  DeviceWorkers workers(1);
  std::thread::id id;
  auto fn = [&](int) { id = std::this_thread::get_id(); };
  workers.Run(fn);
  EXPECT_EQ(id, std::this_thread::get_id());
}

}  // namespace
}  // namespace cohort
