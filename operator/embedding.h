// Embedding and take: the parameters and the row lookup that the CPU kernel (embedding.cc) and
// the CUDA kernel (embedding.cu) share. take(a, indices) is Embedding with a as the table (its
// rows the slices of axis 0) and a choice of what out-of-range indices mean. Indices may be
// float32, int32 or int64; the table and the output are float32.
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct EmbeddingParam {
  int64_t input_dim = 0;
  int64_t output_dim = 0;

  static EmbeddingParam Parse(const Attrs& attrs);
};

// Whether an index (float32, truncated as MXNet does, or int32/int64) names a row of the table.
// The CPU refuses one that does not; a GPU kernel cannot, and EmbeddingRow clamps it into the
// table, as MXNet's GPU Embedding (take with mode clip) does.
template <typename I>
COHORT_HOST_DEVICE bool EmbeddingIndexValid(I index, int64_t input_dim) {
  const int64_t row = static_cast<int64_t>(index);
  return row >= 0 && row < input_dim;
}
// With `wrap` (take's mode "wrap") an index counts modulo the table's rows instead.
template <typename I>
COHORT_HOST_DEVICE int64_t EmbeddingRow(I index, int64_t input_dim, bool wrap = false) {
  const int64_t row = static_cast<int64_t>(index);
  if (wrap) {
    const int64_t r = row % input_dim;
    return r < 0 ? r + input_dim : r;
  }
  return row < 0 ? 0 : row >= input_dim ? input_dim - 1 : row;
}

// The index dtypes: float32 (MXNet's default), int32 and int64. Calls fn(I{}).
template <typename Fn>
void DispatchIndex(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt64: return fn(int64_t{});
    default: break;
  }
  COHORT_THROW() << "Embedding/take: indices of dtype " << dtype
                 << " (float32, int32 or int64 expected)";
}

// take's handling of indices outside [0, rows): MXNet's modes.
enum class TakeMode { kClip, kWrap, kRaise };

struct TakeParam {
  TakeMode mode = TakeMode::kClip;

  static TakeParam Parse(const Attrs& attrs);  // only axis 0 is supported
};

}  // namespace cohort::op
