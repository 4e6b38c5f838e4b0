// The "device" and "nccl" kvstores: gradients all-reduced in place on the GPUs with NCCL.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include "base/env.h"
#include "base/error_cuda.h"
#include "base/logging.h"
#include "kvstore/collective_watchdog.h"
#include "kvstore/comm.h"
#include "kvstore/host_kvstore.h"
#include "kvstore/kvstore.h"
#include "kvstore/nccl_bucket_order.h"
#include "ndarray/stream_ops.h"

namespace cohort {
namespace {

// Note [NCCL kvstore]
// Like Horovod and PyTorch DDP, the GPUs keep the weights and update them themselves; the store
// only sums gradients, in place, over every GPU of the job (SupportsUpdateOnKVStore is false and
// the trainer updates on the devices). "device" spans the GPUs of this process, "nccl" also the
// processes of an mpirun job: one communicator per local GPU, global rank = process rank x local
// GPUs + local index, the ncclUniqueId sent from rank 0 over MPI, one process driving all its GPUs
// with grouped calls (ncclGroupStart/End). Host-side work (rank, metric sums, the initial
// broadcast of rank 0's weights) goes through a HostKVStore over the MPI Comm (Note [KVStore
// composition]).
//
// Ordering with the executors (Note [GPU streams]): the collectives run on a non-blocking
// communication stream per GPU. Before a bucket, an event recorded on the legacy default stream
// (which waits for all earlier work of the executors' blocking streams, gradients included) is
// waited for by the communication stream; after it, the caller waits for the bucket's event, so
// the optimizer and the next forward (enqueued later) see the sums. That order is
// EnqueueBucket/WaitForBucket (nccl_bucket_order.h), which a CPU test checks against CUDA's rules
// (Note [Stream ordering]). With overlap (the default
// for nccl, Note [Overlapped push]) buckets are launched from the communication thread as their
// last gradient is enqueued, so NCCL runs beside the rest of backward.
// NCCL's grouped all-reduce over this process's communicators (one per local GPU).
class NcclGroup final : public GroupedAllReduce {
 public:
  explicit NcclGroup(const std::vector<ncclComm_t>& comms) : comms_(comms) {}
  void GroupStart() override { NCCL_CHECK(ncclGroupStart()); }
  void AllReduce(const NDArray& in, const NDArray& out, size_t device_index,
                 StreamOps::Stream stream) override {
    const ncclDataType_t type = in.dtype() == DType::kBFloat16  ? ncclBfloat16
                                : in.dtype() == DType::kFloat16 ? ncclHalf
                                                                : ncclFloat;
    NCCL_CHECK(ncclAllReduce(in.raw_data(), out.raw_data(), static_cast<size_t>(in.size()), type,
                             ncclSum, comms_[device_index],
                             static_cast<cudaStream_t>(stream.handle)));
  }
  void GroupEnd() override { NCCL_CHECK(ncclGroupEnd()); }

 private:
  const std::vector<ncclComm_t>& comms_;
};

class NcclKVStore final : public KVStore {
 public:
  explicit NcclKVStore(const std::string& type)
      : type_(type),
        host_(std::make_unique<HostKVStore>(
            type, type == "nccl" ? CreateMpiComm() : CreateSingleWorkerComm())) {}
  ~NcclKVStore() override {
    if (abort_hook_ != 0) RemoveAbortHook(abort_hook_);
    streams_.reset();  // waits for the communication streams
    for (size_t d = 0; d < devices_.size(); ++d) {
      cudaSetDevice(devices_[d]);
      ncclCommDestroy(comms_[d]);
    }
  }

  const std::string& type() const override { return type_; }
  int rank() const override { return host_->rank(); }
  int num_workers() const override { return host_->num_workers(); }
  void Barrier() override { host_->Barrier(); }
  void SumAcrossWorkers(std::span<double> values) override { host_->SumAcrossWorkers(values); }
  // The initial weights: rank 0's reach every process through the host store.
  void Init(const std::vector<int>& keys, const std::vector<NDArray>& values) override {
    host_->Init(keys, values);
  }
  void BroadcastArrays(const std::vector<NDArray>& host_arrays) override {
    host_->BroadcastArrays(host_arrays);
  }
  // Note [Gradient compression]: with bfloat16 or float16 each bucket is cast into a buffer of
  // that type on every GPU, NCCL sums it there (in that type, as Horovod's fp16 compression
  // and DDP's bf16 hook), and the sums are cast back into the float32 gradients. Every GPU ends
  // with the same bits; one GPU alone still pays the rounding, as it is asked for.
  bool SetGradientCompression(DType wire) override {
    std::lock_guard<std::mutex> lock(mutex_);
    wire_ = wire;
    wire_buffers_.clear();
    if (wire == DType::kFloat32) return false;
    Log().info("kvstore {}: gradients cross between GPUs as {} (NCCL sums in {})", type_,
               DTypeName(wire), DTypeName(wire));
    return true;
  }
  bool SupportsUpdateOnKVStore() const override { return false; }
  void SetOptimizer(std::unique_ptr<Optimizer>) override {
    COHORT_THROW() << "kvstore " << type_ << " keeps no weights (Note [NCCL kvstore]): "
                   << "every device updates its own (update_on_kvstore: false)";
  }
  Optimizer* optimizer() const override { return nullptr; }
  void ShareStorageOnInit(bool) override {}  // it keeps no weights to share
  // The trainer checks the sums on the devices (Note [Non-finite gradients]).
  void SetNonFiniteCheck(bool, bool) override {}
  const std::vector<int>& nonfinite_keys() const override { return no_keys_; }
  bool CanOverlap() const override { return true; }
  bool OverlapsByDefault() const override { return true; }

  // outs[k][d] = the sum of values[k] over every GPU of the job (outs may be the values: in
  // place, as the trainer reduces gradients).
  void PushPull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                const std::vector<std::vector<NDArray>>& outs, int) override {
    COHORT_CHECK(keys.size() == values.size() && keys.size() == outs.size())
        << "kvstore " << type() << " PushPull: " << keys.size() << " keys, " << values.size()
        << " values, " << outs.size() << " outputs";
    if (keys.empty()) return;
    Connect(values[0]);
    reduced_ = true;
    // Every array checked before the group opens: an error inside it would leave it open.
    for (size_t k = 0; k < keys.size(); ++k) {
      COHORT_CHECK_EQ(values[k].size(), devices_.size())
          << "kvstore " << type() << ": values of key " << keys[k] << " on " << values[k].size()
          << " devices, the communicators span " << devices_.size();
      for (size_t d = 0; d < devices_.size(); ++d) {
        const NDArray& v = values[k][d];
        COHORT_CHECK(v.ctx() == Context::GPU(devices_[d]) && v.dtype() == DType::kFloat32)
            << "kvstore " << type() << ": key " << keys[k] << " device " << d << " holds a "
            << v.dtype() << " array on " << v.ctx() << ", expected float32 on gpu:" << devices_[d];
        const NDArray& out = outs[k].size() > d ? outs[k][d] : v;
        COHORT_CHECK(out.ctx() == v.ctx() && out.shape() == v.shape() &&
                     out.dtype() == DType::kFloat32)
            << "kvstore " << type() << ": the output of key " << keys[k] << " on device " << d
            << " must be a float32 array of shape " << v.shape() << " on " << v.ctx();
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);  // one bucket at a time on the streams
    CheckKeysDistinct(keys, "PushPull", &key_scratch_);
    NcclGroup group(comms_);
    EnqueueBucket(*streams_, group, fences_, values, outs, WireBuffers(values));
    // Note [Collective deadline]: a peer that died or stalled would hold this wait forever;
    // past COHORT_COMM_TIMEOUT the watchdog aborts the communicators and ends the process.
    CollectiveWatchdog::Scope timed(*watchdog_, "NCCL gradient allreduce", 0);
    WaitForBucket(*streams_, fences_);
  }

  // The initial weights only (Init's): after the first reduction the GPUs hold the weights.
  void Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs,
            int priority) const override {
    COHORT_CHECK(!reduced_) << "kvstore " << type() << " keeps no weights once training runs "
                            << "(Note [NCCL kvstore]): read them from the devices";
    host_->Pull(keys, outs, priority);
  }

  // A push alone sums in place into the values (they are the gradients) and keeps nothing.
  void Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
            int priority) override {
    PushPull(keys, values, values, priority);
  }

 private:
  // Makes the communicators on the first reduction, from the GPUs the values live on.
  void Connect(const std::vector<NDArray>& per_device) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!devices_.empty()) return;  // connected (set last: a failure leaves it unconnected)
    std::vector<int> devices;
    for (const NDArray& v : per_device) {
      COHORT_CHECK(v.ctx().is_gpu()) << "kvstore " << type() << " reduces on GPUs but a value is "
                                     << "on " << v.ctx() << ": use local or mpi for CPU devices";
      devices.push_back(v.ctx().id);
    }
    const int local = static_cast<int>(devices.size());
    const int processes = num_workers(), me = rank();
    // Every process must drive as many GPUs, and the id goes out from rank 0.
    std::vector<double> counts(static_cast<size_t>(processes), 0.0);
    counts[static_cast<size_t>(me)] = local;
    SumAcrossWorkers(counts);
    for (int r = 0; r < processes; ++r) {
      COHORT_CHECK_EQ(static_cast<int>(counts[static_cast<size_t>(r)]), local)
          << "kvstore nccl: rank " << r << " drives " << counts[static_cast<size_t>(r)]
          << " GPUs and rank " << me << " drives " << local << "; every rank needs as many";
    }
    ncclUniqueId id;
    if (me == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    std::vector<double> bytes(sizeof(id.internal), 0.0);
    if (me == 0) {
      for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<unsigned char>(id.internal[i]);
    }
    SumAcrossWorkers(bytes);
    for (size_t i = 0; i < bytes.size(); ++i) {
      id.internal[i] = static_cast<char>(static_cast<unsigned char>(bytes[i]));
    }
    std::vector<ncclComm_t> comms(devices.size());
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < local; ++d) {
      CUDA_CHECK(cudaSetDevice(devices[d]));
      NCCL_CHECK(ncclCommInitRank(&comms[d], processes * local, id, me * local + d));
    }
    NCCL_CHECK(ncclGroupEnd());
    comms_ = std::move(comms);
    // Note [No hang]: a job that ends early aborts the communicators before MPI_Abort.
    abort_hook_ = AddAbortHook([comms = comms_] {
      for (ncclComm_t c : comms) ncclCommAbort(c);
    });
    watchdog_ = std::make_unique<CollectiveWatchdog>(
        rank(), processes * local > 1 ? static_cast<double>(Env().comm_timeout) : 0.0);
    streams_ = CreateCudaStreamOps();
    fences_ = BucketFences::Create(*streams_, devices);
    devices_ = devices;
    Log().info("kvstore {}: NCCL {}.{} over {} GPU(s) in {} process(es)", type(), NCCL_MAJOR,
               NCCL_MINOR, processes * local, processes);
  }

  // Note [Gradient compression]: per GPU, a buffer of the wire type for the largest bucket so
  // far (none uncompressed). It grows only between buckets: each PushPull waits for its own.
  const std::vector<NDArray>& WireBuffers(const std::vector<std::vector<NDArray>>& values) {
    if (wire_ == DType::kFloat32) {
      wire_buffers_.clear();
      return wire_buffers_;
    }
    int64_t total = 0;
    for (const std::vector<NDArray>& per_device : values) total += per_device[0].size();
    if (wire_buffers_.empty() || wire_buffers_[0].size() < total) {
      wire_buffers_.clear();
      for (int device : devices_) {
        wire_buffers_.push_back(NDArray::Empty({total}, wire_, Context::GPU(device)));
      }
    }
    return wire_buffers_;
  }

  std::string type_;
  std::unique_ptr<HostKVStore> host_;  // ranks, metric sums and the initial weights
  DType wire_ = DType::kFloat32;       // gradient_compression's type, under mutex_
  std::vector<NDArray> wire_buffers_;  // under mutex_
  const std::vector<int> no_keys_;
  std::mutex mutex_;
  std::vector<int> key_scratch_;  // CheckKeysDistinct's, under mutex_
  std::atomic<bool> reduced_ = false;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  int abort_hook_ = 0;
  std::unique_ptr<CollectiveWatchdog> watchdog_;
  std::unique_ptr<StreamOps> streams_;
  BucketFences fences_;
};

}  // namespace

std::unique_ptr<KVStore> CreateNcclKVStore(const std::string& type) {
  return std::make_unique<NcclKVStore>(type);
}

}  // namespace cohort
