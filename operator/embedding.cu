// Embedding and take on the GPU (Note [GPU kernels]): a gather forward, a scatter-add of the rows'
// head gradients into the weight gradient backward (atomics: repeated indices add in any order).
// The CPU throws on an index outside [0, input_dim); a kernel cannot, so EmbeddingRow clamps the
// index into the table, as MXNet's GPU Embedding (take with mode clip) does.
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/embedding.h"

namespace cohort::op {
namespace {

// y[i, j] = w[idx[i], j]; one thread per output element, so reads of a row coalesce. W is an
// unsigned type of the table's element size: rows of any dtype are copied.
template <typename I, typename W>
void ForwardTyped(const GpuResources::Impl& g, const NDArray& data, const NDArray& weight,
                  const NDArray& out, int64_t input_dim, int64_t output_dim, bool wrap) {
  const I* idx = static_cast<const I*>(data.raw_data());
  const W* w = static_cast<const W*>(weight.raw_data());
  W* y = static_cast<W*>(out.raw_data());
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

// The same for tables of other dtypes: a thread per table element adds the rows' gradients
// that land on it in index order, with no atomics (exact and deterministic for integers and
// half types; take's gradients, not Embedding's hot path).
template <typename I, typename T>
void BackwardGatherTyped(const GpuResources::Impl& g, const NDArray& out_grad, const NDArray& data,
                         const NDArray& table_grad, int64_t input_dim, int64_t output_dim,
                         bool wrap) {
  const I* idx = static_cast<const I*>(data.raw_data());
  const T* dy = static_cast<const T*>(out_grad.raw_data());
  T* dw = static_cast<T*>(table_grad.raw_data());
  const int64_t d = output_dim, n = data.size();
  ForEach(g, table_grad.size(), [=] __device__(int64_t k) {
    const int64_t row = k / d, col = k % d;
    for (int64_t i = 0; i < n; ++i) {
      if (EmbeddingRow(idx[i], input_dim, wrap) == row) AddInto(&dw[k], dy[i * d + col]);
    }
  });
}

template <typename Fn>
void DispatchElementSize(size_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    default: return fn(uint64_t{});
  }
}

}  // namespace

void EmbeddingForwardGpu(const OpContext& ctx, const NDArray& data, const NDArray& weight,
                         const NDArray& out, int64_t input_dim, int64_t output_dim, bool wrap) {
  DispatchIndex(data.dtype(), [&](auto tag) {
    DispatchElementSize(DTypeSize(weight.dtype()), [&](auto bits) {
      ForwardTyped<decltype(tag), decltype(bits)>(Gpu(ctx), data, weight, out, input_dim,
                                                  output_dim, wrap);
    });
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
    using I = decltype(tag);
    if (table_grad.dtype() == DType::kFloat32) {
      BackwardTyped<I>(g, out_grad, data, table_grad, input_dim, output_dim, wrap);
      return;
    }
    DispatchArithmetic("take", table_grad.dtype(), [&](auto value) {
      BackwardGatherTyped<I, decltype(value)>(g, out_grad, data, table_grad, input_dim, output_dim,
                                              wrap);
    });
  });
}

}  // namespace cohort::op
