// LayerNorm on the GPU (Note [GPU kernels]): layer_norm.h's row bodies, one row per block or
// thread (Note [Row lanes]), and its column sums in chunks of rows (Note [Column sums in
// chunks]).
#include "operator/common/pointwise_gpu.cuh"
#include "operator/layer_norm.h"

namespace cohort::op {

// T: the output's type, float or (_layer_norm's) float16/bfloat16.
template <typename T>
void LayerNormForwardGpu(const OpContext& ctx, const LayerNormRowsOf<T>& rows, int64_t outer,
                         int64_t inner) {
  ForEachRow(Gpu(ctx), outer, rows.size, inner, rows);
}

template <typename T>
void LayerNormBackwardGpu(const OpContext& ctx, const LayerNormGradRowsOf<T>* rows,
                          const LayerNormParamGradsOf<T>* params, int64_t outer, int64_t inner) {
  GpuResources::Impl& g = Gpu(ctx);
  if (rows) ForEachRow(g, outer, rows->size, inner, *rows);
  if (params) {  // Note [Column sums in chunks]: a thread per (chunk, position), then per position
    const LayerNormParamGradsOf<T> p = *params;
    const int64_t cells = p.chunks() * p.size;
    float* partial_gx = static_cast<float*>(g.Workspace(2 * cells * sizeof(float)));
    float* partial_g = partial_gx + cells;
    ForEach(g, cells, [=] __device__(int64_t t) {
      p.ChunkSums(t % p.size, t / p.size, &partial_gx[t], &partial_g[t]);
    });
    ForEach(g, p.size, [=] __device__(int64_t c) { p.FromChunks(c, partial_gx, partial_g); });
  }
}

#define COHORT_LAYER_NORM_GPU(T)                                                          \
  template void LayerNormForwardGpu(const OpContext&, const LayerNormRowsOf<T>&, int64_t, \
                                    int64_t);                                             \
  template void LayerNormBackwardGpu(const OpContext&, const LayerNormGradRowsOf<T>*,     \
                                     const LayerNormParamGradsOf<T>*, int64_t, int64_t);
COHORT_LAYER_NORM_GPU(float)
COHORT_LAYER_NORM_GPU(float16)
COHORT_LAYER_NORM_GPU(bfloat16)
#undef COHORT_LAYER_NORM_GPU

}  // namespace cohort::op
