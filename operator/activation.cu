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

void PreluForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& gamma,
                     const NDArray& out, int64_t channels, int64_t inner) {
  const float* x = G(in);
  const float* g = G(gamma);
  float* y = G(out);
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t k) {
    y[k] = PreluValue(x[k], g[PreluChannel(k, channels, inner)]);
  });
}

// dx one thread per element; dγ one thread per channel, summing its elements in order.
void PreluBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& in,
                      const NDArray& gamma, const std::vector<GradReq>& req,
                      const std::vector<NDArray>& in_grad, int64_t outer, int64_t channels,
                      int64_t inner) {
  const GpuResources::Impl& gpu = Gpu(ctx);
  const float* dy = G(out_grad);
  const float* x = G(in);
  const float* g = G(gamma);
  if (req[0] != GradReq::kNull) {
    const GradReq r = req[0];
    float* dx = G(in_grad[0]);
    ForEach(gpu, in.size(), [=] __device__(int64_t k) {
      AssignReq(r, dx, k, PreluInputGrad(dy[k], x[k], g[PreluChannel(k, channels, inner)]));
    });
  }
  if (req[1] != GradReq::kNull) {
    const GradReq r = req[1];
    float* dg = G(in_grad[1]);
    ForEach(gpu, channels, [=] __device__(int64_t c) {
      AssignReq(r, dg, c, PreluGammaGrad(dy, x, c, outer, channels, inner));
    });
  }
}

}  // namespace cohort::op
