// Cast (alias cast): converts an array to another dtype, as numpy's astype (MXNet's Cast). The
// per-element conversion is shared by the CPU kernel (cast.cc) and the CUDA kernel (cast.cu);
// backward converts the gradient back to the input's dtype. The mixed-precision casts
// (amp_cast, amp_multicast) belong here too.
#pragma once

#include <string>

#include "base/dtype.h"
#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct CastParam {
  DType dtype = DType::kFloat32;
  static CastParam Parse(const Attrs& attrs, const std::string& op = "Cast");
};

// y = x converted to To (add false), or y + x computed in To's compute type (add: a gradient's
// kAdd).
template <typename To, typename From>
COHORT_HOST_DEVICE To CastElement(From x, To y, bool add) {
  if (!add) return ConvertValue<To>(x);
  using C = ComputeType<To>;
  return ConvertValue<To>(ConvertValue<C>(y) + ConvertValue<C>(x));
}

// cast.cu (Note [GPU kernels]): dst (=|+=) src converted, over src.size() elements.
void CastGpu(const OpContext& ctx, const NDArray& src, const NDArray& dst, bool add);
// cast.cu: out (float32) = float(a) + float(b) for a and b of float32, float16 or bfloat16
// (_widening_add, Note [Widening add fusion]).
void WideningAddGpu(const OpContext& ctx, const NDArray& a, const NDArray& b, const NDArray& out);

}  // namespace cohort::op
