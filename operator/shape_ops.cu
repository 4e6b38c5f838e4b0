// Flatten, Reshape and Concat on the GPU (Note [GPU kernels]): copies on the executor's stream,
// and a kernel where a gradient accumulates (kAdd).
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/shape_ops.h"

namespace cohort::op {
namespace {

// Copies a block of `outer` rows of `width` floats between arrays whose rows lie `dst_pitch` and
// `src_pitch` floats apart.
void CopyRows(const GpuResources::Impl& g, float* dst, int64_t dst_pitch, const float* src,
              int64_t src_pitch, int64_t width, int64_t outer) {
  if (width <= 0 || outer <= 0) return;
  if (outer == 1) {  // one contiguous block (a 2-d copy would limit its pitch)
    CopyOnStream(g, dst, src, width * sizeof(float));
    return;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch * sizeof(float), src, src_pitch * sizeof(float),
                               width * sizeof(float), outer, cudaMemcpyDeviceToDevice, g.stream));
}

}  // namespace

// Flatten and Reshape: the output is the input under another shape.
// Copies only when the planner did not place both in one buffer (as the CPU kernel).
void RelabelForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out) {
  CopyOnStream(Gpu(ctx), out.raw_data(), in.raw_data(), out.nbytes());  // any dtype
}

// in_grad += out_grad in T (a typed function: no __device__ lambda in a generic one).
template <typename T>
void AddOnStreamTyped(const GpuResources::Impl& g, const NDArray& out_grad,
                      const NDArray& in_grad) {
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  T* dx = static_cast<T*>(in_grad.raw_data());
  ForEach(g, in_grad.size(), [=] __device__(int64_t i) { AddInto(&dx[i], dy[i]); });
}

void RelabelBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& in_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (req == GradReq::kNull) return;
  if (req == GradReq::kWrite) {  // bytes, of any dtype
    CopyOnStream(g, in_grad.raw_data(), out_grad.raw_data(), in_grad.nbytes());
    return;
  }
  DispatchArithmetic("Reshape", out_grad.dtype(),
                     [&](auto tag) { AddOnStreamTyped<decltype(tag)>(g, out_grad, in_grad); });
}

void ConcatForwardGpu(const OpContext& ctx, const std::vector<NDArray>& in, const NDArray& out,
                      int dim) {
  const GpuResources::Impl& g = Gpu(ctx);
  const ConcatRows r = ConcatRowsOf(out.shape(), dim);
  float* all = G(out);
  int64_t offset = 0;
  for (const NDArray& part : in) {
    const int64_t width = part.shape()[dim] * r.inner;
    CopyRows(g, all + offset, r.row, G(part), width, width, r.outer);
    offset += width;
  }
}

// Each input's gradient is its block of the output gradient, copied (kWrite) or added (kAdd).
void ConcatBackwardGpu(const OpContext& ctx, const NDArray& out_grad,
                       const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                       int dim) {
  const GpuResources::Impl& g = Gpu(ctx);
  const ConcatRows r = ConcatRowsOf(out_grad.shape(), dim);
  const float* all = G(out_grad);
  int64_t offset = 0;
  for (size_t p = 0; p < in_grad.size(); ++p) {
    const int64_t width = in_grad[p].shape()[dim] * r.inner;
    if (req[p] == GradReq::kWrite) {
      CopyRows(g, G(in_grad[p]), width, all + offset, r.row, width, r.outer);
    } else if (req[p] == GradReq::kAdd && width > 0) {
      float* part = G(in_grad[p]);
      const int64_t row = r.row;
      ForEach(g, r.outer * width, [=] __device__(int64_t k) {
        part[k] += all[ConcatJoinedIndex(k, width, row, offset)];
      });
    }
    offset += width;
  }
}

void ShapeArrayGpu(const OpContext& ctx, const ShapeValues& s, const NDArray& out) {
  int64_t* y = static_cast<int64_t*>(out.raw_data());
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t k) { y[k] = ShapeValue(s, k); });
}

void ZeroGpu(const OpContext& ctx, const NDArray& a) { ZeroOnStream(Gpu(ctx), a); }

}  // namespace cohort::op
