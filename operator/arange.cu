// _arange and _contrib_arange_like on the GPU (Note [GPU kernels]): arange.h's value at every
// position, as on the CPU.
#include "operator/arange.h"
#include "operator/common/pointwise_gpu.cuh"

namespace cohort::op {

void ArangeGpu(const OpContext& ctx, const ArangeParam& p, const NDArray& out) {
  float* y = G(out);
  const double start = p.start, step = p.step;
  const int64_t repeat = p.repeat;
  ForEach(Gpu(ctx), out.size(),
          [=] __device__(int64_t i) { y[i] = ArangeValue(start, step, repeat, i); });
}

void ZeroGradGpu(const OpContext& ctx, const NDArray& grad) { ZeroOnStream(Gpu(ctx), grad); }

}  // namespace cohort::op
