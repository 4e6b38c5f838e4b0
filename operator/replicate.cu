// broadcast_to, broadcast_axis, broadcast_like, tile and repeat on the GPU (Note [GPU kernels]):
// a thread an output element forward, a thread an input element backward gathering its copies'
// gradients in output order, with replicate.h's functions as on the CPU.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/replicate.h"

namespace cohort::op {

void ReplicateForwardGpu(const OpContext& ctx, const BroadcastLayout& l, const NDArray& in,
                         const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = ReplicateValue(l, x, i); });
}

void ReplicateBackwardGpu(const OpContext& ctx, const BroadcastLayout& l, GradReq req,
                          const NDArray& out_grad, const NDArray& in_grad,
                          const NDArray* rhs_grad) {
  if (rhs_grad) ZeroOnStream(Gpu(ctx), *rhs_grad);
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  float* dx = G(in_grad);
  ForEach(Gpu(ctx), in_grad.size(),
          [=] __device__(int64_t j) { AssignReq(req, dx, j, ReplicateGrad(l, dy, j)); });
}

}  // namespace cohort::op
