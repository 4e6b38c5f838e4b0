// A pipelined ring all-reduce over a link between ring neighbours: MPI point-to-point messages
// or TCP sockets (Note [Ring all-reduce], Note [TCP ring]).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace cohort {

// How one rank of the ring exchanges a segment with its neighbours.
class RingLink {
 public:
  virtual ~RingLink() = default;
  // Sends [send, send + send_count) to the next rank while receiving recv_count floats from the
  // previous one, added into `recv` (accumulate) or copied there.
  virtual void Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                        bool accumulate) = 0;
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

  // Sum's two halves. After ReduceScatter this rank holds, in Owned(count) of `data`, the sum of
  // that segment over every rank; AllGather then gives every rank every owned segment.
  void ReduceScatter(float* data, int64_t count);
  void AllGather(float* data, int64_t count);
  std::pair<int64_t, int64_t> Owned(int64_t count) const;  // [begin, end)

 private:
  int rank_ = 0, size_ = 1;
  std::unique_ptr<RingLink> link_;
};

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
