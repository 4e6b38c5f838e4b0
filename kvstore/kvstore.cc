// The kinds of kvstore and their rules, the factory, and the host sums every kind uses.
#include "kvstore/kvstore.h"

#include "kvstore/host_kvstore.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>

#include "base/thread_arena.h"
#include "ndarray/device_api.h"
#include "ndarray/finite.h"

namespace cohort {

std::optional<DType> GradientCompressionWire(const std::string& setting) {
  if (setting == "none") return DType::kFloat32;
  if (setting == "bfloat16") return DType::kBFloat16;
  if (setting == "float16") return DType::kFloat16;
  return std::nullopt;
}
namespace {
constexpr int64_t kHostGrain = 1 << 15;  // elements per parallel block of host work
}  // namespace

KVStoreKind DescribeKVStore(const std::string& type) {
  if (type == "local") return {};
  if (type == "mpi" || type == "dist_sync") return {.spans_processes = true};
  if (type == "device" || type == "nccl") {
    return {
      .reduces_on_gpus = true, .spans_processes = type == "nccl", .keeps_weights = false,
#if COHORT_NCCL
      .available = true
    };
#else
      .available = false
    };
#endif
  }
  COHORT_THROW() << "unknown kvstore '" << type
                 << "': expected local, mpi (dist_sync), device or nccl";
  return {};
}

void CheckKVStoreDevices(const std::string& type, const std::vector<Context>& devices) {
  const KVStoreKind kind = DescribeKVStore(type);
  if (!kind.available) {
    COHORT_THROW() << "kvstore '" << type << "' reduces on GPUs with NCCL, which this build of "
                   << "Cohort does not have (configure with nvcc and NCCL): use local or mpi";
  }
  for (const Context& d : devices) {
    COHORT_CHECK(!kind.reduces_on_gpus || d.is_gpu())
        << type << " reduces on GPUs but 'devices' lists " << d.ToString()
        << "; use local or mpi for CPU devices";
  }
}

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  if (type == "local") return std::make_unique<HostKVStore>(type, CreateSingleWorkerComm());
  if (type == "mpi" || type == "dist_sync") {
    return std::make_unique<HostKVStore>(type, CreateMpiComm());
  }
  if (type == "device" || type == "nccl") {
#if COHORT_NCCL
    return CreateNcclKVStore(type);
#else
    COHORT_THROW() << "kvstore '" << type << "' reduces on GPUs with NCCL, which this build of "
                   << "Cohort does not have (configure with nvcc and NCCL): use local or mpi";
#endif
  }
  COHORT_THROW() << "unknown kvstore '" << type
                 << "': expected local, mpi (dist_sync), device or nccl";
  return nullptr;
}

void CheckKeysDistinct(const std::vector<int>& keys, const char* call, std::vector<int>* scratch) {
  scratch->assign(keys.begin(), keys.end());
  std::sort(scratch->begin(), scratch->end());
  const auto twice = std::adjacent_find(scratch->begin(), scratch->end());
  COHORT_CHECK(twice == scratch->end())
      << "kvstore " << call << ": key " << *twice
      << " appears twice in one call: pass each key once, with all its values";
}

void SumInto(const std::vector<NDArray>& arrays, const NDArray& out) {
  const int64_t n = out.size();
  float* dst = out.data<float>();
  constexpr size_t kMaxDevices = 64;  // a fixed array: no allocation per call
  COHORT_CHECK(!arrays.empty() && arrays.size() <= kMaxDevices)
      << "kvstore: " << arrays.size() << " devices (1 to " << kMaxDevices << " supported)";
  const float* src[kMaxDevices];
  for (size_t k = 0; k < arrays.size(); ++k) {
    COHORT_CHECK(arrays[k].shape() == out.shape())
        << "kvstore: a value of shape " << arrays[k].shape() << " for a key of shape "
        << out.shape();
    src[k] = arrays[k].data<float>();
  }
  const size_t count = arrays.size();
  HostArena().ParallelFor(0, n, kHostGrain, [&](int64_t begin, int64_t end) {
    // The first source is copied unless it is the output itself; the rest are added.
    if (src[0] != dst) std::copy(src[0] + begin, src[0] + end, dst + begin);
    for (size_t k = 1; k < count; ++k) {
      const float* s = src[k];
      if (s == dst) continue;
      for (int64_t i = begin; i < end; ++i) dst[i] += s[i];
    }
  });
}

bool AllFinite(const NDArray& array) {
  COHORT_CHECK(array.dtype() == DType::kFloat32) << "AllFinite: float32 arrays only";
  if (!array.ctx().is_host()) {
    const float* data = static_cast<const float*>(array.raw_data());
    const size_t size = static_cast<size_t>(array.size());
    uint8_t nonfinite = 0;
    device::MarkNonFinite(array.ctx().id, &data, &size, 1, &nonfinite);
    return nonfinite == 0;
  }
  const uint32_t* bits = static_cast<const uint32_t*>(array.raw_data());
  std::atomic<bool> finite{true};
  HostArena().ParallelFor(0, array.size(), kHostGrain, [&](int64_t begin, int64_t end) {
    // The largest exponent (ndarray/finite.h) in sixteen lanes, a fixed-length inner loop that
    // -O2 turns into vector code.
    uint32_t lanes[16] = {};
    int64_t i = begin;
    for (; i + 16 <= end; i += 16) {
      for (int l = 0; l < 16; ++l) lanes[l] = std::max(lanes[l], FloatExponent(bits[i + l]));
    }
    for (; i < end; ++i) lanes[0] = std::max(lanes[0], FloatExponent(bits[i]));
    uint32_t largest = 0;
    for (uint32_t lane : lanes) largest = std::max(largest, lane);
    if (IsNonFiniteExponent(largest)) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

void FindNonFinite(const std::vector<NDArray>& arrays, std::vector<int>* nonfinite,
                   NonFiniteScratch* scratch) {
  nonfinite->clear();
  scratch->gpu_index.clear();
  for (size_t i = 0; i < arrays.size(); ++i) {
    COHORT_CHECK(arrays[i].dtype() == DType::kFloat32)
        << "FindNonFinite: array " << i << " is not float32";
    if (arrays[i].ctx().is_host()) {
      if (!AllFinite(arrays[i])) nonfinite->push_back(static_cast<int>(i));
    } else {
      scratch->gpu_index.push_back(static_cast<int>(i));
    }
  }
  // The GPU arrays by device (in place: nothing allocated), one pass for each device's.
  std::vector<int>& gpu = scratch->gpu_index;
  auto device_of = [&](int i) { return arrays[i].ctx().id; };
  std::sort(gpu.begin(), gpu.end(), [&](int a, int b) {
    return std::pair(device_of(a), a) < std::pair(device_of(b), b);
  });
  for (size_t begin = 0, end = 0; begin < gpu.size(); begin = end) {
    scratch->data.clear();
    scratch->sizes.clear();
    for (end = begin; end < gpu.size() && device_of(gpu[end]) == device_of(gpu[begin]); ++end) {
      scratch->data.push_back(static_cast<const float*>(arrays[gpu[end]].raw_data()));
      scratch->sizes.push_back(static_cast<size_t>(arrays[gpu[end]].size()));
    }
    scratch->flags.resize(end - begin);
    device::MarkNonFinite(device_of(gpu[begin]), scratch->data.data(), scratch->sizes.data(),
                          static_cast<int>(end - begin), scratch->flags.data());
    for (size_t k = begin; k < end; ++k) {
      if (scratch->flags[k - begin] != 0) nonfinite->push_back(gpu[k]);
    }
  }
  std::sort(nonfinite->begin(), nonfinite->end());
}

}  // namespace cohort
