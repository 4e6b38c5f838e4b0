// slice_axis, SliceChannel, slice, slice_like and flip on the GPU (Note [GPU kernels]): one
// thread per window element through slice.h's index maps, as the CPU does.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/slice.h"

namespace cohort::op {

void SliceForwardGpu(const OpContext& ctx, const SliceWindow& w, const NDArray& in,
                     const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = x[SliceSource(w, i)]; });
}

void SliceBackwardGpu(const OpContext& ctx, const SliceWindow& w, GradReq req,
                      const NDArray& out_grad, const NDArray& in_grad, bool zero_first) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (zero_first) ZeroOnStream(g, in_grad);
  const float* dy = G(out_grad);
  float* dx = G(in_grad);
  ForEach(g, out_grad.size(),
          [=] __device__(int64_t i) { AssignReq(req, dx, SliceSource(w, i), dy[i]); });
}

void StridedForwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& in,
                       const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = x[StridedSource(w, i)]; });
}

void StridedBackwardGpu(const OpContext& ctx, const StridedWindow& w, GradReq req,
                        const NDArray& out_grad, const NDArray& in_grad, const NDArray* like_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (like_grad) ZeroOnStream(g, *like_grad);
  if (req == GradReq::kNull) return;
  if (req == GradReq::kWrite) ZeroOnStream(g, in_grad);
  const float* dy = G(out_grad);
  float* dx = G(in_grad);
  ForEach(g, out_grad.size(), [=] __device__(int64_t i) { dx[StridedSource(w, i)] += dy[i]; });
}

}  // namespace cohort::op
