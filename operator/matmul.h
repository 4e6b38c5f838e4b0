// dot and batch_dot: the parameters, the shapes, and which matrix products compute the output
// and each gradient. The CPU kernel (matmul.cc) runs the products with OpenBLAS (float16 and
// bfloat16: Note [Low-precision GEMM]), the CUDA kernel (matmul.cu) with cuBLAS's strided
// batched GEMMs; the products are listed here once.
#pragma once

#include <cstdint>
#include <string>

#include "operator/common/operator.h"

namespace cohort::op {

struct MatmulParam {
  bool transpose_a = false;
  bool transpose_b = false;

  static MatmulParam Parse(const std::string& op, const Attrs& attrs);
};

// Row-major c[i] = op(a[i]) · op(b[i]) + beta · c[i] for i < batch; op(a) is m×k, op(b) k×n;
// every matrix of `dtype` (float32, float16 or bfloat16: products summed in float32), strides
// in elements.
struct BatchedGemm {
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  float beta = 0;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  DType dtype = DType::kFloat32;
};

// One product of `batch` pairs: lhs is batch × (m×k after transpose_a), rhs batch × (k×n).
struct MatmulDims {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

// dot flattens lhs to 2-d around its last axis (its first with transpose_a) and rhs around its
// first (its last with transpose_b); batch_dot multiplies matching matrices of the last two
// axes, the leading axes equal. Throws naming the op and both shapes when they do not fit.
MatmulDims MatmulDimsOf(bool batched, const MatmulParam& p, const Shape& lhs, const Shape& rhs,
                        Shape* out);

inline BatchedGemm MatmulForward(const MatmulParam& p, const MatmulDims& d, const void* lhs,
                                 const void* rhs, void* out) {
  return {p.transpose_a, p.transpose_b, d.m,     d.n,       d.k,       lhs,      rhs,
          out,           0.0f,          d.batch, d.m * d.k, d.k * d.n, d.m * d.n};
}

// dlhs = dout · op(rhs)ᵀ (or, with transpose_a, its transpose op(rhs) · doutᵀ).
inline BatchedGemm MatmulLhsGrad(const MatmulParam& p, const MatmulDims& d, const void* dout,
                                 const void* rhs, void* dlhs, float beta) {
  if (!p.transpose_a) {
    return {false, !p.transpose_b, d.m,     d.k,       d.n,       dout,     rhs,
            dlhs,  beta,           d.batch, d.m * d.n, d.k * d.n, d.m * d.k};
  }
  return {p.transpose_b, true, d.k,     d.m,       d.n,       rhs,      dout,
          dlhs,          beta, d.batch, d.k * d.n, d.m * d.n, d.m * d.k};
}

// drhs = op(lhs)ᵀ · dout (or, with transpose_b, its transpose doutᵀ · op(lhs)).
inline BatchedGemm MatmulRhsGrad(const MatmulParam& p, const MatmulDims& d, const void* lhs,
                                 const void* dout, void* drhs, float beta) {
  if (!p.transpose_b) {
    return {!p.transpose_a, false, d.k,     d.n,       d.m,       lhs,      dout,
            drhs,           beta,  d.batch, d.m * d.k, d.m * d.n, d.k * d.n};
  }
  return {true, p.transpose_a, d.n,     d.k,       d.m,       dout,     lhs,
          drhs, beta,          d.batch, d.m * d.n, d.m * d.k, d.k * d.n};
}

}  // namespace cohort::op
