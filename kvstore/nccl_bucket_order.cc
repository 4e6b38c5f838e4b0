#include "kvstore/nccl_bucket_order.h"

namespace cohort {

BucketFences BucketFences::Create(StreamOps& ops, const std::vector<int>& devices) {
  BucketFences fences;
  for (int device : devices) {
    fences.comm.push_back(ops.NewStream(device));
    fences.ready.push_back(ops.NewEvent(device));
    fences.done.push_back(ops.NewEvent(device));
  }
  return fences;
}

void EnqueueBucket(StreamOps& ops, GroupedAllReduce& nccl, const BucketFences& fences,
                   const std::vector<std::vector<NDArray>>& values,
                   const std::vector<std::vector<NDArray>>& outs) {
  // The legacy default stream follows every blocking stream of its GPU: an event recorded there
  // marks all of backward enqueued so far, and the communication stream waits for it.
  for (size_t d = 0; d < fences.comm.size(); ++d) {
    ops.Record(fences.ready[d], ops.DefaultStream(fences.comm[d].device));
    ops.Wait(fences.comm[d], fences.ready[d]);
  }
  // One group for the bucket: key-major, so the n-th call on every communicator is one key.
  // A call that fails still ends the group: an open one would defer every later NCCL call of
  // this thread (the abort path's included) without a word.
  nccl.GroupStart();
  try {
    for (size_t k = 0; k < values.size(); ++k) {
      for (size_t d = 0; d < fences.comm.size(); ++d) {
        const NDArray& in = values[k][d];
        nccl.AllReduce(in, outs[k].size() > d ? outs[k][d] : in, d, fences.comm[d]);
      }
    }
  } catch (...) {
    try {
      nccl.GroupEnd();
    } catch (...) {  // the first failure is the one to report
    }
    throw;
  }
  nccl.GroupEnd();
  for (size_t d = 0; d < fences.comm.size(); ++d) ops.Record(fences.done[d], fences.comm[d]);
}

void WaitForBucket(StreamOps& ops, const BucketFences& fences) {
  for (const StreamOps::Event& done : fences.done) ops.HostWait(done);
}

}  // namespace cohort
