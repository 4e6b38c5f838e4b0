// KVStore: keys, reduction over devices in host memory, updates; MPI plugs in through AllReduce.
#include "kvstore/kvstore.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "base/env.h"
#include "base/thread_arena.h"
#include "base/timeline.h"

namespace cohort {
namespace {
constexpr int64_t kHostGrain = 1 << 15;  // elements per parallel block of host work
}  // namespace

KVStoreKind DescribeKVStore(const std::string& type) {
  if (type == "local") return {};
  if (type == "mpi" || type == "dist_sync") return {.spans_processes = true};
  if (type == "device" || type == "nccl") {
    return {.reduces_on_gpus = true,
            .spans_processes = type == "nccl",
            .keeps_weights = false,
#if COHORT_NCCL
            .available = true};
#else
            .available = false};
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
  if (type == "local") {
    struct Local : KVStore {
      Local() : KVStore("local") {}
    };
    return std::make_unique<Local>();
  }
  if (type == "mpi" || type == "dist_sync") return CreateMpiKVStore(type);
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
  if (!array.ctx().is_host()) return AllFinite(array.CopyTo(Context::CPU()));
  COHORT_CHECK(array.dtype() == DType::kFloat32) << "AllFinite: float32 arrays only";
  const uint32_t* bits = static_cast<const uint32_t*>(array.raw_data());
  std::atomic<bool> finite{true};
  HostArena().ParallelFor(0, array.size(), kHostGrain, [&](int64_t begin, int64_t end) {
    // NaN and the infinities are the floats whose exponent bits are all set; an integer max
    // over the exponents vectorizes (a float sum would not, without reassociation).
    // Sixteen lanes in a fixed-length inner loop, which -O2 turns into vector code.
    constexpr uint32_t kExponent = 0x7f800000u;
    uint32_t lanes[16] = {};
    int64_t i = begin;
    for (; i + 16 <= end; i += 16) {
      for (int l = 0; l < 16; ++l) lanes[l] = std::max(lanes[l], bits[i + l] & kExponent);
    }
    for (; i < end; ++i) lanes[0] = std::max(lanes[0], bits[i] & kExponent);
    uint32_t largest = 0;
    for (uint32_t lane : lanes) largest = std::max(largest, lane);
    if (largest == kExponent) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

void KVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore Init: keys and values";
  std::vector<NDArray> shared;
  for (size_t k = 0; k < keys.size(); ++k) {
    COHORT_CHECK(!store_.count(keys[k])) << "kvstore Init: key " << keys[k] << " is already set";
    const bool share = share_on_init_ && values[k].ctx().is_host() &&
                       values[k].dtype() == DType::kFloat32;
    store_[keys[k]] = share ? values[k] : values[k].CopyTo(Context::CPU());
    if (share) shared_keys_.insert(keys[k]);
    shared.push_back(store_[keys[k]]);
  }
  BroadcastFromRoot(shared);
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!store_[keys[k]].SharesStorageWith(values[k])) store_[keys[k]].CopyTo(values[k]);
  }
}

void KVStore::Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                   int) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore Push: keys and values";
  reduce_list_.clear();
  for (size_t k = 0; k < keys.size(); ++k) {
    auto stored = store_.find(keys[k]);
    COHORT_CHECK(stored != store_.end()) << "kvstore Push: key " << keys[k] << " was not Init'ed";
    COHORT_CHECK(!values[k].empty()) << "kvstore Push: no values for key " << keys[k];
    NDArray& merged = merged_[keys[k]];  // made on first use: an in-place PushPull needs none
    if (merged.is_none()) merged = NDArray::Zeros(stored->second.shape());
    SumInto(OnHost(keys[k], values[k]), merged);
    reduce_list_.push_back(merged);
  }
  AllReduce(reduce_list_);
  for (size_t k = 0; k < keys.size(); ++k) {
    const NDArray& sum = merged_.at(keys[k]);
    if (check_finite_ && !AllFinite(sum)) {  // Note [Non-finite gradients]
      nonfinite_keys_.push_back(keys[k]);
      continue;
    }
    if (defer_updates_ && optimizer_) continue;  // FinishPushPull updates, or not
    if (optimizer_) {
      optimizer_->Update(keys[k], store_.at(keys[k]), sum);
    } else if (shared_keys_.erase(keys[k])) {  // never the sum into the caller's weights:
      store_.at(keys[k]) = sum.CopyTo(Context::CPU());  // the store gets its own array, once
    } else {  // the sum becomes the stored value: the buffers trade places, no copy
      std::swap(store_.at(keys[k]), merged_.at(keys[k]));
    }
  }
}

// As MXNet's local kvstore, GPU values are summed on the host: each is copied into a pinned
// buffer of its own (made on the first push, reused after), then summed with the host ones.
const std::vector<NDArray>& KVStore::OnHost(int key, const std::vector<NDArray>& values) {
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

void KVStore::PushPull(const std::vector<int>& keys,
                       const std::vector<std::vector<NDArray>>& values,
                       const std::vector<std::vector<NDArray>>& outs, int priority) {
  if (!optimizer_ && ReducesInPlace(values, outs)) {
    AllReduceInPlace(keys, values);
    return;
  }
  Push(keys, values, priority);
  if (!(defer_updates_ && optimizer_)) Pull(keys, outs, priority);
}

void KVStore::AllReduceInPlace(const std::vector<int>& keys,
                               const std::vector<std::vector<NDArray>>& values) {
  COHORT_CHECK_EQ(keys.size(), values.size()) << "kvstore PushPull: keys and values";
  reduce_list_.clear();
  for (size_t k = 0; k < keys.size(); ++k) {
    auto it = store_.find(keys[k]);
    COHORT_CHECK(it != store_.end()) << "kvstore PushPull: key " << keys[k] << " was not Init'ed";
    const std::vector<NDArray>& on_devices = values[k];
    COHORT_CHECK(on_devices[0].shape() == it->second.shape())
        << "kvstore PushPull: a value of shape " << on_devices[0].shape() << " for key "
        << keys[k] << " of shape " << it->second.shape();
    if (on_devices.size() > 1) SumInto(on_devices, on_devices[0]);
    reduce_list_.push_back(on_devices[0]);
  }
  AllReduce(reduce_list_);
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::vector<NDArray>& on_devices = values[k];
    if (check_finite_ && !AllFinite(on_devices[0])) nonfinite_keys_.push_back(keys[k]);
    const float* src = on_devices[0].data<float>();
    for (size_t d = 1; d < on_devices.size(); ++d) {
      float* dst = on_devices[d].data<float>();
      HostArena().ParallelFor(0, on_devices[d].size(), kHostGrain,
                              [&](int64_t begin, int64_t end) {
                                std::copy(src + begin, src + end, dst + begin);
                              });
    }
  }
}

bool KVStore::overlaps() const {
  if (!CanOverlap()) return false;
  return Env().kvstore_overlap < 0 ? OverlapsByDefault() : Env().kvstore_overlap > 0;
}

void KVStore::StartPushPull(const std::vector<int>& keys,
                            const std::vector<std::vector<NDArray>>& values,
                            const std::vector<std::vector<NDArray>>& outs) {
  COHORT_CHECK(keys.size() == values.size() && keys.size() == outs.size())
      << "kvstore StartPushPull: " << keys.size() << " keys, " << values.size() << " values and "
      << outs.size() << " outputs";
  step_keys_ = &keys;
  step_values_ = &values;
  step_outs_ = &outs;
  nonfinite_keys_.clear();
  if (!overlaps()) return;
  if (keys != bucketed_keys_ || bucket_ranges_.empty()) {  // plan the buckets once
    std::vector<size_t> bytes;
    for (int key : keys) {
      auto it = store_.find(key);
      COHORT_CHECK(it != store_.end())
          << "kvstore StartPushPull: key " << key << " was not Init'ed";
      bytes.push_back(it->second.nbytes());
    }
    bucket_ranges_ = PlanBuckets(bytes, static_cast<size_t>(Env().kvstore_bucket_mb) << 20);
    bucketed_keys_ = keys;
    const int largest = keys.empty() ? -1 : *std::max_element(keys.begin(), keys.end());
    position_of_key_.assign(static_cast<size_t>(largest + 1), -1);
    for (size_t i = 0; i < keys.size(); ++i) {
      COHORT_CHECK(keys[i] >= 0) << "kvstore StartPushPull: negative key " << keys[i];
      position_of_key_[keys[i]] = static_cast<int>(i);
    }
    bucket_bytes_.clear();
    for (const auto& [begin, end] : bucket_ranges_) {
      int64_t total = 0;
      for (size_t i = begin; i < end; ++i) total += static_cast<int64_t>(bytes[i]);
      bucket_bytes_.push_back(total);
    }
  }
  // The arrays of each bucket, rebuilt every step (the caller may pass other arrays), in
  // vectors whose capacity stays: no allocation in the steady state.
  buckets_.resize(bucket_ranges_.size());
  for (size_t b = 0; b < bucket_ranges_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    const auto [begin, end] = bucket_ranges_[b];
    bucket.keys.assign(keys.begin() + begin, keys.begin() + end);
    bucket.values.resize(end - begin);
    bucket.outs.resize(end - begin);
    for (size_t i = begin; i < end; ++i) {
      bucket.values[i - begin] = values[i];
      bucket.outs[i - begin] = outs[i];
    }
  }
  if (!overlap_) {
    overlap_ = std::make_unique<OverlappedPushPull>([this](size_t b) {
      timeline::LabelThread("comm");
      timeline::Span span("allreduce", static_cast<int64_t>(b), bucket_bytes_[b]);
      PushPull(buckets_[b].keys, buckets_[b].values, buckets_[b].outs);
    });
  }
  overlap_->Start(bucket_ranges_);
}

void KVStore::KeyReady(int key) {
  if (!overlap_ || !overlaps()) return;
  COHORT_CHECK(key >= 0 && static_cast<size_t>(key) < position_of_key_.size() &&
               position_of_key_[key] >= 0)
      << "kvstore KeyReady: key " << key << " is not one of this step's keys";
  overlap_->Ready(static_cast<size_t>(position_of_key_[key]));
}

void KVStore::FinishPushPull() {
  COHORT_CHECK(step_keys_ != nullptr) << "kvstore FinishPushPull without StartPushPull";
  if (overlaps()) {
    timeline::Span span("wait_allreduce");
    overlap_->Finish();
  } else {
    timeline::Span span("allreduce", -1, -1);  // every key at once, after backward
    PushPull(*step_keys_, *step_values_, *step_outs_);
  }
  if (defer_updates_ && optimizer_ && nonfinite_keys_.empty()) {  // every sum is finite
    for (int key : *step_keys_) optimizer_->Update(key, store_.at(key), merged_.at(key));
    Pull(*step_keys_, *step_outs_);
  }
  step_keys_ = nullptr;
}

void KVStore::Broadcast(const std::vector<int>& keys, const std::vector<NDArray>& values,
                        const std::vector<std::vector<NDArray>>& outs) {
  Init(keys, values);
  Pull(keys, outs);
}

}  // namespace cohort
