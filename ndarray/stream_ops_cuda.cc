// StreamOps on the CUDA runtime (Note [Stream ordering]).
#include <cuda_runtime.h>

#include <vector>

#include "base/error_cuda.h"
#include "ndarray/cuda_device_guard.h"
#include "ndarray/device_api.h"
#include "ndarray/stream_ops.h"

namespace cohort {
namespace {

cudaStream_t AsCuda(StreamOps::Stream s) { return static_cast<cudaStream_t>(s.handle); }
cudaEvent_t AsCuda(StreamOps::Event e) { return static_cast<cudaEvent_t>(e.handle); }


class CudaStreamOps final : public StreamOps {
 public:
  ~CudaStreamOps() override {
    // Work still queued may use the streams and events: wait for it, then release them.
    for (Stream s : streams_) {
      cudaSetDevice(s.device);
      cudaStreamSynchronize(AsCuda(s));
      cudaStreamDestroy(AsCuda(s));
    }
    for (Event e : events_) {
      cudaSetDevice(e.device);
      cudaEventDestroy(AsCuda(e));
    }
  }

  Stream DefaultStream(int device) override { return {cudaStreamLegacy, device}; }

  Stream NewStream(int device) override {
    CudaDeviceGuard guard(device);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    streams_.push_back({stream, device});
    return streams_.back();
  }

  Event NewEvent(int device) override {
    CudaDeviceGuard guard(device);
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    events_.push_back({event, device});
    return events_.back();
  }

  void Record(Event event, Stream stream) override {
    COHORT_CHECK_EQ(event.device, stream.device) << "Record: an event of another GPU";
    CudaDeviceGuard guard(stream.device);
    CUDA_CHECK(cudaEventRecord(AsCuda(event), AsCuda(stream)));
  }

  void Wait(Stream stream, Event event) override {
    CudaDeviceGuard guard(stream.device);
    CUDA_CHECK(cudaStreamWaitEvent(AsCuda(stream), AsCuda(event), 0));
  }

  void HostWait(Event event) override { CUDA_CHECK(cudaEventSynchronize(AsCuda(event))); }

  void CopyAsync(const NDArray& dst, const NDArray& src, Stream stream) override {
    COHORT_CHECK(dst.shape() == src.shape() && dst.dtype() == src.dtype())
        << "CopyAsync: " << src.dtype() << " " << src.shape() << " on " << src.ctx() << " into "
        << dst.dtype() << " " << dst.shape() << " on " << dst.ctx();
    if (src.nbytes() == 0) return;
    CudaDeviceGuard guard(stream.device);
    CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.nbytes(), cudaMemcpyDefault,
                               AsCuda(stream)));
  }

  void CastAsync(const NDArray& dst, const NDArray& src, Stream stream) override {
    COHORT_CHECK(dst.shape() == src.shape() && dst.ctx() == Context::GPU(stream.device) &&
                 src.ctx() == dst.ctx())
        << "CastAsync: " << src.dtype() << " " << src.shape() << " on " << src.ctx() << " into "
        << dst.dtype() << " " << dst.shape() << " on " << dst.ctx() << " (gpu:" << stream.device
        << "'s stream)";
    device::CastAsync(src.raw_data(), src.dtype(), dst.raw_data(), dst.dtype(),
                      static_cast<size_t>(src.size()), stream.device, stream.handle);
  }

  void HostCopy(const NDArray& dst, const NDArray& src) override { src.CopyTo(dst); }

 private:
  std::vector<Stream> streams_;
  std::vector<Event> events_;
};

}  // namespace

std::unique_ptr<StreamOps> CreateCudaStreamOps() { return std::make_unique<CudaStreamOps>(); }

}  // namespace cohort
