// LayerNorm on the GPU (Note [GPU kernels]): layer_norm.h's row bodies, one row per block or
// thread (Note [Row lanes]), and its column sums, one thread per position along the axis.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/layer_norm.h"

namespace cohort::op {

void LayerNormForwardGpu(const OpContext& ctx, const LayerNormRows& rows, int64_t outer,
                         int64_t inner) {
  ForEachRow(Gpu(ctx), outer, rows.size, inner, rows);
}

void LayerNormBackwardGpu(const OpContext& ctx, const LayerNormGradRows* rows,
                          const LayerNormParamGrads* params, int64_t outer, int64_t inner) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (rows) ForEachRow(g, outer, rows->size, inner, *rows);
  if (params) {
    const LayerNormParamGrads p = *params;
    ForEach(g, p.size, [=] __device__(int64_t c) { p(c); });
  }
}

}  // namespace cohort::op
