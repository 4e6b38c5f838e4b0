// Pooling in CUDA kernels of its own (Note [GPU kernels]) rather than cuDNN: cuDNN has no "full"
// convention (its extra clipped windows) and does not promise which of equal maxima takes the
// gradient, while these kernels call pooling.h's window functions as the CPU loops do, giving
// the same results bit for bit. One thread per output forward; backward gathers, one thread per
// input element, after one thread per window has found its winner.
#include <cstdint>
#include <limits>

#include "operator/common/gpu_common.cuh"
#include "operator/pooling.h"

namespace cohort::op {

void PoolingForwardGpu(const OpContext& ctx, const PoolWindow& w, PoolType type, const NDArray& x,
                       const NDArray& y) {
  const float* in = G(x);
  float* out = G(y);
  const int64_t plane_in = w.h * w.w, plane_out = w.out_h * w.out_w;
  ForEach(Gpu(ctx), y.size(), [=] __device__(int64_t i) {
    const int64_t p = i / plane_out, o = i % plane_out;
    out[i] = PoolValue(w, type, in + p * plane_in, o / w.out_w, o % w.out_w);
  });
}

void PoolingBackwardGpu(const OpContext& ctx, const PoolWindow& w, PoolType type, GradReq req,
                        const NDArray& dy, const NDArray& x, const NDArray& dx) {
  if (req == GradReq::kNull || x.size() == 0) return;
  GpuResources::Impl& g = Gpu(ctx);
  const int64_t plane_in = w.h * w.w, plane_out = w.out_h * w.out_w;
  const float* in = G(x);
  int32_t* best = nullptr;
  if (type == PoolType::kMax && dy.size() > 0) {
    COHORT_CHECK(plane_in <= std::numeric_limits<int32_t>::max())
        << "Pooling: a plane of " << w.h << "x" << w.w << " is too large for the GPU kernel";
    best = static_cast<int32_t*>(g.Workspace(dy.size() * sizeof(int32_t)));
    int32_t* winners = best;
    ForEach(g, dy.size(), [=] __device__(int64_t i) {
      const int64_t p = i / plane_out, o = i % plane_out;
      winners[i] = PoolArgMax(w, in + p * plane_in, o / w.out_w, o % w.out_w);
    });
  }
  const float* grad_out = G(dy);
  float* grad_in = G(dx);
  const bool add = req == GradReq::kAdd;
  ForEach(g, x.size(), [=] __device__(int64_t i) {
    const int64_t p = i / plane_in, k = i % plane_in;
    grad_in[i] =
        PoolGradAt(w, type, grad_out + p * plane_out, best ? best + p * plane_out : nullptr,
                   k / w.w, k % w.w, add ? grad_in[i] : 0.0f);
  });
}

}  // namespace cohort::op
