// StreamOps: the stream and event operations that order GPU work between streams and the host,
// behind a plain C++ interface (Note [Stream ordering]).
#pragma once

#include <memory>

#include "ndarray/ndarray.h"

namespace cohort {

// Note [Stream ordering]
// Work that must overlap other work on a GPU (a bucket's all-reduce beside backward, the next
// batch's copy beside this step) runs on streams of its own and is ordered with events. The code
// that decides that order (the nccl kvstore's bucket schedule, the executor group's input
// staging) is written against this interface: CUDA implements it (CreateCudaStreamOps), and the
// tests implement it with a recorder that replays the order on CPU arrays and checks that every
// two accesses to one buffer, one of them a write, are ordered by the streams' rules
// (tests/ndarray/stream_recorder.h). A missing wait, which on a GPU shows only as a rare wrong
// number, fails a CPU test.
//
// The rules are CUDA's: work on one stream runs in order; a stream waits for an event only where
// told to; the legacy default stream (DefaultStream) waits for all earlier work of the device's
// blocking streams (the executors', Note [GPU streams]) and they wait for it; the host waits only
// in HostWait; a copy from pageable host memory is not asynchronous, so CopyAsync's host side is
// pinned memory.
class StreamOps {
 public:
  struct Stream {
    void* handle = nullptr;
    int device = 0;
  };
  struct Event {
    void* handle = nullptr;
    int device = 0;
  };

  virtual ~StreamOps() = default;

  // The legacy default stream of GPU `device`, where NDArray's copies and fills run.
  virtual Stream DefaultStream(int device) = 0;
  // A non-blocking stream on `device`, ordered with others through events only. Streams and
  // events live as long as this object, which waits for their work before destroying them.
  virtual Stream NewStream(int device) = 0;
  virtual Event NewEvent(int device) = 0;

  // The event marks the work enqueued on `stream` so far.
  virtual void Record(Event event, Stream stream) = 0;
  // Work enqueued on `stream` after this call starts after the event's work is done.
  virtual void Wait(Stream stream, Event event) = 0;
  // The calling thread blocks until the event's work is done.
  virtual void HostWait(Event event) = 0;
  // Enqueues a copy of src into dst (same shape and dtype) on `stream`; a host side is pinned.
  virtual void CopyAsync(const NDArray& dst, const NDArray& src, Stream stream) = 0;
  // Enqueues dst = src converted between float32 and bfloat16 or float16 (same shape, on the
  // stream's GPU), rounding to nearest even: gradient compression's casts (Note [Gradient
  // compression]).
  virtual void CastAsync(const NDArray& dst, const NDArray& src, Stream stream) = 0;
  // Copies between host arrays now, on the calling thread. Host work that touches buffers the
  // streams also use goes through here, so that the recorder sees it.
  virtual void HostCopy(const NDArray& dst, const NDArray& src) = 0;
};

// StreamOps on the CUDA runtime; throws in builds without CUDA.
std::unique_ptr<StreamOps> CreateCudaStreamOps();

}  // namespace cohort
