// HostKVStore: weights, optimizer and device sums in host memory; a Comm across workers.
#include "kvstore/host_kvstore.h"

#include <algorithm>

#include "base/thread_arena.h"

namespace cohort {
namespace {
constexpr int64_t kHostGrain = 1 << 15;  // elements per parallel block of host work

// Copies one host float32 array into another of its size with the process's cores.
void CopyOnHost(const NDArray& from, const NDArray& to) {
  const float* src = from.data<float>();
  float* dst = to.data<float>();
  HostArena().ParallelFor(0, to.size(), kHostGrain, [&](int64_t begin, int64_t end) {
    std::copy(src + begin, src + end, dst + begin);
  });
}
}  // namespace

HostKVStore::HostKVStore(std::string type, std::unique_ptr<Comm> comm)
    : type_(std::move(type)), comm_(std::move(comm)) {}

void HostKVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore Init: keys and values";
  std::vector<NDArray> shared;
  for (size_t k = 0; k < keys.size(); ++k) {
    COHORT_CHECK(!store_.count(keys[k])) << "kvstore Init: key " << keys[k] << " is already set";
    const bool share =
        share_on_init_ && values[k].ctx().is_host() && values[k].dtype() == DType::kFloat32;
    store_[keys[k]] = share ? values[k] : values[k].CopyTo(Context::CPU());
    if (share) shared_keys_.insert(keys[k]);
    shared.push_back(store_[keys[k]]);
  }
  comm_->Broadcast(shared);
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!store_[keys[k]].SharesStorageWith(values[k])) store_[keys[k]].CopyTo(values[k]);
  }
}

void HostKVStore::Push(const std::vector<int>& keys,
                       const std::vector<std::vector<NDArray>>& values, int) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore Push: keys and values";
  CheckKeysDistinct(keys, "Push", &key_scratch_);
  reduce_list_.clear();
  for (size_t k = 0; k < keys.size(); ++k) {
    auto stored = store_.find(keys[k]);
    COHORT_CHECK(stored != store_.end()) << "kvstore Push: key " << keys[k] << " was not Init'ed";
    COHORT_CHECK(!values[k].empty()) << "kvstore Push: no values for key " << keys[k];
    for (const NDArray& v : values[k]) {
      COHORT_CHECK(v.shape() == stored->second.shape() && v.dtype() == DType::kFloat32)
          << "kvstore Push: a " << v.dtype() << " value of shape " << v.shape() << " for key "
          << keys[k] << " of shape " << stored->second.shape() << " (float32)";
    }
    NDArray& merged = merged_[keys[k]];  // made on first use: an in-place PushPull needs none
    if (merged.is_none()) merged = NDArray::Zeros(stored->second.shape());
    SumInto(OnHost(keys[k], values[k]), merged);
    reduce_list_.push_back(merged);
  }
  comm_->AllReduce(reduce_list_);
  for (size_t k = 0; k < keys.size(); ++k) {
    const NDArray& sum = merged_.at(keys[k]);
    if (check_finite_ && !AllFinite(sum)) {  // Note [Non-finite gradients]
      nonfinite_keys_.push_back(keys[k]);
      continue;
    }
    if (defer_updates_ && optimizer_) continue;  // FinishStep updates, or not
    if (optimizer_) {
      optimizer_->Update(keys[k], store_.at(keys[k]), sum);
    } else if (shared_keys_.erase(keys[k])) {           // never the sum into the caller's weights:
      store_.at(keys[k]) = sum.CopyTo(Context::CPU());  // the store gets its own array, once
    } else {  // the sum becomes the stored value: the buffers trade places, no copy
      std::swap(store_.at(keys[k]), merged_.at(keys[k]));
    }
  }
}

// As MXNet's local kvstore, GPU values are summed on the host: each is copied into a pinned
// buffer of its own (made on the first push, reused after), then summed with the host ones.
const std::vector<NDArray>& HostKVStore::OnHost(int key, const std::vector<NDArray>& values) {
  bool all_host = true;
  for (const NDArray& v : values) all_host = all_host && v.ctx().is_host();
  if (all_host) return values;
  std::vector<NDArray>& pinned = staging_[key];
  pinned.resize(values.size());
  host_values_.resize(values.size());
  for (size_t d = 0; d < values.size(); ++d) {
    host_values_[d] = values[d].OnHost(&pinned[d], Context::CPUPinned());
  }
  return host_values_;
}

void HostKVStore::Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs,
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
      CopyOnHost(it->second, out);
    }
  }
}

namespace {
// Whether every out is its value itself, in host float32 memory: an allreduce in place.
bool ReducesInPlace(const std::vector<std::vector<NDArray>>& values,
                    const std::vector<std::vector<NDArray>>& outs) {
  if (values.size() != outs.size()) return false;
  for (size_t k = 0; k < values.size(); ++k) {
    if (values[k].empty() || values[k].size() != outs[k].size()) return false;
    for (size_t d = 0; d < values[k].size(); ++d) {
      const NDArray& v = values[k][d];
      const NDArray& o = outs[k][d];
      if (!v.ctx().is_host() || v.dtype() != DType::kFloat32 || !v.SharesStorageWith(o) ||
          v.raw_data() != o.raw_data() || !(v.shape() == o.shape())) {
        return false;
      }
    }
  }
  return true;
}
}  // namespace

void HostKVStore::PushPull(const std::vector<int>& keys,
                           const std::vector<std::vector<NDArray>>& values,
                           const std::vector<std::vector<NDArray>>& outs, int priority) {
  if (!optimizer_ && ReducesInPlace(values, outs)) {
    AllReduceInPlace(keys, values);
    return;
  }
  Push(keys, values, priority);
  if (!(defer_updates_ && optimizer_)) Pull(keys, outs, priority);
}

void HostKVStore::AllReduceInPlace(const std::vector<int>& keys,
                                   const std::vector<std::vector<NDArray>>& values) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore PushPull: keys and values";
  CheckKeysDistinct(keys, "PushPull", &key_scratch_);
  reduce_list_.clear();
  for (size_t k = 0; k < keys.size(); ++k) {
    auto it = store_.find(keys[k]);
    COHORT_CHECK(it != store_.end()) << "kvstore PushPull: key " << keys[k] << " was not Init'ed";
    const std::vector<NDArray>& on_devices = values[k];
    COHORT_CHECK(on_devices[0].shape() == it->second.shape())
        << "kvstore PushPull: a value of shape " << on_devices[0].shape() << " for key " << keys[k]
        << " of shape " << it->second.shape();
    if (on_devices.size() > 1) SumInto(on_devices, on_devices[0]);
    reduce_list_.push_back(on_devices[0]);
  }
  comm_->AllReduce(reduce_list_);
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::vector<NDArray>& on_devices = values[k];
    if (check_finite_ && !AllFinite(on_devices[0])) nonfinite_keys_.push_back(keys[k]);
    for (size_t d = 1; d < on_devices.size(); ++d) CopyOnHost(on_devices[0], on_devices[d]);
  }
}

void HostKVStore::FinishStep(const std::vector<int>& keys,
                             const std::vector<std::vector<NDArray>>& outs) {
  if (!(defer_updates_ && optimizer_) || !nonfinite_keys_.empty()) return;
  for (int key : keys) optimizer_->Update(key, store_.at(key), merged_.at(key));  // all finite
  Pull(keys, outs);
}

}  // namespace cohort
