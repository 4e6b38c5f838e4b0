// argmax, argmin, argmax_channel and one_hot on the GPU (Note [GPU kernels]): a thread an output
// element, index_ops.h's functions, as on the CPU.
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/index_ops.h"

namespace cohort::op {

namespace {

template <typename T>
void ArgReduceTyped(const GpuResources::Impl& g, const ArgReduceParam& p, const NDArray& in,
                    const NDArray& out) {
  int64_t outer, size, inner;
  p.Rows(in.shape(), &outer, &size, &inner);
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  const bool is_max = p.is_max;
  ForEach(g, outer * inner, [=] __device__(int64_t j) {
    y[j] = static_cast<T>(ArgReduceAt<T>(x, j, size, inner, is_max));
  });
}

template <typename T>
void BatchTakeTyped(const GpuResources::Impl& g, const NDArray& a, const NDArray& indices,
                    const NDArray& out) {
  const T* x = static_cast<const T*>(a.raw_data());
  const int32_t* k = static_cast<const int32_t*>(indices.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  const int64_t m = a.shape()[a.shape().ndim() - 1];
  ForEach(g, out.size(), [=] __device__(int64_t i) { y[i] = x[BatchTakeSource(k, i, m)]; });
}

}  // namespace

void BatchTakeGpu(const OpContext& ctx, const NDArray& a, const NDArray& indices,
                  const NDArray& out) {
  DispatchArithmetic("batch_take", a.dtype(),
                     [&](auto tag) { BatchTakeTyped<decltype(tag)>(Gpu(ctx), a, indices, out); });
}

void ArgReduceGpu(const OpContext& ctx, const ArgReduceParam& p, const NDArray& in,
                  const NDArray& out) {
  DispatchArithmetic("argmax", in.dtype(),
                     [&](auto tag) { ArgReduceTyped<decltype(tag)>(Gpu(ctx), p, in, out); });
}

void OneHotGpu(const OpContext& ctx, const OneHotParam& p, const NDArray& indices,
               const NDArray& out) {
  const float* x = G(indices);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t j) { y[j] = OneHotValue(p, x, j); });
}

void PickForwardGpu(const OpContext& ctx, const float* x, const float* index, int64_t n,
                    int64_t size, int64_t inner, bool wrap, float* y) {
  ForEach(Gpu(ctx), n,
          [=] __device__(int64_t j) { y[j] = x[PickSource(index, j, size, inner, wrap)]; });
}

void PickBackwardGpu(const OpContext& ctx, const float* dy, const float* index, int64_t n,
                     int64_t size, int64_t inner, bool wrap, GradReq req,
                     const NDArray& data_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (req == GradReq::kWrite) ZeroOnStream(g, data_grad);
  float* dx = G(data_grad);
  ForEach(g, n,
          [=] __device__(int64_t j) { dx[PickSource(index, j, size, inner, wrap)] += dy[j]; });
}

void FillElementForwardGpu(const OpContext& ctx, const NDArray& lhs, const NDArray& mhs,
                           const NDArray& index, const NDArray& out) {
  const GpuResources::Impl& g = Gpu(ctx);
  const float* a = G(lhs);
  const float* m = G(mhs);
  const float* k = G(index);
  float* y = G(out);
  const int64_t rows = lhs.shape()[0], cols = lhs.shape()[1];
  if (a != y) ForEach(g, out.size(), [=] __device__(int64_t i) { y[i] = a[i]; });
  ForEach(g, rows, [=] __device__(int64_t r) { y[PickSource(k, r, cols, 1, false)] = m[r]; });
}

void FillElementBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& index,
                            GradReq lhs_req, const NDArray& lhs_grad, GradReq mhs_req,
                            const NDArray& mhs_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  const float* dy = G(out_grad);
  const float* k = G(index);
  const int64_t rows = out_grad.shape()[0], cols = out_grad.shape()[1];
  if (lhs_req != GradReq::kNull) {
    float* dx = G(lhs_grad);
    ForEach(g, rows * cols, [=] __device__(int64_t i) {
      const bool filled = PickSource(k, i / cols, cols, 1, false) == i;
      AssignReq(lhs_req, dx, i, filled ? 0.0f : dy[i]);
    });
  }
  if (mhs_req != GradReq::kNull) {
    float* dm = G(mhs_grad);
    ForEach(g, rows, [=] __device__(int64_t r) {
      AssignReq(mhs_req, dm, r, dy[PickSource(k, r, cols, 1, false)]);
    });
  }
}

}  // namespace cohort::op
