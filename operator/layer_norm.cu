// LayerNorm on the GPU (Note [GPU kernels]): layer_norm.h's row bodies, one row per block or
// thread (Note [Row lanes]), and its column sums in chunks of rows (Note [Column sums in
// chunks]).
#include "operator/common/pointwise_gpu.cuh"
#include "operator/layer_norm.h"

namespace cohort::op {

void LayerNormForwardGpu(const OpContext& ctx, const LayerNormRows& rows, int64_t outer,
                         int64_t inner) {
  ForEachRow(Gpu(ctx), outer, rows.size, inner, rows);
}

void LayerNormBackwardGpu(const OpContext& ctx, const LayerNormGradRows* rows,
                          const LayerNormParamGrads* params, int64_t outer, int64_t inner) {
  GpuResources::Impl& g = Gpu(ctx);
  if (rows) ForEachRow(g, outer, rows->size, inner, *rows);
  if (params) {  // Note [Column sums in chunks]: a thread per (chunk, position), then per position
    const LayerNormParamGrads p = *params;
    const int64_t cells = p.chunks() * p.size;
    float* partial_gx = static_cast<float*>(g.Workspace(2 * cells * sizeof(float)));
    float* partial_g = partial_gx + cells;
    ForEach(g, cells, [=] __device__(int64_t t) {
      p.ChunkSums(t % p.size, t / p.size, &partial_gx[t], &partial_g[t]);
    });
    ForEach(g, p.size, [=] __device__(int64_t c) { p.FromChunks(c, partial_gx, partial_g); });
  }
}

}  // namespace cohort::op
