// HostKVStore: the key/value store that keeps weights and an optimizer in host memory, sums a
// worker's devices on the host's threads and takes the sums across workers with a Comm (the
// local and mpi kinds: Note [KVStore composition]).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kvstore/comm.h"
#include "kvstore/kvstore.h"

namespace cohort {

class HostKVStore : public KVStore {
 public:
  HostKVStore(std::string type, std::unique_ptr<Comm> comm);

  const std::string& type() const override { return type_; }
  int rank() const override { return comm_->rank(); }
  int num_workers() const override { return comm_->size(); }
  void Barrier() override { comm_->Barrier(); }
  void SumAcrossWorkers(std::span<double> values) override { comm_->SumDoubles(values); }

  void Init(const std::vector<int>& keys, const std::vector<NDArray>& values) override;
  void Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
            int priority = 0) override;
  void Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs,
            int priority = 0) const override;
  // Note [In-place PushPull]: without an optimizer, when every out is its value itself in host
  // memory (the trainer's gradients when the devices update), the sum is made in the values:
  // over devices into device 0's, over workers in place there, then copied to the other
  // devices'. No buffer of the store is touched and the store keeps no copy of the sum (as the
  // device and nccl kinds keep none): a later Pull gives the value of the last Init or Push.
  // This makes a one-device worker's PushPull the bare collective, with no copy at all.
  void PushPull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                const std::vector<std::vector<NDArray>>& outs, int priority = 0) override;
  void BroadcastArrays(const std::vector<NDArray>& host_arrays) override {
    comm_->Broadcast(host_arrays);
  }

  bool SetGradientCompression(DType wire) override { return comm_->SetWire(wire); }
  bool SupportsUpdateOnKVStore() const override { return true; }
  void SetOptimizer(std::unique_ptr<Optimizer> optimizer) override {
    optimizer_ = std::move(optimizer);
  }
  Optimizer* optimizer() const override { return optimizer_.get(); }
  void ShareStorageOnInit(bool share) override { share_on_init_ = share; }

  // Note [Non-finite gradients]
  // A NaN or an infinity in one device's gradient becomes one in the sum that every device and
  // worker holds after the reduction, so each worker can decide alone, and all decide alike,
  // that a step went wrong. With checking on, the store tests each key's sum before its update
  // and leaves a non-finite key's weight as it was; nonfinite_keys() lists them after the step
  // (or the Push). With skip_whole_step, no key is updated until every key of the step is known
  // finite (FinishStep updates them all, or none): this costs the overlap of the update with
  // backward, so it is only on when asked for.
  void SetNonFiniteCheck(bool check, bool skip_whole_step) override {
    check_finite_ = check;
    defer_updates_ = check && skip_whole_step;
  }
  const std::vector<int>& nonfinite_keys() const override { return nonfinite_keys_; }
  void StartStep() override { nonfinite_keys_.clear(); }
  void FinishStep(const std::vector<int>& keys,
                  const std::vector<std::vector<NDArray>>& outs) override;

  bool CanOverlap() const override { return comm_->CanOverlap(); }
  bool OverlapsByDefault() const override { return comm_->OverlapsByDefault(); }

 private:
  const std::vector<NDArray>& OnHost(int key, const std::vector<NDArray>& values);
  void AllReduceInPlace(const std::vector<int>& keys,
                        const std::vector<std::vector<NDArray>>& values);

  std::string type_;
  std::unique_ptr<Comm> comm_;
  std::map<int, NDArray> store_;   // the value (weight) of each key
  std::map<int, NDArray> merged_;  // the reduction buffer of each key, made on its first Push
  std::unique_ptr<Optimizer> optimizer_;
  bool check_finite_ = false, defer_updates_ = false;  // Note [Non-finite gradients]
  bool share_on_init_ = false;
  std::set<int> shared_keys_;                    // whose stored value is the caller's array
  std::vector<int> nonfinite_keys_;              // this step's
  std::vector<NDArray> reduce_list_;             // reused between calls
  std::vector<int> key_scratch_;                 // CheckKeysDistinct's, reused
  std::map<int, std::vector<NDArray>> staging_;  // pinned host copies of GPU values, per key
  std::vector<NDArray> host_values_;             // the values of one key on the host, reused
};

}  // namespace cohort
