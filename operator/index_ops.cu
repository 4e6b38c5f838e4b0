// argmax, argmin, argmax_channel and one_hot on the GPU (Note [GPU kernels]): a thread an output
// element, index_ops.h's functions, as on the CPU.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/index_ops.h"

namespace cohort::op {

void ArgReduceGpu(const OpContext& ctx, const ArgReduceParam& p, const NDArray& in,
                  const NDArray& out) {
  int64_t outer, size, inner;
  p.Rows(in.shape(), &outer, &size, &inner);
  const float* x = G(in);
  float* y = G(out);
  const bool is_max = p.is_max;
  ForEach(Gpu(ctx), outer * inner,
          [=] __device__(int64_t j) { y[j] = ArgReduceAt(x, j, size, inner, is_max); });
}

void OneHotGpu(const OpContext& ctx, const OneHotParam& p, const NDArray& indices,
               const NDArray& out) {
  const float* x = G(indices);
  float* y = G(out);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t j) { y[j] = OneHotValue(p, x, j); });
}

}  // namespace cohort::op
