// LayerNorm: the parameters and the row bodies (Note [Row lanes]) that the CPU kernel
// (layer_norm.cc) and the CUDA kernel (layer_norm.cu) both run. A row is the `size` values
// along `axis` at one position of the other axes; mean and std have the data's shape with that
// axis 1, gamma and beta one value per position along it.
#pragma once

#include <cmath>
#include <cstdint>

#include "operator/common/shared_kernel.h"

namespace cohort::op {

struct LayerNormParam {
  int axis = -1;
  float eps = 1e-5f;
  bool output_mean_var = false;

  static LayerNormParam Parse(const Attrs& attrs);
};

// The index of the row that starts at `base` in the (outer, 1, inner) mean and std arrays.
COHORT_HOST_DEVICE int64_t LayerNormRowOf(int64_t base, int64_t size, int64_t inner) {
  return base / (size * inner) * inner + base % inner;
}

// y = (x - mean) / std · gamma + beta with std = √(var + eps); saves mean and std. y may be x.
struct LayerNormRows {
  const float *x, *gamma, *beta;
  float *y, *mean, *std;
  int64_t size, stride;  // stride = inner
  float eps;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    RunRowWithStride(*this, lanes, base, stride);
  }

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes, typename Stride>
  COHORT_HOST_DEVICE void Row(Lanes lanes, int64_t base, Stride s) const {
    const float* xr = x + base;
    const float n = static_cast<float>(size);
    const float m = lanes.Sum(size, [&](int64_t c) { return xr[c * s]; }) / n;
    const float squares = lanes.Sum(size, [&](int64_t c) {
      const float d = xr[c * s] - m;
      return d * d;
    });
    const float sd = sqrtf(squares / n + eps);
    const int64_t row = LayerNormRowOf(base, size, stride);
    if (lanes.first() == 0) {
      mean[row] = m;
      std[row] = sd;
    }
    float* yr = y + base;
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      yr[c * s] = (xr[c * s] - m) / sd * gamma[c] + beta[c];
    }
  }
};

// dx (=|+=) (g·gamma - mean(g·gamma) - x̂ · mean(g·gamma·x̂)) / std per row, x̂ = (x - mean) / std.
struct LayerNormGradRows {
  const float *x, *dy, *gamma, *mean, *std;
  float* dx;
  int64_t size, stride;
  GradReq req;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    RunRowWithStride(*this, lanes, base, stride);
  }

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes, typename Stride>
  COHORT_HOST_DEVICE void Row(Lanes lanes, int64_t base, Stride step) const {
    const int64_t row = LayerNormRowOf(base, size, stride);
    const float m = mean[row], s = std[row];
    const float n = static_cast<float>(size);
    const float a = lanes.Sum(size, [&](int64_t c) { return dy[base + c * step] * gamma[c]; }) / n;
    const float b = lanes.Sum(size, [&](int64_t c) {
      const int64_t k = base + c * step;
      return dy[k] * gamma[c] * ((x[k] - m) / s);
    }) / n;
    WriteRowGrad(lanes, size, base, step, req, dx, [&](int64_t c, int64_t k) {
      const float xhat = (x[k] - m) / s;
      return (dy[k] * gamma[c] - a - xhat * b) / s;
    });
  }
};

// gamma's and beta's gradients at position c along the axis: Σ over rows of g·x̂ and of g, the
// rows in order (the GPU's form, one thread per position; the CPU runs LayerNormParamGradRows).
struct LayerNormParamGrads {
  const float *x, *dy, *mean, *std;
  float *dgamma, *dbeta;  // either may be null (not wanted)
  GradReq req_gamma, req_beta;
  int64_t outer, size, inner;

  COHORT_HOST_DEVICE void operator()(int64_t c) const {
    float sum_gx = 0, sum_g = 0;
    for (int64_t r = 0; r < outer * inner; ++r) {
      const int64_t k = RowBase(r, size, inner) + c * inner;
      sum_gx += dy[k] * ((x[k] - mean[r]) / std[r]);
      sum_g += dy[k];
    }
    if (dgamma) AssignReq(req_gamma, dgamma, c, sum_gx);
    if (dbeta) AssignReq(req_beta, dbeta, c, sum_g);
  }
};

// The same sums for positions [c0, c1), rows outer (reads follow memory when the axis is last):
// each position adds its rows in the order LayerNormParamGrads does, so the same bits. sum_gx and
// sum_g hold c1 - c0 floats of scratch.
// `Stride` is p.inner's type: UnitStride when the axis is last, so the inner loop vectorizes.
template <typename Stride>
COHORT_HOST_DEVICE void LayerNormParamGradRows(const LayerNormParamGrads& p, Stride inner,
                                               int64_t c0, int64_t c1, float* __restrict__ sum_gx,
                                               float* __restrict__ sum_g) {
  for (int64_t c = c0; c < c1; ++c) sum_gx[c - c0] = sum_g[c - c0] = 0;
  for (int64_t r = 0; r < p.outer * p.inner; ++r) {
    const int64_t base = RowBase(r, p.size, p.inner);
    const float m = p.mean[r], s = p.std[r];
    const float* dy = p.dy + base;
    const float* x = p.x + base;
    for (int64_t c = c0; c < c1; ++c) {
      sum_gx[c - c0] += dy[c * inner] * ((x[c * inner] - m) / s);
      sum_g[c - c0] += dy[c * inner];
    }
  }
  for (int64_t c = c0; c < c1; ++c) {
    if (p.dgamma) AssignReq(p.req_gamma, p.dgamma, c, sum_gx[c - c0]);
    if (p.dbeta) AssignReq(p.req_beta, p.dbeta, c, sum_g[c - c0]);
  }
}

}  // namespace cohort::op
