// Unary math on the GPU (Note [GPU kernels]): one grid-stride loop calling unary_math.h's
// functions, as the CPU loops do (Note [Shared kernel logic]).
#include "operator/common/pointwise_gpu.cuh"
#include "operator/unary_math.h"

namespace cohort::op {

void UnaryForwardGpu(const OpContext& ctx, const UnaryParam& p, const NDArray& in,
                     const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);  // may be x
  const UnaryKind k = p.kind;
  const float lo = p.a_min, hi = p.a_max;
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t i) { y[i] = UnaryValue(k, x[i], lo, hi); });
}

namespace {

template <typename T>
void UnaryTypedForward(const GpuResources::Impl& g, const UnaryParam& p, const NDArray& in,
                       const NDArray& out) {
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  const UnaryKind k = p.kind;
  const float lo = p.a_min, hi = p.a_max;
  ForEach(g, in.size(), [=] __device__(int64_t i) { y[i] = UnaryTyped<T>(k, x[i], lo, hi); });
}

template <typename T>
void UnaryTypedBackward(const GpuResources::Impl& g, const UnaryParam& p, GradReq req,
                        const NDArray& out_grad, const NDArray* in, const NDArray* out,
                        const NDArray& in_grad) {
  using C = ComputeType<T>;
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  const T* x = in ? static_cast<const T*>(in->raw_data()) : dy;  // the one not read stands in
  const T* y = out ? static_cast<const T*>(out->raw_data()) : dy;
  T* dx = static_cast<T*>(in_grad.raw_data());
  const UnaryKind k = p.kind;
  const float lo = p.a_min, hi = p.a_max;
  ForEach(g, out_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, UnaryTypedGrad<T>(k, ConvertValue<C>(dy[i]), x[i], y[i], lo, hi));
  });
}

}  // namespace

// Element types other than float32 (Note [Typed unary math]).
void UnaryTypedForwardGpu(const OpContext& ctx, const UnaryParam& p, const NDArray& in,
                          const NDArray& out) {
  DispatchDType(out.dtype(),
                [&](auto tag) { UnaryTypedForward<decltype(tag)>(Gpu(ctx), p, in, out); });
}

void UnaryBackwardGpu(const OpContext& ctx, const UnaryParam& p, GradReq req,
                      const NDArray& out_grad, const NDArray* in, const NDArray* out,
                      const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  const float* x = in ? G(*in) : dy;  // the function ignores the one it does not read
  const float* y = out ? G(*out) : dy;
  float* dx = G(in_grad);
  const UnaryKind k = p.kind;
  const float lo = p.a_min, hi = p.a_max;
  ForEach(Gpu(ctx), out_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, UnaryGrad(k, dy[i], x[i], y[i], lo, hi));
  });
}

void UnaryTypedBackwardGpu(const OpContext& ctx, const UnaryParam& p, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray* out,
                           const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  DispatchGradient("unary math", out_grad.dtype(), [&](auto tag) {
    UnaryTypedBackward<decltype(tag)>(Gpu(ctx), p, req, out_grad, in, out, in_grad);
  });
}

}  // namespace cohort::op
