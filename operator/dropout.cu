// Dropout on the GPU (Note [GPU kernels]): dropout.h's mask, the one the CPU draws for the same
// seed; backward is mask · dy.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/dropout.h"

namespace cohort::op {

void DropoutForwardGpu(const OpContext& ctx, const DropoutParam& p, const NDArray& in,
                       const NDArray& out, const NDArray& mask_arr) {
  const float* x = G(in);
  float* y = G(out);
  float* mask = G(mask_arr);
  if (!p.Active(ctx.is_train)) {
    ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t i) {
      mask[i] = 1.0f;
      y[i] = x[i];
    });
    return;
  }
  const DropoutMask draw(ctx.seed, p.p);
  const int64_t offset = DropoutMask::ElementOffset(ctx, in.size());
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t i) {
    const float m = draw.At(offset + i);
    mask[i] = m;
    y[i] = x[i] * m;
  });
}

void DropoutBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& mask_arr, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  const float* mask = G(mask_arr);
  float* dx = G(in_grad);
  ForEach(Gpu(ctx), in_grad.size(),
          [=] __device__(int64_t i) { AssignReq(req, dx, i, dy[i] * mask[i]); });
}

}  // namespace cohort::op
