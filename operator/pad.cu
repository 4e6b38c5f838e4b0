// Pad on the GPU (Note [GPU kernels]): a thread an output element forward, a thread an input
// element backward gathering its readers' gradients in output order, with pad.h's functions.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/pad.h"

namespace cohort::op {

void PadForwardGpu(const OpContext& ctx, const PadLayout& l, const NDArray& in,
                   const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = PadValue(l, x, i); });
}

void PadBackwardGpu(const OpContext& ctx, const PadLayout& l, GradReq req, const NDArray& out_grad,
                    const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  float* dx = G(in_grad);
  ForEach(Gpu(ctx), in_grad.size(),
          [=] __device__(int64_t j) { AssignReq(req, dx, j, PadGrad(l, dy, j)); });
}

}  // namespace cohort::op
