// A pipelined ring all-reduce over a link between ring neighbours: MPI point-to-point messages
// or TCP sockets (Note [Ring all-reduce], Note [TCP ring]).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "base/dtype.h"

namespace cohort {

// How one rank of the ring exchanges a segment with its neighbours.
class RingLink {
 public:
  virtual ~RingLink() = default;
  // Sends [send, send + send_count) to the next rank while receiving recv_count floats from the
  // previous one, added into `recv` (accumulate) or copied there.
  virtual void Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                        bool accumulate) = 0;
  // The same with the floats crossing as `wire` (bfloat16 or float16: half the bytes), narrowed
  // as they are copied out and widened as they are copied in (Note [Gradient compression]); with
  // round_sum each sum made is rounded through `wire` as it is stored. Returns false, having done
  // nothing, when the link cannot: the ring then packs them itself.
  virtual bool ExchangeNarrow(const float* send, int64_t send_count, float* recv,
                              int64_t recv_count, bool accumulate, DType wire, bool round_sum) {
    (void)send, (void)send_count, (void)recv, (void)recv_count, (void)accumulate, (void)wire;
    (void)round_sum;
    return false;
  }
};

// What a link's connect says on the ranks that connected when another one did not.
inline constexpr const char* kAnotherRankFailed = "another rank could not connect";

// Whether `mine` holds on every rank of `comm`: a collective, which the links' setups use to
// agree on their outcome.
bool AllRanks(MPI_Comm comm, bool mine);

// MPI messages of `chunk_bytes` between the ranks of `comm`.
std::unique_ptr<RingLink> MakeMpiRingLink(MPI_Comm comm, int64_t chunk_bytes);

// Note [Ring all-reduce]
// Open MPI 4.1's MPI_Allreduce for two ranks on one host moves and sums the whole buffer on each
// rank (recursive doubling): 1.37 GB/s bus bandwidth at 64 MB here. A ring moves and sums 1/n of
// it per step instead: the buffer is cut into n segments; in n - 1 reduce-scatter steps rank r
// sends segment (r - s) mod n to r + 1 and adds segment (r - s - 1) mod n from r - 1 into its
// own, after which it holds the sum of segment (r + 1) mod n; n - 1 all-gather steps pass the
// sums on. Each segment travels in chunks (MPI messages with two receives outstanding; or a TCP
// stream summed a chunk at a time), so the sum of chunk k runs while chunk k + 1 arrives. Every
// rank adds the same terms in the same order (ring order), so all end with the same bits. The
// summation runs on the calling thread.
// Measured with build/bench/mpi_allreduce_peer (2 ranks, vader, three runs): at 32-64 MB the
// ring reaches 2.6-4.1 GB/s algorithm bandwidth against MPI_Allreduce's 1.4-1.9; from 256 KB to
// 4 MB they are alike, so over MPI messages the mpi kvstore rings from 8 MB; through shared
// memory on one host (Note [Shared-memory ring]) and over TCP (Note [TCP ring]) from 64 KB
// (COHORT_RING_MIN_KB).
class RingAllreduce {
 public:
  // Over MPI messages of `chunk_bytes`.
  RingAllreduce(MPI_Comm comm, int64_t chunk_bytes);
  // Over `link`, which joins the ranks of `comm` in rank order.
  RingAllreduce(MPI_Comm comm, std::unique_ptr<RingLink> link);

  // Sums `count` floats in place over every rank of the communicator. Buffers are reused: after
  // the first call of a size no allocation happens.
  void Sum(float* data, int64_t count);
  // The type the floats cross the links in: float32 (as they are), bfloat16 or float16 (Note
  // [Gradient compression]).
  void SetWire(DType wire);
  DType wire() const { return wire_; }

  // Sum's two halves. After ReduceScatter this rank holds, in Owned(count) of `data`, the sum of
  // that segment over every rank; AllGather then gives every rank every owned segment.
  void ReduceScatter(float* data, int64_t count);
  void AllGather(float* data, int64_t count);
  std::pair<int64_t, int64_t> Owned(int64_t count) const;  // [begin, end)

 private:
  void Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                bool accumulate, bool round_sum = false);
  void ReduceScatterRounding(float* data, int64_t count, bool round_owned);
  void GatherOwned(float* data, int64_t count);  // the all-gather's steps
  int rank_ = 0, size_ = 1;
  std::unique_ptr<RingLink> link_;
  DType wire_ = DType::kFloat32;
  // Where the ring packs narrowed floats for a link that cannot convert (two to a float).
  std::vector<float> packed_send_, packed_recv_;
};

// Note [Gradient compression]
// As Horovod's fp16 compression and DDP's bf16 hook, the ring can pass its segments as bfloat16
// or float16, half the bytes of float32: a sender narrows what it passes on (rounded to nearest
// even), a receiver widens what it gets and adds it in float32. In the reduce-scatter each hop
// rounds the partial sum it passes on, so the sum of n ranks carries up to n - 1 roundings of the
// format (bfloat16: 2^-9 relative each); each rank rounds the segment it owns to the format (in
// the pass of the last addition, or before the all-gather after a sum across hosts), so every
// rank, the owner included, ends with the same bits. The
// shared-memory link converts while it copies through its slots (its chunks then hold twice as
// many values); over MPI messages and TCP the ring narrows a segment into a buffer of its own,
// passes it as raw words, and widens what came, so there the conversions do not overlap the
// transfer. Buffers too small for the ring (below COHORT_RING_MIN_KB) cross as float32.
// Between GPUs (the device and nccl kvstores) each bucket is cast on every GPU into a buffer of
// the format, NCCL sums it in the format, and the sums are cast back to float32, all on the
// communication stream (EnqueueBucket, kvstore/nccl_bucket_order.h).

// Note [Hierarchical all-reduce]
// Across hosts the links are slower than inside one. Horovod's hierarchical all-reduce (NCCL's
// reduce-scatter inside the host, MPI_Allreduce between the hosts on each rank's shard, NCCL's
// all-gather) therefore sums in two levels, and so does Cohort when every host runs k ranks:
//   1. a ring reduce-scatter inside the host (`inside`: through shared memory), after which
//      local rank j holds the host's sum of segment j' = Owned;
//   2. `across` sums that segment between the ranks of the same local rank on every host, all k
//      of them at once (a ring over TCP each, or MPI): each host sends the whole buffer through
//      its network once, as with one leader a host, but k ranks share the work;
//   3. a ring all-gather inside the host.
// Every rank adds in the same order, so all end with the same bits. Hosts of unequal size run
// flat, or with COHORT_KVSTORE_HIERARCHICAL=1 by a leader a host (MPI_Reduce inside, the
// leaders' all-reduce, MPI_Bcast), as MXNet's dist_device_sync reduces on the host first.
void HierarchicalSum(RingAllreduce& inside, const std::function<void(float*, int64_t)>& across,
                     float* data, int64_t count);

}  // namespace cohort
