// Dropout on the GPU (Note [GPU kernels]): dropout.h's mask, the one the CPU draws for the same
// seed, in the data's floating type; backward is mask · dy.
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/dropout.h"

namespace cohort::op {
namespace {

template <typename T>
void DropoutForwardTyped(const GpuResources::Impl& g, const OpContext& ctx, const DropoutParam& p,
                         const NDArray& in, const NDArray& out, const NDArray& mask_arr) {
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  T* mask = static_cast<T*>(mask_arr.raw_data());
  if (!p.Active(ctx.is_train)) {
    ForEach(g, in.size(), [=] __device__(int64_t i) {
      mask[i] = ConvertValue<T>(1.0f);
      y[i] = x[i];
    });
    return;
  }
  const DropoutMask draw(ctx.seed, p.p);
  const int64_t offset = DropoutMask::ElementOffset(ctx, in.size());
  ForEach(g, in.size(), [=] __device__(int64_t i) {
    const T m = ConvertValue<T>(draw.At(offset + i));
    mask[i] = m;
    y[i] = DropoutValue(x[i], m);
  });
}

template <typename T>
void DropoutBackwardTyped(const GpuResources::Impl& g, GradReq req, const NDArray& out_grad,
                          const NDArray& mask_arr, const NDArray& in_grad) {
  using C = ComputeType<T>;
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  const T* mask = static_cast<const T*>(mask_arr.raw_data());
  T* dx = static_cast<T*>(in_grad.raw_data());
  ForEach(g, in_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, ConvertValue<C>(dy[i]) * ConvertValue<C>(mask[i]));
  });
}

}  // namespace

void DropoutForwardGpu(const OpContext& ctx, const DropoutParam& p, const NDArray& in,
                       const NDArray& out, const NDArray& mask_arr) {
  DispatchFloating("Dropout", in.dtype(), [&](auto tag) {
    DropoutForwardTyped<decltype(tag)>(Gpu(ctx), ctx, p, in, out, mask_arr);
  });
}

void DropoutBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& mask_arr, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  DispatchFloating("Dropout", out_grad.dtype(), [&](auto tag) {
    DropoutBackwardTyped<decltype(tag)>(Gpu(ctx), req, out_grad, mask_arr, in_grad);
  });
}

}  // namespace cohort::op
