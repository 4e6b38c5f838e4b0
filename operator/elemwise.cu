// Elementwise arithmetic on the GPU (Note [GPU kernels]): one grid-stride loop per launch calling
// elemwise.h's functions, as the CPU loops do, in the same dtypes. The kind is uniform over a
// launch, so its switch never diverges.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/elemwise.h"

namespace cohort::op {
namespace {

template <typename T>
void BinaryForwardTyped(const GpuResources::Impl& g, BinaryKind k, const NDArray& lhs,
                        const NDArray& rhs, const NDArray& out) {
  using C = ComputeType<T>;
  const T* a = static_cast<const T*>(lhs.raw_data());
  const T* b = static_cast<const T*>(rhs.raw_data());
  T* y = static_cast<T*>(out.raw_data());  // may be a or b
  ForEach(g, out.size(), [=] __device__(int64_t i) {
    y[i] = ConvertValue<T>(BinaryValue<C>(k, ConvertValue<C>(a[i]), ConvertValue<C>(b[i])));
  });
}

template <typename T>
void ScalarForwardTyped(const GpuResources::Impl& g, ScalarKind k, double scalar, const NDArray& in,
                        const NDArray& out) {
  using C = ComputeType<T>;
  const C s = ConvertValue<C>(ConvertValue<T>(scalar));  // the scalar in the array's type first
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());  // may be x
  ForEach(g, out.size(), [=] __device__(int64_t i) {
    y[i] = ConvertValue<T>(ScalarValue<C>(k, ConvertValue<C>(x[i]), s));
  });
}

// One loop per side, lhs first, as on the CPU (so a gradient sharing memory with the head
// gradient sees the same data there).
template <typename T>
void BinaryBackwardTyped(const GpuResources::Impl& g, BinaryKind k, const NDArray& out_grad,
                         const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                         const std::vector<NDArray>& in_grad) {
  const bool reads_inputs = BinaryGradReadsInputs(k);
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  const T* a = reads_inputs ? static_cast<const T*>(in[0].raw_data()) : nullptr;
  const T* b = reads_inputs ? static_cast<const T*>(in[1].raw_data()) : nullptr;
  for (int side = 0; side < 2; ++side) {
    const GradReq r = req[side];
    if (r == GradReq::kNull) continue;
    T* dx = static_cast<T*>(in_grad[side].raw_data());
    ForEach(g, out_grad.size(), [=] __device__(int64_t i) {
      AssignReq(r, dx, i, BinaryGrad<T>(k, side, ConvertValue<ComputeType<T>>(dy[i]), a, b, i));
    });
  }
}

template <typename T>
void ScalarBackwardTyped(const GpuResources::Impl& g, ScalarKind k, double scalar, GradReq req,
                         const NDArray& out_grad, const NDArray* in, const NDArray& in_grad) {
  using C = ComputeType<T>;
  const C s = ConvertValue<C>(ConvertValue<T>(scalar));  // the scalar in the array's type first
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  const T* x = in ? static_cast<const T*>(in->raw_data()) : nullptr;
  T* dx = static_cast<T*>(in_grad.raw_data());
  ForEach(g, out_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, ScalarGrad<T>(k, ConvertValue<C>(dy[i]), x, s, i));
  });
}

}  // namespace

void BinaryForwardGpu(const OpContext& ctx, BinaryKind k, const NDArray& lhs, const NDArray& rhs,
                      const NDArray& out) {
  DispatchArithmetic("elementwise", out.dtype(), [&](auto tag) {
    BinaryForwardTyped<decltype(tag)>(Gpu(ctx), k, lhs, rhs, out);
  });
}

void BinaryBackwardGpu(const OpContext& ctx, BinaryKind k, const NDArray& out_grad,
                       const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                       const std::vector<NDArray>& in_grad) {
  DispatchGradient("elementwise", out_grad.dtype(), [&](auto tag) {
    BinaryBackwardTyped<decltype(tag)>(Gpu(ctx), k, out_grad, in, req, in_grad);
  });
}

void ScalarForwardGpu(const OpContext& ctx, ScalarKind k, double s, const NDArray& in,
                      const NDArray& out) {
  DispatchArithmetic("elementwise", out.dtype(),
                     [&](auto tag) { ScalarForwardTyped<decltype(tag)>(Gpu(ctx), k, s, in, out); });
}

void ScalarBackwardGpu(const OpContext& ctx, ScalarKind k, double s, GradReq req,
                       const NDArray& out_grad, const NDArray* in, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  DispatchGradient("elementwise", out_grad.dtype(), [&](auto tag) {
    ScalarBackwardTyped<decltype(tag)>(Gpu(ctx), k, s, req, out_grad, in, in_grad);
  });
}

}  // namespace cohort::op
