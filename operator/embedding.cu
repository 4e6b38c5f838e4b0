// Embedding and take on the GPU (Note [GPU kernels]): a gather forward, a scatter-add of the rows'
// head gradients into the weight gradient backward (atomics: repeated indices add in any order).
// The CPU throws on an index outside [0, input_dim); a kernel cannot, so EmbeddingRow clamps the
// index into the table, as MXNet's GPU Embedding (take with mode clip) does.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/embedding.h"

namespace cohort::op {
namespace {

// y[i, j] = w[idx[i], j]; one thread per output element, so reads of a row coalesce.
template <typename I>
void ForwardTyped(const GpuResources::Impl& g, const NDArray& data, const NDArray& weight,
                  const NDArray& out, int64_t input_dim, int64_t output_dim, bool wrap) {
  const I* idx = static_cast<const I*>(data.raw_data());
  const float* w = G(weight);
  float* y = G(out);
  const int64_t d = output_dim;
  ForEach(g, data.size() * d, [=] __device__(int64_t k) {
    y[k] = w[EmbeddingRow(idx[k / d], input_dim, wrap) * d + k % d];
  });
}

// dw[idx[i], j] += dy[i, j].
template <typename I>
void BackwardTyped(const GpuResources::Impl& g, const NDArray& out_grad, const NDArray& data,
                   const NDArray& table_grad, int64_t input_dim, int64_t output_dim, bool wrap) {
  const I* idx = static_cast<const I*>(data.raw_data());
  const float* dy = G(out_grad);
  float* dw = G(table_grad);
  const int64_t d = output_dim;
  ForEach(g, data.size() * d, [=] __device__(int64_t k) {
    atomicAdd(dw + EmbeddingRow(idx[k / d], input_dim, wrap) * d + k % d, dy[k]);
  });
}

}  // namespace

void EmbeddingForwardGpu(const OpContext& ctx, const NDArray& data, const NDArray& weight,
                         const NDArray& out, int64_t input_dim, int64_t output_dim, bool wrap) {
  DispatchIndex(data.dtype(), [&](auto tag) {
    ForwardTyped<decltype(tag)>(Gpu(ctx), data, weight, out, input_dim, output_dim, wrap);
  });
}

// The indices get no gradient (zeros for kWrite, as on the CPU, whatever their dtype).
void EmbeddingBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& data,
                          GradReq index_req, const NDArray& index_grad, GradReq table_req,
                          const NDArray& table_grad, int64_t input_dim, int64_t output_dim,
                          bool wrap) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (index_req == GradReq::kWrite && index_grad.size() > 0) {
    CUDA_CHECK(cudaMemsetAsync(index_grad.raw_data(), 0, index_grad.nbytes(), g.stream));
  }
  if (table_req == GradReq::kNull) return;
  if (table_req == GradReq::kWrite) ZeroOnStream(g, table_grad);
  DispatchIndex(data.dtype(), [&](auto tag) {
    BackwardTyped<decltype(tag)>(g, out_grad, data, table_grad, input_dim, output_dim, wrap);
  });
}

}  // namespace cohort::op
