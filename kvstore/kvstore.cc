// KVStore: keys, reduction over devices in host memory, updates; MPI plugs in through AllReduce.
#include "kvstore/kvstore.h"

#include <algorithm>

#include "base/thread_arena.h"

namespace cohort {
namespace {
constexpr int64_t kHostGrain = 1 << 15;  // elements per parallel block of host work
}  // namespace

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  if (type == "local") {
    struct Local : KVStore {
      Local() : KVStore("local") {}
    };
    return std::make_unique<Local>();
  }
  if (type == "mpi" || type == "dist_sync") return CreateMpiKVStore(type);
  if (type == "device" || type == "nccl") {
    COHORT_THROW() << "kvstore '" << type << "' reduces on GPUs, which this build of Cohort does "
                   << "not do yet (operators run on the CPU): use local or mpi";
  }
  COHORT_THROW() << "unknown kvstore '" << type
                 << "': expected local, mpi (dist_sync), device or nccl";
  return nullptr;
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

void KVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore Init: keys and values";
  std::vector<NDArray> shared;
  for (size_t k = 0; k < keys.size(); ++k) {
    COHORT_CHECK(!store_.count(keys[k])) << "kvstore Init: key " << keys[k] << " is already set";
    store_[keys[k]] = values[k].CopyTo(Context::CPU());
    merged_[keys[k]] = NDArray::Zeros(values[k].shape());
    shared.push_back(store_[keys[k]]);
  }
  BroadcastFromRoot(shared);
  for (size_t k = 0; k < keys.size(); ++k) store_[keys[k]].CopyTo(values[k]);
}

void KVStore::Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                   int) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore Push: keys and values";
  reduce_list_.clear();
  for (size_t k = 0; k < keys.size(); ++k) {
    auto it = merged_.find(keys[k]);
    COHORT_CHECK(it != merged_.end()) << "kvstore Push: key " << keys[k] << " was not Init'ed";
    COHORT_CHECK(!values[k].empty()) << "kvstore Push: no values for key " << keys[k];
    SumInto(values[k], it->second);
    reduce_list_.push_back(it->second);
  }
  AllReduce(reduce_list_);
  for (size_t k = 0; k < keys.size(); ++k) {
    const NDArray& sum = merged_.at(keys[k]);
    if (optimizer_) {
      optimizer_->Update(keys[k], store_.at(keys[k]), sum);
    } else {
      sum.CopyTo(store_.at(keys[k]));
    }
  }
}

void KVStore::Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs,
                   int) const {
  COHORT_CHECK_EQ(keys.size(), outs.size()) << "kvstore Pull: keys and outputs";
  for (size_t k = 0; k < keys.size(); ++k) {
    auto it = store_.find(keys[k]);
    COHORT_CHECK(it != store_.end()) << "kvstore Pull: key " << keys[k] << " was not Init'ed";
    for (const NDArray& out : outs[k]) {
      if (out.SharesStorageWith(it->second)) continue;
      if (!out.ctx().is_host() || out.dtype() != DType::kFloat32 ||
          !(out.shape() == it->second.shape())) {
        it->second.CopyTo(out);  // other contexts and types, and shape errors
        continue;
      }
      const float* src = it->second.data<float>();
      float* dst = out.data<float>();
      HostArena().ParallelFor(0, out.size(), kHostGrain, [&](int64_t begin, int64_t end) {
        std::copy(src + begin, src + end, dst + begin);
      });
    }
  }
}

void KVStore::PushPull(const std::vector<int>& keys,
                       const std::vector<std::vector<NDArray>>& values,
                       const std::vector<std::vector<NDArray>>& outs, int priority) {
  Push(keys, values, priority);
  Pull(keys, outs, priority);
}

void KVStore::Broadcast(const std::vector<int>& keys, const std::vector<NDArray>& values,
                        const std::vector<std::vector<NDArray>>& outs) {
  Init(keys, values);
  Pull(keys, outs);
}

}  // namespace cohort
