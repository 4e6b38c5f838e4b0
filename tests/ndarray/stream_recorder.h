// StreamRecorder: StreamOps for CPU tests (Note [Stream ordering]). It runs each operation at
// once, in the order it is enqueued, on host arrays, and keeps what each one read and wrote and
// which earlier operations CUDA's rules make it follow; Hazards() lists every two accesses to one
// buffer, one of them a write, that the rules leave unordered: the races a GPU would have.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ndarray/stream_ops.h"

namespace cohort::testing {

class StreamRecorder : public StreamOps {
 public:
  Stream DefaultStream(int device) override;
  Stream NewStream(int device) override;
  // A blocking stream, as each executor's (cudaStreamCreate): ordered with the default stream.
  Stream NewBlockingStream(int device);
  Event NewEvent(int device) override;
  void Record(Event event, Stream stream) override;
  void Wait(Stream stream, Event event) override;
  void HostWait(Event event) override;
  void CopyAsync(const NDArray& dst, const NDArray& src, Stream stream) override;
  void CastAsync(const NDArray& dst, const NDArray& src, Stream stream) override;
  void HostCopy(const NDArray& dst, const NDArray& src) override;

  // A kernel on `stream` that reads and writes the given arrays; `run` does its work now.
  void Kernel(Stream stream, const std::string& name, const std::vector<NDArray>& reads,
              const std::vector<NDArray>& writes, const std::function<void()>& run = {});
  // Host work on the calling thread (a metric reading outputs copied to the host).
  void HostWork(const std::string& name, const std::vector<NDArray>& reads,
                const std::vector<NDArray>& writes, const std::function<void()>& run = {});
  // NCCL's grouped calls: the n-th all-reduce on each device makes up collective n, as NCCL
  // matches calls per communicator (GroupEnd throws where their shapes differ); at GroupEnd each
  // collective sums its inputs (widened to float32; the sum rounded to the arrays' type, as NCCL
  // sums two bfloat16 inputs) into every output, as one operation per device that follows the
  // earlier work of every participating stream and touches only its own device's arrays.
  void GroupStart();
  void AllReduce(const NDArray& in, const NDArray& out, Stream stream);
  void GroupEnd();

  // "A and B: unordered accesses to bytes [x, y)" for each race; empty when the order is safe.
  std::vector<std::string> Hazards() const;
  // Operation names in the order they were enqueued.
  std::vector<std::string> Names() const;

 private:
  enum class Kind { kLegacy, kBlocking, kNonBlocking };
  struct StreamState {
    Kind kind;
    int device;
    int last = -1;  // the last operation on the stream
  };
  struct Access {
    uintptr_t begin, end;
    bool write;
  };
  struct Op {
    std::string name;
    std::vector<Access> accesses;
    std::vector<bool> after;  // after[i]: operation i happens before this one
  };
  struct Call {
    NDArray in, out;
    Stream stream;
  };

  Stream Add(Kind kind, int device);
  int AddOp(const std::string& name, const std::vector<int>& preds,
            const std::vector<NDArray>& reads, const std::vector<NDArray>& writes);
  // What an operation enqueued on `stream` now must follow.
  std::vector<int> StreamPreds(Stream stream) const;
  int OnStream(Stream stream, const std::string& name, const std::vector<NDArray>& reads,
               const std::vector<NDArray>& writes);
  std::string StreamName(Stream stream) const;

  std::map<uintptr_t, StreamState> streams_;
  std::map<int, uintptr_t> legacy_;  // device -> its default stream
  std::map<uintptr_t, int> events_;  // event -> the operation it marks (-1: none yet)
  uintptr_t next_handle_ = 1;
  int host_last_ = -1;
  std::vector<Op> ops_;
  bool in_group_ = false;
  std::map<int, std::vector<Call>> calls_;  // per device, in a group
};

}  // namespace cohort::testing
