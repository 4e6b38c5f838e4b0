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
  DType out_dtype = DType::kFloat32;  // _layer_norm's (Note [LayerNorm cast fusion])

  // LayerNorm's attributes, or with `fused` _layer_norm's (LayerNorm's and out_dtype).
  static LayerNormParam Parse(const Attrs& attrs, bool fused = false);
};

// The index of the row that starts at `base` in the (outer, 1, inner) mean and std arrays.
COHORT_HOST_DEVICE int64_t LayerNormRowOf(int64_t base, int64_t size, int64_t inner) {
  return base / (size * inner) * inner + base % inner;
}

// y = (x - mean) / std · gamma + beta with std = √(var + eps); saves mean and std. A float32 y may
// be x.
// T is y's type: float, or float16/bfloat16 for _layer_norm (each value rounded once).
template <typename T>
struct LayerNormRowsOf {
  const float *x, *gamma, *beta;
  T* y;
  float *mean, *std;
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
    T* yr = y + base;
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      yr[c * s] = T((xr[c * s] - m) / sd * gamma[c] + beta[c]);
    }
  }
};
using LayerNormRows = LayerNormRowsOf<float>;

// dx (=|+=) (g·gamma - mean(g·gamma) - x̂ · mean(g·gamma·x̂)) / std per row, x̂ = (x - mean) / std.
// T is dy's type (y's).
template <typename T>
struct LayerNormGradRowsOf {
  const float* x;
  const T* dy;
  const float *gamma, *mean, *std;
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
    const float a = lanes.Sum(size, [&](int64_t c) { return Dy(base + c * step) * gamma[c]; }) / n;
    const float b = lanes.Sum(size, [&](int64_t c) {
      const int64_t k = base + c * step;
      return Dy(k) * gamma[c] * ((x[k] - m) / s);
    }) / n;
    WriteRowGrad(lanes, size, base, step, req, dx, [&](int64_t c, int64_t k) {
      const float xhat = (x[k] - m) / s;
      return (Dy(k) * gamma[c] - a - xhat * b) / s;
    });
  }
  // The output gradient at k, widened.
  COHORT_HOST_DEVICE float Dy(int64_t k) const { return static_cast<float>(dy[k]); }
};
using LayerNormGradRows = LayerNormGradRowsOf<float>;

// Note [Column sums in chunks]
// gamma's and beta's gradients are sums over every row at one position along the axis, and the
// rows may be many (batch x sequence) where the positions are few (d_model): one GPU thread per
// position would add thousands of rows alone, one after another. Both sides therefore add the
// rows in chunks of LayerNormRowChunk(rows) consecutive rows, each chunk in row order from 0,
// then the chunks' sums in chunk order from 0. The GPU gives each (chunk, position) a thread
// (ChunkSums, into the workspace) and each position a second pass (FromChunks); the CPU adds
// the same chunks in the same order over runs of positions (LayerNormParamGradRows).
COHORT_HOST_DEVICE int64_t LayerNormRowChunk(int64_t rows) {
  constexpr int64_t kMinRows = 64, kMaxChunks = 256;  // bounds the GPU's workspace
  const int64_t spread = (rows + kMaxChunks - 1) / kMaxChunks;
  return spread > kMinRows ? spread : kMinRows;
}

// gamma's and beta's gradients at position c along the axis: Σ over rows of g·x̂ and of g; T is
// dy's type.
template <typename T>
struct LayerNormParamGradsOf {
  const float* x;
  const T* dy;
  const float *mean, *std;
  float *dgamma, *dbeta;  // either may be null (not wanted)
  GradReq req_gamma, req_beta;
  int64_t outer, size, inner;

  COHORT_HOST_DEVICE int64_t rows() const { return outer * inner; }
  COHORT_HOST_DEVICE int64_t chunks() const {
    const int64_t chunk = LayerNormRowChunk(rows());
    return (rows() + chunk - 1) / chunk;
  }
  // Σ over chunk k's rows, in order, of g·x̂ and of g at position c.
  COHORT_HOST_DEVICE void ChunkSums(int64_t c, int64_t k, float* gx, float* g) const {
    const int64_t chunk = LayerNormRowChunk(rows());
    const int64_t r1 = (k + 1) * chunk < rows() ? (k + 1) * chunk : rows();
    float sum_gx = 0, sum_g = 0;
    for (int64_t r = k * chunk; r < r1; ++r) {
      const int64_t i = RowBase(r, size, inner) + c * inner;
      const float g = static_cast<float>(dy[i]);
      sum_gx += g * ((x[i] - mean[r]) / std[r]);
      sum_g += g;
    }
    *gx = sum_gx;
    *g = sum_g;
  }
  COHORT_HOST_DEVICE void Assign(int64_t c, float sum_gx, float sum_g) const {
    if (dgamma) AssignReq(req_gamma, dgamma, c, sum_gx);
    if (dbeta) AssignReq(req_beta, dbeta, c, sum_g);
  }
  // Position c's gradients from the chunks' sums (chunk k's at partial_*[k * size + c]).
  COHORT_HOST_DEVICE void FromChunks(int64_t c, const float* partial_gx,
                                     const float* partial_g) const {
    Assign(c, SumInOrder(partial_gx + c, chunks(), size),
           SumInOrder(partial_g + c, chunks(), size));
  }
};
using LayerNormParamGrads = LayerNormParamGradsOf<float>;

// The same sums for positions [c0, c1), chunk by chunk with the rows of each in order (reads
// follow memory when the axis is last): the order of Note [Column sums in chunks]. sum_* and
// chunk_* hold c1 - c0 floats of scratch each.
// `Stride` is p.inner's type: UnitStride when the axis is last, so the inner loop vectorizes.
template <typename T, typename Stride>
COHORT_HOST_DEVICE void LayerNormParamGradRows(const LayerNormParamGradsOf<T>& p, Stride inner,
                                               int64_t c0, int64_t c1, float* __restrict__ sum_gx,
                                               float* __restrict__ sum_g,
                                               float* __restrict__ chunk_gx,
                                               float* __restrict__ chunk_g) {
  const int64_t n = c1 - c0, rows = p.rows(), chunk = LayerNormRowChunk(rows);
  for (int64_t c = 0; c < n; ++c) sum_gx[c] = sum_g[c] = 0;
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    for (int64_t c = 0; c < n; ++c) chunk_gx[c] = chunk_g[c] = 0;
    const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = RowBase(r, p.size, p.inner);
      const float m = p.mean[r], s = p.std[r];
      const T* dy = p.dy + base + c0 * inner;
      const float* x = p.x + base + c0 * inner;
      for (int64_t c = 0; c < n; ++c) {
        const float g = static_cast<float>(dy[c * inner]);
        chunk_gx[c] += g * ((x[c * inner] - m) / s);
        chunk_g[c] += g;
      }
    }
    for (int64_t c = 0; c < n; ++c) {
      sum_gx[c] += chunk_gx[c];
      sum_g[c] += chunk_g[c];
    }
  }
  for (int64_t c = 0; c < n; ++c) p.Assign(c0 + c, sum_gx[c], sum_g[c]);
}

}  // namespace cohort::op
