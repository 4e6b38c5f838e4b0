// slice_axis, SliceChannel, slice, slice_like and flip on the GPU (Note [GPU kernels]): one
// thread per window element through slice.h's index maps, as the CPU does.
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/slice.h"

namespace cohort::op {

namespace {

// Any element type: the windows move elements; the half types add gradients in float.
template <typename T>
void SliceForwardTyped(const GpuResources::Impl& g, const SliceWindow& w, const NDArray& in,
                       const NDArray& out) {
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  ForEach(g, out.size(), [=] __device__(int64_t i) { y[i] = x[SliceSource(w, i)]; });
}

template <typename T>
void SliceBackwardTyped(const GpuResources::Impl& g, const SliceWindow& w, GradReq req,
                        const NDArray& out_grad, const NDArray& in_grad) {
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  T* dx = static_cast<T*>(in_grad.raw_data());
  ForEach(g, out_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, SliceSource(w, i), ConvertValue<ComputeType<T>>(dy[i]));
  });
}

}  // namespace

void SliceForwardGpu(const OpContext& ctx, const SliceWindow& w, const NDArray& in,
                     const NDArray& out) {
  DispatchDType(in.dtype(),
                [&](auto tag) { SliceForwardTyped<decltype(tag)>(Gpu(ctx), w, in, out); });
}

void SliceBackwardGpu(const OpContext& ctx, const SliceWindow& w, GradReq req,
                      const NDArray& out_grad, const NDArray& in_grad, bool zero_first) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (zero_first) ZeroOnStream(g, in_grad);
  DispatchDType(in_grad.dtype(),
                [&](auto tag) { SliceBackwardTyped<decltype(tag)>(g, w, req, out_grad, in_grad); });
}

namespace {

// Typed bodies (a __device__ lambda cannot sit in the dtype dispatch's generic lambda).
template <typename T>
void StridedForwardTyped(const GpuResources::Impl& g, const StridedWindow& w, const NDArray& in,
                         const NDArray& out) {
  const T* x = static_cast<const T*>(in.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  ForEach(g, out.size(), [=] __device__(int64_t i) { y[i] = x[StridedSource(w, i)]; });
}

template <typename T>
void SliceAssignForwardTyped(const GpuResources::Impl& g, const StridedWindow& w,
                             const NDArray& lhs, const NDArray* rhs, double scalar,
                             const NDArray& out) {
  const T* a = static_cast<const T*>(lhs.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  if (a != y) ForEach(g, out.size(), [=] __device__(int64_t i) { y[i] = a[i]; });
  const int64_t n = StridedWindowSize(w);
  if (rhs) {
    const T* b = static_cast<const T*>(rhs->raw_data());
    ForEach(g, n, [=] __device__(int64_t i) { y[StridedSource(w, i)] = b[i]; });
  } else {
    const T v = static_cast<T>(scalar);
    ForEach(g, n, [=] __device__(int64_t i) { y[StridedSource(w, i)] = v; });
  }
}

}  // namespace

void StridedForwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& in,
                       const NDArray& out) {
  DispatchArithmetic("slice", out.dtype(),
                     [&](auto tag) { StridedForwardTyped<decltype(tag)>(Gpu(ctx), w, in, out); });
}

void SliceAssignForwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& lhs,
                           const NDArray* rhs, double scalar, const NDArray& out) {
  DispatchArithmetic("_slice_assign", out.dtype(), [&](auto tag) {
    SliceAssignForwardTyped<decltype(tag)>(Gpu(ctx), w, lhs, rhs, scalar, out);
  });
}

void SliceAssignBackwardGpu(const OpContext& ctx, const StridedWindow& w, const NDArray& out_grad,
                            GradReq lhs_req, const NDArray& lhs_grad, GradReq rhs_req,
                            const NDArray* rhs_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  const float* dy = G(out_grad);
  const int64_t n = StridedWindowSize(w);
  if (lhs_req != GradReq::kNull) {
    float* dx = G(lhs_grad);
    ForEach(g, out_grad.size(), [=] __device__(int64_t i) { AssignReq(lhs_req, dx, i, dy[i]); });
    if (lhs_req == GradReq::kWrite) {
      ForEach(g, n, [=] __device__(int64_t i) { dx[StridedSource(w, i)] = 0.0f; });
    } else {  // the window's share was added above: take it back
      ForEach(g, n, [=] __device__(int64_t i) {
        const int64_t k = StridedSource(w, i);
        dx[k] -= dy[k];
      });
    }
  }
  if (rhs_grad && rhs_req != GradReq::kNull) {
    float* db = G(*rhs_grad);
    ForEach(g, n,
            [=] __device__(int64_t i) { AssignReq(rhs_req, db, i, dy[StridedSource(w, i)]); });
  }
}

// dx[source of i] += dy[i] in T (a typed function: no __device__ lambda in a generic one).
template <typename T>
void StridedScatterTyped(const GpuResources::Impl& g, const StridedWindow& w,
                         const NDArray& out_grad, const NDArray& in_grad) {
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  T* dx = static_cast<T*>(in_grad.raw_data());
  ForEach(g, out_grad.size(),
          [=] __device__(int64_t i) { AddInto(&dx[StridedSource(w, i)], dy[i]); });
}

void StridedBackwardGpu(const OpContext& ctx, const StridedWindow& w, GradReq req,
                        const NDArray& out_grad, const NDArray& in_grad, const NDArray* like_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (like_grad) ZeroOnStream(g, *like_grad);
  if (req == GradReq::kNull) return;
  if (req == GradReq::kWrite) ZeroOnStream(g, in_grad);
  DispatchArithmetic("slice", out_grad.dtype(), [&](auto tag) {
    StridedScatterTyped<decltype(tag)>(g, w, out_grad, in_grad);
  });
}

}  // namespace cohort::op
