#include "kvstore/nccl_bucket_order.h"

#include "base/error.h"

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
                   const std::vector<std::vector<NDArray>>& outs,
                   const std::vector<NDArray>& wire) {
  // The legacy default stream follows every blocking stream of its GPU: an event recorded there
  // marks all of backward enqueued so far, and the communication stream waits for it.
  for (size_t d = 0; d < fences.comm.size(); ++d) {
    ops.Record(fences.ready[d], ops.DefaultStream(fences.comm[d].device));
    ops.Wait(fences.comm[d], fences.ready[d]);
  }
  auto out_of = [&](size_t k, size_t d) -> const NDArray& {
    return outs[k].size() > d ? outs[k][d] : values[k][d];
  };
  // Compressed: each key's part of the wire buffer, cast into before the group (a kernel
  // enqueued inside it would run before NCCL's calls, which the group defers to its end).
  std::vector<std::vector<NDArray>> parts;
  if (!wire.empty()) {
    COHORT_CHECK_EQ(wire.size(), fences.comm.size()) << "EnqueueBucket: a wire buffer per GPU";
    parts.resize(values.size());
    for (size_t d = 0; d < fences.comm.size(); ++d) {
      int64_t offset = 0;
      for (size_t k = 0; k < values.size(); ++k) {
        const NDArray& v = values[k][d];
        COHORT_CHECK(offset + v.size() <= wire[d].size())
            << "EnqueueBucket: the wire buffer of GPU " << d << " holds " << wire[d].size()
            << " elements, the bucket needs more";
        parts[k].push_back(wire[d].Slice(offset, offset + v.size()).Reshape(v.shape()));
        offset += v.size();
        ops.CastAsync(parts[k][d], v, fences.comm[d]);
      }
    }
  }
  // One group for the bucket: key-major, so the n-th call on every communicator is one key.
  // A call that fails still ends the group: an open one would defer every later NCCL call of
  // this thread (the abort path's included) without a word.
  nccl.GroupStart();
  try {
    for (size_t k = 0; k < values.size(); ++k) {
      for (size_t d = 0; d < fences.comm.size(); ++d) {
        if (wire.empty()) {
          nccl.AllReduce(values[k][d], out_of(k, d), d, fences.comm[d]);
        } else {
          nccl.AllReduce(parts[k][d], parts[k][d], d, fences.comm[d]);
        }
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
  for (size_t k = 0; k < parts.size(); ++k) {
    for (size_t d = 0; d < fences.comm.size(); ++d) {
      ops.CastAsync(out_of(k, d), parts[k][d], fences.comm[d]);
    }
  }
  for (size_t d = 0; d < fences.comm.size(); ++d) ops.Record(fences.done[d], fences.comm[d]);
}

void WaitForBucket(StreamOps& ops, const BucketFences& fences) {
  for (const StreamOps::Event& done : fences.done) ops.HostWait(done);
}

}  // namespace cohort
