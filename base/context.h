// Context: the device an array lives on or an executor runs on (MXNet's Context).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cohort {

// MXNet's dev_type values, so contexts round-trip through .params files unchanged.
enum class DeviceType : int32_t { kCPU = 1, kGPU = 2, kCPUPinned = 3 };

// A device: CPU (id is a label: several CPU devices split the cores of one process), page-locked
// host memory for fast transfers to GPUs, or a CUDA GPU by ordinal.
struct Context {
  DeviceType type = DeviceType::kCPU;
  int32_t id = 0;

  static Context CPU(int32_t id = 0) { return {DeviceType::kCPU, id}; }
  static Context GPU(int32_t id = 0) { return {DeviceType::kGPU, id}; }
  static Context CPUPinned(int32_t id = 0) { return {DeviceType::kCPUPinned, id}; }

  // Host memory (plain or pinned): the CPU can read and write it directly.
  bool is_host() const { return type != DeviceType::kGPU; }
  bool is_gpu() const { return type == DeviceType::kGPU; }
  // Whether kernels running on one can use the other's memory: both host, or the same GPU.
  bool SameMemory(const Context& other) const {
    return is_gpu() == other.is_gpu() && (!is_gpu() || id == other.id);
  }

  // "cpu:0", "gpu:3", "cpu_pinned:0".
  std::string ToString() const;

  // One device: "cpu", "cpu:1", "gpu:0", "cpu_pinned:0"; MXNet's "gpu(0)" is accepted too.
  static Context Parse(std::string_view text);

  friend bool operator==(const Context&, const Context&) = default;
  friend auto operator<=>(const Context&, const Context&) = default;
};

// A device list: comma-separated items, each a device or a range "gpu:0-3".
// "cpu:0,cpu:1" -> [cpu:0, cpu:1]; "gpu:0-3" -> [gpu:0 .. gpu:3]. Duplicates are an error.
std::vector<Context> ParseContexts(std::string_view spec);

std::ostream& operator<<(std::ostream& os, const Context& ctx);

}  // namespace cohort
