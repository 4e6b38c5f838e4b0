// transpose on the GPU (Note [GPU kernels]): one thread per output element through
// transpose.h's index map, as the CPU does, for any element type.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/transpose.h"

namespace cohort::op {

namespace {

template <typename T>
void TransposeOn(const OpContext& ctx, const TransposeLayout& l, bool backward, GradReq req,
                 const NDArray& src, const NDArray& dst) {
  const T* s = static_cast<const T*>(src.raw_data());
  T* d = static_cast<T*>(dst.raw_data());
  if (!backward) {
    ForEach(Gpu(ctx), dst.size(), [=] __device__(int64_t i) { d[i] = s[TransposeSource(l, i)]; });
  } else {
    ForEach(Gpu(ctx), src.size(), [=] __device__(int64_t i) {
      AssignReq(req, d, TransposeSource(l, i), ConvertValue<ComputeType<T>>(s[i]));
    });
  }
}

}  // namespace

void TransposeGpu(const OpContext& ctx, const TransposeLayout& l, bool backward, GradReq req,
                  const NDArray& src, const NDArray& dst) {
  DispatchDType(src.dtype(),
                [&](auto tag) { TransposeOn<decltype(tag)>(ctx, l, backward, req, src, dst); });
}

}  // namespace cohort::op
