// KVStore: sums values across devices and workers, and optionally updates weights with them
// (MXNet's KVStore). Kinds: "local" (the devices of one process) and "mpi" / "dist_sync" (also
// across processes under mpirun).
#pragma once

#include <map>
#include <set>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvstore/overlapped_push_pull.h"
#include "ndarray/ndarray.h"
#include "optimizer/optimizer.h"

namespace cohort {

// This process's MPI rank when it runs in a job of more than one process (MPI initialised and
// not finalised), else -1.
int DistributedRank();
// Note [No hang]: a rank that fails while the others wait in a collective would leave them
// waiting forever (and itself blocked in MPI_Finalize). So an error on any rank ends the whole
// job: MPI_Abort on MPI_COMM_WORLD with the error's exit code, which mpirun passes on. Returns
// (doing nothing) in a process that runs alone.
void AbortDistributedJob(int exit_code);

// What a kind of kvstore is, so that callers need not know the names: apps ask here whether a
// kind takes their devices instead of listing the GPU kinds themselves.
struct KVStoreKind {
  bool reduces_on_gpus = false;   // device, nccl: values must be on GPUs
  bool spans_processes = false;   // mpi, dist_sync, nccl: one worker per process under mpirun
  bool keeps_weights = true;      // update_on_kvstore possible (not device, nccl)
  bool available = true;          // built into this binary (device, nccl need NCCL)
};
// The kind of `type`; throws naming the known kinds for any other name.
KVStoreKind DescribeKVStore(const std::string& type);
// Throws an Error naming the kind and the device when `type` cannot reduce values on `devices`
// (a GPU kind with CPU devices), or when this build lacks the kind.
void CheckKVStoreDevices(const std::string& type, const std::vector<Context>& devices);

// Keys are integers (parameter indices); every value of a key has the key's shape. Values are
// float32 arrays on the host or on GPUs; local and mpi reduce and update on the host.
class KVStore {
 public:
  virtual ~KVStore() = default;

  // "local", "mpi" or "dist_sync" (an alias of mpi), "device" or "nccl" (builds with NCCL; others
  // say so); other names are an error naming them.
  static std::unique_ptr<KVStore> Create(const std::string& type);

  const std::string& type() const { return type_; }
  virtual int rank() const { return 0; }
  virtual int num_workers() const { return 1; }
  virtual void Barrier() {}

  // Stores the initial value of each key. Under MPI, rank 0's values are broadcast so that every
  // worker starts from the same weights, and are written back into `values`.
  virtual void Init(const std::vector<int>& keys, const std::vector<NDArray>& values);
  // From then on Init keeps host float32 values themselves as the stored values (no copy): the
  // trainer's device 0 weights become the store, so the optimizer updates them in place and Pull
  // skips them. The caller's arrays must outlive the store. (Without an optimizer a push makes
  // the sum the stored value: such a key gets an array of its own first.)
  void ShareStorageOnInit(bool share) { share_on_init_ = share; }
  // values[k][d]: the value of keys[k] on device d. Their sum over devices (and workers) becomes
  // the stored value, or, with an optimizer set, the gradient that updates it.
  virtual void Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                    int priority = 0);
  // Copies the stored value of keys[k] into every outs[k][d].
  virtual void Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs,
                    int priority = 0) const;
  // Push then Pull; outs may be the values themselves (an allreduce in place).
  // Note [In-place PushPull]: without an optimizer, when every out is its value itself in host
  // memory (the trainer's gradients when the devices update), the sum is made in the values:
  // over devices into device 0's, over workers in place there, then copied to the other
  // devices'. No buffer of the store is touched and the store keeps no copy of the sum (as the
  // device and nccl kinds keep none): a later Pull gives the value of the last Init or Push.
  // This makes a one-device worker's PushPull the bare collective, with no copy at all.
  virtual void PushPull(const std::vector<int>& keys,
                        const std::vector<std::vector<NDArray>>& values,
                        const std::vector<std::vector<NDArray>>& outs, int priority = 0);
  // Copies rank 0's host arrays into every worker's in place, keeping nothing (no keys).
  void BroadcastArrays(const std::vector<NDArray>& host_arrays) { BroadcastFromRoot(host_arrays); }
  // Copies rank 0's value of each key into outs on every worker (no reduction).
  void Broadcast(const std::vector<int>& keys, const std::vector<NDArray>& values,
                 const std::vector<std::vector<NDArray>>& outs);

  // PushPull in buckets while backward still runs (Note [Overlapped push]): StartPushPull
  // announces the step's keys in the order their gradients become ready, KeyReady(key) (any
  // thread) says the key's values are final on every device, FinishPushPull waits for all of
  // them. The arguments must stay alive until FinishPushPull. Kinds that do not overlap
  // (overlaps() false) run the whole PushPull in FinishPushPull.
  bool overlaps() const;
  void StartPushPull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                     const std::vector<std::vector<NDArray>>& outs);
  void KeyReady(int key);
  void FinishPushPull();

  // With an optimizer the store updates its weights on Push (update_on_kvstore). Kinds that
  // reduce on the GPUs in place (device, nccl) keep no weights: the devices update themselves.
  virtual bool SupportsUpdateOnKVStore() const { return true; }
  void SetOptimizer(std::unique_ptr<Optimizer> optimizer) { optimizer_ = std::move(optimizer); }
  Optimizer* optimizer() const { return optimizer_.get(); }

  // Note [Non-finite gradients]
  // A NaN or an infinity in one device's gradient becomes one in the sum that every device and
  // worker holds after the reduction, so each worker can decide alone, and all decide alike,
  // that a step went wrong. With checking on, the store tests each key's sum before its update
  // and leaves a non-finite key's weight as it was; nonfinite_keys() lists them after
  // FinishPushPull (or Push). With skip_whole_step, no key is updated until every key of the
  // step is known finite (FinishPushPull updates them all, or none): this costs the overlap of
  // the update with backward, so it is only on when asked for.
  void SetNonFiniteCheck(bool check, bool skip_whole_step) {
    check_finite_ = check;
    defer_updates_ = check && skip_whole_step;
  }
  const std::vector<int>& nonfinite_keys() const { return nonfinite_keys_; }

  // Sums a few doubles over all workers in place (metric sums); a no-op in one process.
  virtual void SumAcrossWorkers(std::span<double> values) { (void)values; }

 protected:
  explicit KVStore(std::string type) : type_(std::move(type)) {}
  // Sums the merged buffers of `keys` over workers in place (no-op for local).
  virtual void AllReduce(const std::vector<NDArray>& buffers) { (void)buffers; }
  // Makes every worker's copy equal to rank 0's (no-op for local).
  virtual void BroadcastFromRoot(const std::vector<NDArray>& buffers) { (void)buffers; }
  // Whether AllReduce may run on a communication thread while other threads compute, and
  // whether it does when COHORT_KVSTORE_OVERLAP is not set.
  virtual bool CanOverlap() const { return false; }
  virtual bool OverlapsByDefault() const { return false; }

 private:
  std::string type_;
  std::map<int, NDArray> store_;   // the value (weight) of each key
  std::map<int, NDArray> merged_;  // the reduction buffer of each key, made on its first Push
  std::unique_ptr<Optimizer> optimizer_;
  bool check_finite_ = false, defer_updates_ = false;  // Note [Non-finite gradients]
  bool share_on_init_ = false;
  std::set<int> shared_keys_;  // whose stored value is the caller's array
  std::vector<int> nonfinite_keys_;                     // this step's
  std::vector<NDArray> reduce_list_;             // reused between calls
  std::map<int, std::vector<NDArray>> staging_;  // pinned host copies of GPU values, per key
  std::vector<NDArray> host_values_;             // the values of one key on the host, reused
  const std::vector<NDArray>& OnHost(int key, const std::vector<NDArray>& values);
  void AllReduceInPlace(const std::vector<int>& keys,
                        const std::vector<std::vector<NDArray>>& values);

  // Note [Overlapped push]: the step's arguments, their buckets (rebuilt when the key list
  // changes) and the communication thread (started on first use).
  struct Bucket {
    std::vector<int> keys;
    std::vector<std::vector<NDArray>> values, outs;
  };
  const std::vector<int>* step_keys_ = nullptr;
  const std::vector<std::vector<NDArray>>*step_values_ = nullptr, *step_outs_ = nullptr;
  std::vector<int> bucketed_keys_;
  std::vector<std::pair<size_t, size_t>> bucket_ranges_;
  std::vector<int64_t> bucket_bytes_;  // of each bucket, for the timeline
  std::vector<int> position_of_key_;   // index: key; value: its position in bucketed_keys_
  std::vector<Bucket> buckets_;
  std::unique_ptr<OverlappedPushPull> overlap_;
};

// Sums arrays of one shape into `out` (out may be one of them) with the process's cores.
void SumInto(const std::vector<NDArray>& arrays, const NDArray& out);
// Whether every element of a float32 array is finite (GPU arrays are copied to the host).
bool AllFinite(const NDArray& array);

std::unique_ptr<KVStore> CreateMpiKVStore(const std::string& type);
// "device" (the GPUs of this process) or "nccl" (also across processes under mpirun): NCCL
// all-reduces the gradients in place on the GPUs (kvstore_nccl.cc; builds with NCCL only).
std::unique_ptr<KVStore> CreateNcclKVStore(const std::string& type);

}  // namespace cohort
