// The order in which the nccl kvstore enqueues one bucket's all-reduce, written against StreamOps
// so that a CPU test checks it (Note [NCCL kvstore], Note [Stream ordering]).
#pragma once

#include <vector>

#include "ndarray/stream_ops.h"

namespace cohort {

// NCCL's grouped calls behind an interface, as StreamOps is for streams: NCCL on a GPU machine,
// a recorder in the tests.
class GroupedAllReduce {
 public:
  virtual ~GroupedAllReduce() = default;
  virtual void GroupStart() = 0;
  // Sums `in` over every GPU of the job into `out` (which may be `in`) on the communicator of
  // local GPU `device_index`, on `stream`.
  virtual void AllReduce(const NDArray& in, const NDArray& out, size_t device_index,
                         StreamOps::Stream stream) = 0;
  virtual void GroupEnd() = 0;
};

// Per local GPU: the communication stream and the two events that fence a bucket on it.
struct BucketFences {
  std::vector<StreamOps::Stream> comm;
  std::vector<StreamOps::Event> ready, done;

  static BucketFences Create(StreamOps& ops, const std::vector<int>& devices);
};

// Enqueues one bucket: outs[k][d] = the sum of values[k][d] over the job (outs[k] empty: in
// place), on the communication streams, after all work enqueued so far on each GPU's default
// stream and hence on the executors' blocking streams (backward's gradients). Returns at once.
// With `wire` (per local GPU, a 1-D bfloat16 or float16 array of at least the bucket's elements:
// Note [Gradient compression]) the values are cast into it before the group, all-reduced there
// in that type, and cast back into the outputs after it (on the communication streams, whose
// order is the only fence the casts need).
void EnqueueBucket(StreamOps& ops, GroupedAllReduce& nccl, const BucketFences& fences,
                   const std::vector<std::vector<NDArray>>& values,
                   const std::vector<std::vector<NDArray>>& outs,
                   const std::vector<NDArray>& wire = {});
// Blocks the calling thread until the bucket's sums are complete, so that work it enqueues next
// (the optimizer, the next forward) reads them.
void WaitForBucket(StreamOps& ops, const BucketFences& fences);

}  // namespace cohort
