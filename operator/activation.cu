// Activation and LeakyReLU on the GPU (Note [GPU kernels]): one grid-stride loop calling
// activation.h's functions, as the CPU loops do (Note [Shared kernel logic]).
#include "operator/activation.h"
#include "operator/common/pointwise_gpu.cuh"

namespace cohort::op {

void ActivationForwardGpu(const OpContext& ctx, const ActivationParam& p, const NDArray& in,
                          const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);  // may be x
  const ActType act = p.act_type;
  const float s = p.slope;
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t i) { y[i] = ActivationValue(act, x[i], s); });
}

void ActivationBackwardGpu(const OpContext& ctx, const ActivationParam& p, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray& out,
                           const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  const float* x = in ? G(*in) : nullptr;
  const float* y = G(out);
  float* dx = G(in_grad);
  const ActType act = p.act_type;
  const float s = p.slope;
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, dy[i] * ActivationDerivative(act, x ? x[i] : 0.0f, y[i], s));
  });
}

}  // namespace cohort::op
