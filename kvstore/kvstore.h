// KVStore: sums values across devices and workers, and optionally updates weights with them
// (MXNet's KVStore): an interface and its factory. Kinds: "local" (the devices of one process),
// "mpi" / "dist_sync" (also across processes under mpirun), "device" and "nccl" (GPUs, NCCL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"
#include "optimizer/optimizer.h"

namespace cohort {

// Note [Gradient compression]: the type gradients cross the wire in for a gradient_compression
// setting ("none": float32, "bfloat16", "float16"), or nothing for another text.
std::optional<DType> GradientCompressionWire(const std::string& setting);

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
  bool reduces_on_gpus = false;  // device, nccl: values must be on GPUs
  bool spans_processes = false;  // mpi, dist_sync, nccl: one worker per process under mpirun
  bool keeps_weights = true;     // update_on_kvstore possible (not device, nccl)
  bool available = true;         // built into this binary (device, nccl need NCCL)
};
// The kind of `type`; throws naming the known kinds for any other name.
KVStoreKind DescribeKVStore(const std::string& type);
// Throws an Error naming the kind and the device when `type` cannot reduce values on `devices`
// (a GPU kind with CPU devices), or when this build lacks the kind.
void CheckKVStoreDevices(const std::string& type, const std::vector<Context>& devices);

// Note [KVStore composition]
// The kinds are compositions, as MXNet's design intends: HostKVStore (host_kvstore.h) keeps the
// weights and the optimizer and sums a worker's devices on the host's threads, and a Comm
// (comm.h) takes the sums across workers: "local" is HostKVStore over a single-worker Comm,
// "mpi" over the MPI Comm (flat, ring or hierarchical). The GPU kinds reduce device memory in
// place on streams and keep no weights, which the host store's Comm interface (host buffers,
// synchronous) does not describe: NcclKVStore (kvstore_nccl.cc) is a KVStore of its own that
// sums with NCCL and hands its host-side work (ranks, the initial weights, metric sums) to a
// HostKVStore. The GradientBucketer (gradient_bucketer.h) drives any kind during backward.
//
// Keys are integers (parameter indices); every value of a key has the key's shape. Values are
// float32 arrays on the host or on GPUs.
class KVStore {
 public:
  virtual ~KVStore() = default;

  // "local", "mpi" or "dist_sync" (an alias of mpi), "device" or "nccl" (builds with NCCL; others
  // say so); other names are an error naming them.
  static std::unique_ptr<KVStore> Create(const std::string& type);

  virtual const std::string& type() const = 0;
  virtual int rank() const = 0;
  virtual int num_workers() const = 0;
  virtual void Barrier() = 0;
  // Sums a few doubles over all workers in place (metric sums); a no-op in one process.
  virtual void SumAcrossWorkers(std::span<double> values) = 0;

  // Stores the initial value of each key. Under MPI, rank 0's values are broadcast so that every
  // worker starts from the same weights, and are written back into `values`.
  virtual void Init(const std::vector<int>& keys, const std::vector<NDArray>& values) = 0;
  // values[k][d]: the value of keys[k] on device d. Their sum over devices (and workers) becomes
  // the stored value, or, with an optimizer set, the gradient that updates it.
  virtual void Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                    int priority = 0) = 0;
  // Copies the stored value of keys[k] into every outs[k][d].
  virtual void Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs,
                    int priority = 0) const = 0;
  // Push then Pull; outs may be the values themselves (an allreduce in place).
  virtual void PushPull(const std::vector<int>& keys,
                        const std::vector<std::vector<NDArray>>& values,
                        const std::vector<std::vector<NDArray>>& outs, int priority = 0) = 0;
  // Copies rank 0's host arrays into every worker's in place, keeping nothing (no keys).
  virtual void BroadcastArrays(const std::vector<NDArray>& host_arrays) = 0;
  // Copies rank 0's value of each key into outs on every worker (no reduction).
  void Broadcast(const std::vector<int>& keys, const std::vector<NDArray>& values,
                 const std::vector<std::vector<NDArray>>& outs) {
    Init(keys, values);
    Pull(keys, outs);
  }

  // With an optimizer the store updates its weights on Push (update_on_kvstore). Kinds that
  // reduce on the GPUs in place (device, nccl) keep no weights: the devices update themselves.
  virtual bool SupportsUpdateOnKVStore() const = 0;
  virtual void SetOptimizer(std::unique_ptr<Optimizer> optimizer) = 0;
  virtual Optimizer* optimizer() const = 0;
  // From then on Init keeps host float32 values themselves as the stored values (no copy): the
  // trainer's device 0 weights become the store, so the optimizer updates them in place and Pull
  // skips them. The caller's arrays must outlive the store. Kinds that keep no weights ignore it.
  virtual void ShareStorageOnInit(bool share) = 0;

  // Note [Non-finite gradients]: with checking on, a key whose sum holds a NaN or an infinity
  // is not updated and is listed by nonfinite_keys() at the end of the step; with
  // skip_whole_step no key is updated unless all are finite. Kinds without weights ignore it
  // (the trainer checks the devices' sums).
  virtual void SetNonFiniteCheck(bool check, bool skip_whole_step) = 0;
  virtual const std::vector<int>& nonfinite_keys() const = 0;

  // A training step's PushPulls, possibly in several calls from a communication thread, lie
  // between StartStep and FinishStep(keys, outs) with all of the step's keys and outputs
  // (GradientBucketer calls both): a store that defers its updates to the end of the step makes
  // them in FinishStep.
  virtual void StartStep() {}
  virtual void FinishStep(const std::vector<int>& keys,
                          const std::vector<std::vector<NDArray>>& outs) {
    (void)keys, (void)outs;
  }

  // Note [Gradient compression]: gradients cross between workers as `wire` (bfloat16 or
  // float16; float32: uncompressed). Returns false where no gradient crosses a wire (one worker);
  // a kind that cannot compress throws a ConfigError naming itself.
  virtual bool SetGradientCompression(DType wire) {
    (void)wire;
    return false;
  }

  // Whether PushPull may run on a communication thread while other threads compute, and whether
  // it does when COHORT_KVSTORE_OVERLAP is not set (Note [Overlapped push]).
  virtual bool CanOverlap() const = 0;
  virtual bool OverlapsByDefault() const = 0;
};

// Throws naming the key when one appears twice in one Push or PushPull: the kinds would reduce
// its buffer twice or keep one value (MXNet sums such values; pass each key once with all of
// them). `scratch` is reused between calls, so a step allocates nothing.
void CheckKeysDistinct(const std::vector<int>& keys, const char* call, std::vector<int>* scratch);
// Sums arrays of one shape into `out` (out may be one of them) with the process's cores.
void SumInto(const std::vector<NDArray>& arrays, const NDArray& out);
// Whether every element of a float32 array is finite (a GPU array is checked on its device).
bool AllFinite(const NDArray& array);
// The indices of the float32 `arrays` that hold a NaN or an infinity, in order, into
// `nonfinite`. The GPU arrays of each device are checked there in one pass that returns only
// their flags (a step's gradients are not copied to the host); `scratch` keeps its buffers
// from call to call, so a step allocates nothing.
struct NonFiniteScratch {
  std::vector<int> gpu_index;
  std::vector<const float*> data;
  std::vector<size_t> sizes;
  std::vector<uint8_t> flags;
};
void FindNonFinite(const std::vector<NDArray>& arrays, std::vector<int>* nonfinite,
                   NonFiniteScratch* scratch);

// "device" (the GPUs of this process) or "nccl" (also across processes under mpirun): NCCL
// all-reduces the gradients in place on the GPUs (kvstore_nccl.cc; builds with NCCL only).
std::unique_ptr<KVStore> CreateNcclKVStore(const std::string& type);

}  // namespace cohort
