// sort, argsort and topk along an axis: the parameters, the order (by value, NaN as the largest,
// ties by position: a stable order) and each element's rank in it, shared by the CPU kernel
// (sort.cc, which sorts each row) and the CUDA kernel (sort.cu, a thread an element counting
// the elements before it). Values in any numeric dtype; positions in `dtype` (float32 by
// default, as MXNet); the values' gradient (float32) goes back to the positions it came from,
// the positions' and the mask's is zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/dtype.h"
#include "base/half.h"
#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

enum class SortOutput { kValue, kIndices, kMask, kBoth };

struct SortParam {
  std::optional<int> axis = -1;  // none: the flattened input
  int64_t k = 0;                 // topk: how many (< 1: all); sort and argsort: all
  SortOutput ret = SortOutput::kValue;
  bool ascend = true;
  DType position_dtype = DType::kFloat32;  // argsort's and topk's `dtype`

  // `op` is "sort", "argsort" or "topk" (whose defaults differ: descending, k 1, indices).
  static SortParam Parse(const std::string& op, const Attrs& attrs);
  // The input as (outer, size, inner) rows along the axis.
  void Rows(const Shape& in, int64_t* outer, int64_t* size, int64_t* inner) const;
  // How many of each row are kept.
  int64_t Kept(int64_t size) const { return k < 1 || k > size ? size : k; }
  // The shape of the values and positions (the mask has the input's).
  Shape OutShape(const Shape& in) const;
};

// Whether element a at position ia of a row comes before b at ib (values of any numeric type,
// compared in their ComputeType).
template <typename C>
COHORT_HOST_DEVICE bool SortsBefore(C a, int64_t ia, C b, int64_t ib, bool ascend) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return ia < ib;
    return ascend ? b_nan : a_nan;  // NaN sorts as the largest value
  }
  if (a != b) return ascend ? a < b : a > b;
  return ia < ib;
}

// The rank of element c of a row of `size` elements `stride` apart: how many come before it.
template <typename T>
COHORT_HOST_DEVICE int64_t SortRank(const T* row, int64_t size, int64_t stride, int64_t c,
                                    bool ascend) {
  using C = ComputeType<T>;
  const C v = static_cast<C>(row[c * stride]);
  int64_t rank = 0;
  for (int64_t k = 0; k < size; ++k) {
    rank += SortsBefore<C>(static_cast<C>(row[k * stride]), k, v, c, ascend);
  }
  return rank;
}

// Positions are stored in the dtype asked for (MXNet's `dtype`: float32 by default).
COHORT_HOST_DEVICE void StorePosition(void* positions, DType dtype, int64_t at, int64_t value) {
  switch (dtype) {
    case DType::kFloat64: static_cast<double*>(positions)[at] = static_cast<double>(value); break;
    case DType::kFloat16:
      static_cast<float16*>(positions)[at] = float16(static_cast<float>(value));
      break;
    case DType::kInt32: static_cast<int32_t*>(positions)[at] = static_cast<int32_t>(value); break;
    case DType::kInt64: static_cast<int64_t*>(positions)[at] = value; break;
    case DType::kUint8: static_cast<uint8_t*>(positions)[at] = static_cast<uint8_t>(value); break;
    default: static_cast<float*>(positions)[at] = static_cast<float>(value); break;
  }
}
COHORT_HOST_DEVICE int64_t LoadPosition(const void* positions, DType dtype, int64_t at) {
  switch (dtype) {
    case DType::kFloat64: return static_cast<int64_t>(static_cast<const double*>(positions)[at]);
    case DType::kFloat16:
      return static_cast<int64_t>(static_cast<float>(static_cast<const float16*>(positions)[at]));
    case DType::kInt32: return static_cast<const int32_t*>(positions)[at];
    case DType::kInt64: return static_cast<const int64_t*>(positions)[at];
    case DType::kUint8: return static_cast<const uint8_t*>(positions)[at];
    default: return static_cast<int64_t>(static_cast<const float*>(positions)[at]);
  }
}

// sort.cu (Note [GPU kernels]): values, positions (float, may be none) or a mask (may be none)
// of each row's first `kept` elements in order; then the values' gradient back to its positions
// (none: a zero gradient).
void SortForwardGpu(const OpContext& ctx, const SortParam& p, const NDArray& in,
                    const NDArray& values, const NDArray& positions, const NDArray& mask);
void SortBackwardGpu(const OpContext& ctx, const SortParam& p, GradReq req, const NDArray& dy,
                     const NDArray& positions, const NDArray& dx);

}  // namespace cohort::op
