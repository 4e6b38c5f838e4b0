// sort, argsort and topk on the GPU (Note [GPU kernels]): a thread an input element finds its
// rank in its row by sort.h's order (a row's elements compared with all the others: rows of up
// to a few thousand) and writes itself there if kept; backward scatters the values' gradient to
// their positions (distinct within a row: no races).
#include "operator/common/pointwise_gpu.cuh"
#include "operator/sort.h"

namespace cohort::op {

void SortForwardGpu(const OpContext& ctx, const SortParam& p, const NDArray& in,
                    const NDArray& values, const NDArray& positions, const NDArray& mask) {
  int64_t outer, size, inner;
  p.Rows(in.shape(), &outer, &size, &inner);
  const int64_t kept = p.Kept(size);
  const float* x = G(in);
  float* v = values.is_none() ? nullptr : G(values);
  float* pos = positions.is_none() ? nullptr : G(positions);
  float* m = mask.is_none() ? nullptr : G(mask);
  const bool ascend = p.ascend;
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t e) {
    const int64_t o = e / (size * inner), c = e / inner % size, i = e % inner;
    const float* row = x + o * size * inner + i;
    const int64_t rank = SortRank(row, size, inner, c, ascend);
    if (m) m[e] = rank < kept ? 1.0f : 0.0f;
    if (rank >= kept) return;
    const int64_t to = o * kept * inner + rank * inner + i;
    if (v) v[to] = row[c * inner];
    if (pos) pos[to] = static_cast<float>(c);
  });
}

void SortBackwardGpu(const OpContext& ctx, const SortParam& p, GradReq req, const NDArray& dy,
                     const NDArray& positions, const NDArray& dx) {
  if (req == GradReq::kNull) return;
  const GpuResources::Impl& g = Gpu(ctx);
  if (req == GradReq::kWrite) ZeroOnStream(g, dx);
  if (positions.is_none()) return;  // positions and masks: no gradient
  int64_t outer, size, inner;
  p.Rows(dx.shape(), &outer, &size, &inner);
  const int64_t kept = p.Kept(size);
  const float* d = G(dy);
  const float* pos = G(positions);
  float* out = G(dx);
  ForEach(g, dy.size(), [=] __device__(int64_t from) {
    const int64_t o = from / (kept * inner), i = from % inner;
    out[o * size * inner + static_cast<int64_t>(pos[from]) * inner + i] += d[from];
  });
}

}  // namespace cohort::op
