// sort, argsort and topk on the GPU (Note [GPU kernels]): a thread an input element finds its
// rank in its row by sort.h's order (a row's elements compared with all the others: rows of up
// to a few thousand) and writes itself there if kept; backward scatters the values' gradient to
// their positions (distinct within a row: no races).
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/sort.h"

namespace cohort::op {

namespace {

template <typename T>
void SortForwardTyped(const GpuResources::Impl& g, const SortParam& p, const NDArray& in,
                      const NDArray& values, const NDArray& positions, const NDArray& mask) {
  int64_t outer, size, inner;
  p.Rows(in.shape(), &outer, &size, &inner);
  const int64_t kept = p.Kept(size);
  const T* x = static_cast<const T*>(in.raw_data());
  T* v = values.is_none() ? nullptr : static_cast<T*>(values.raw_data());
  void* pos = positions.is_none() ? nullptr : positions.raw_data();
  T* m = mask.is_none() ? nullptr : static_cast<T*>(mask.raw_data());
  const DType pos_dtype = p.position_dtype;
  const bool ascend = p.ascend;
  ForEach(g, in.size(), [=] __device__(int64_t e) {
    const int64_t o = e / (size * inner), c = e / inner % size, i = e % inner;
    const T* row = x + o * size * inner + i;
    const int64_t rank = SortRank<T>(row, size, inner, c, ascend);
    if (m) m[e] = T(rank < kept ? 1 : 0);
    if (rank >= kept) return;
    const int64_t to = o * kept * inner + rank * inner + i;
    if (v) v[to] = row[c * inner];
    if (pos) StorePosition(pos, pos_dtype, to, c);
  });
}

}  // namespace

void SortForwardGpu(const OpContext& ctx, const SortParam& p, const NDArray& in,
                    const NDArray& values, const NDArray& positions, const NDArray& mask) {
  DispatchArithmetic("sort", in.dtype(), [&](auto tag) {
    SortForwardTyped<decltype(tag)>(Gpu(ctx), p, in, values, positions, mask);
  });
}

// The values' gradient to their positions, in T (a typed function: no __device__ lambda in a
// generic one).
template <typename T>
void SortScatterTyped(const GpuResources::Impl& g, const NDArray& dy, const NDArray& positions,
                      const NDArray& dx, int64_t size, int64_t inner, int64_t kept) {
  const T* d = static_cast<const T*>(dy.raw_data());
  const void* pos = positions.raw_data();
  const DType pos_dtype = positions.dtype();
  T* out = static_cast<T*>(dx.raw_data());
  ForEach(g, dy.size(), [=] __device__(int64_t from) {
    const int64_t o = from / (kept * inner), i = from % inner;
    AddInto(&out[o * size * inner + LoadPosition(pos, pos_dtype, from) * inner + i], d[from]);
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
  DispatchArithmetic("topk", dy.dtype(), [&](auto tag) {
    SortScatterTyped<decltype(tag)>(g, dy, positions, dx, size, inner, kept);
  });
}

}  // namespace cohort::op
