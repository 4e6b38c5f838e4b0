// sum, mean, max, min, prod, nansum, nanprod and norm over axes on the GPU (Note [GPU kernels]):
// rows over blocks or threads when the reduced axes are one run (Note [Reduce as rows]), else one
// thread per output element reducing its inputs in order (forward) and one per input element
// (backward), with reduce.h's functions as on the CPU.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/reduce.h"

namespace cohort::op {

void ReduceRowsGpu(const OpContext& ctx, const ReduceRows& rows, int64_t outer) {
  ForEachRow(Gpu(ctx), outer, rows.size, rows.inner, rows);
}

void ReduceGradRowsGpu(const OpContext& ctx, const ReduceGradRows& rows, int64_t outer) {
  ForEachRow(Gpu(ctx), outer, rows.size, rows.inner, rows);
}

void ReduceForwardGpu(const OpContext& ctx, ReduceKind k, const BroadcastLayout& l, int64_t count,
                      const NDArray& in, const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(),
          [=] __device__(int64_t j) { y[j] = ReduceValue(k, l, j, x, count); });
}

namespace {

template <typename T>
void ReduceTypedForward(const GpuResources::Impl& g, ReduceKind k, const BroadcastLayout& l,
                        int64_t count, const NDArray& in, const NDArray& out) {
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  ForEach(g, out.size(),
          [=] __device__(int64_t j) { y[j] = ReduceValueTyped<T>(k, l, j, x, count); });
}

}  // namespace

// Element types other than float32 (Note [Typed reductions]).
void ReduceTypedForwardGpu(const OpContext& ctx, ReduceKind k, const BroadcastLayout& l,
                           int64_t count, const NDArray& in, const NDArray& out) {
  DispatchArithmetic("reduce", out.dtype(), [&](auto tag) {
    ReduceTypedForward<decltype(tag)>(Gpu(ctx), k, l, count, in, out);
  });
}

void ReduceBackwardGpu(const OpContext& ctx, ReduceKind k, const BroadcastLayout& l, int64_t count,
                       GradReq req, const NDArray& out_grad, const float* x, const float* y,
                       const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  float* dx = G(in_grad);
  ForEach(Gpu(ctx), in_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, ReduceGrad(k, l, i, dy, x, y, count));
  });
}

}  // namespace cohort::op
