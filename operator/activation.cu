// Activation and LeakyReLU on the GPU (Note [GPU kernels]): one grid-stride loop calling
// activation.h's functions, as the CPU loops do (Note [Shared kernel logic]).
#include "operator/activation.h"
#include "operator/common/pointwise_gpu.cuh"

namespace cohort::op {

namespace {

// Each element in float32 registers, stored in T (float, float16 or bfloat16).
template <typename T>
void ForwardOn(const OpContext& ctx, const ActivationParam& p, const NDArray& in,
               const NDArray& out) {
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());  // may be x
  const ActType act = p.act_type;
  const float s = p.slope;
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t i) {
    y[i] = T(ActivationValue(act, static_cast<float>(x[i]), s));
  });
}

template <typename T>
void BackwardOn(const OpContext& ctx, const ActivationParam& p, GradReq req,
                const NDArray& out_grad, const NDArray* in, const NDArray& out,
                const NDArray& in_grad) {
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  const T* x = in ? static_cast<const T*>(in->raw_data()) : nullptr;
  const T* y = static_cast<const T*>(out.raw_data());
  T* dx = static_cast<T*>(in_grad.raw_data());
  const ActType act = p.act_type;
  const float s = p.slope;
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) {
    const float xi = x ? static_cast<float>(x[i]) : 0.0f;
    AssignReq(
        req, dx, i,
        static_cast<float>(dy[i]) * ActivationDerivative(act, xi, static_cast<float>(y[i]), s));
  });
}

}  // namespace

void ActivationForwardGpu(const OpContext& ctx, const ActivationParam& p, const NDArray& in,
                          const NDArray& out) {
  switch (in.dtype()) {
    case DType::kFloat16: return ForwardOn<float16>(ctx, p, in, out);
    case DType::kBFloat16: return ForwardOn<bfloat16>(ctx, p, in, out);
    default: return ForwardOn<float>(ctx, p, in, out);
  }
}

void ActivationBackwardGpu(const OpContext& ctx, const ActivationParam& p, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray& out,
                           const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  switch (out.dtype()) {
    case DType::kFloat16: return BackwardOn<float16>(ctx, p, req, out_grad, in, out, in_grad);
    case DType::kBFloat16: return BackwardOn<bfloat16>(ctx, p, req, out_grad, in, out, in_grad);
    default: return BackwardOn<float>(ctx, p, req, out_grad, in, out, in_grad);
  }
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
