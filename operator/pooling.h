// Pooling (2-D, NCHW; max, avg, sum; global; "valid" and "full"): the parameters, the window
// geometry and the per-window math, shared by the CPU loops (pooling.cc) and the CUDA kernels
// (pooling.cu), which walk each window in the same order and so agree to the bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"
#include "base/shape.h"
#include "operator/common/operator.h"

namespace cohort::op {

enum class PoolType { kMax, kAvg, kSum };
inline constexpr const char* kPoolTypeNames[] = {"max", "avg", "sum"};
enum class PoolingConvention { kValid, kFull };
inline constexpr const char* kPoolingConventionNames[] = {"valid", "full"};

// The geometry of one pooling over planes of h x w: kernel, stride and pad as resolved for the
// input (global pooling included) and the output size.
struct PoolWindow {
  int64_t h, w, kh, kw, sh, sw, ph, pw, out_h, out_w;
  bool count_include_pad;
};

struct PoolingParam {
  Shape kernel = {};
  PoolType pool_type = PoolType::kMax;
  bool global_pool = false;
  PoolingConvention pooling_convention = PoolingConvention::kValid;
  Shape stride = {1, 1};
  Shape pad = {0, 0};
  bool count_include_pad = true;

  static PoolingParam Parse(const Attrs& attrs);
  Attrs ToAttrs() const;
  // The window for data of shape (batch, channel, height, width).
  PoolWindow WindowFor(const Shape& data) const;
};

// The window of output (oy, ox) clipped to the image, with MXNet's avg divisor.
struct PoolSpan {
  int64_t y0, y1, x0, x1;
  float count;
};
COHORT_HOST_DEVICE PoolSpan PoolSpanAt(const PoolWindow& w, int64_t oy, int64_t ox) {
  int64_t y0 = oy * w.sh - w.ph, x0 = ox * w.sw - w.pw;
  int64_t y1 = y0 + w.kh < w.h + w.ph ? y0 + w.kh : w.h + w.ph;
  int64_t x1 = x0 + w.kw < w.w + w.pw ? x0 + w.kw : w.w + w.pw;
  const float padded = static_cast<float>((y1 - y0) * (x1 - x0));
  y0 = y0 < 0 ? 0 : y0;
  x0 = x0 < 0 ? 0 : x0;
  y1 = y1 < w.h ? y1 : w.h;
  x1 = x1 < w.w ? x1 : w.w;
  const float inside = static_cast<float>((y1 - y0) * (x1 - x0));
  return {y0, y1, x0, x1, w.count_include_pad ? padded : (inside < 1.0f ? 1.0f : inside)};
}

// Output (oy, ox) of one plane: the window's maximum (std::max's order, which passes over NaNs
// after the first element), sum, or sum / count, in row-major order.
COHORT_HOST_DEVICE float PoolValue(const PoolWindow& w, PoolType type, const float* plane,
                                   int64_t oy, int64_t ox) {
  const PoolSpan s = PoolSpanAt(w, oy, ox);
  if (type == PoolType::kMax) {
    float v = -INFINITY;
    for (int64_t yy = s.y0; yy < s.y1; ++yy) {
      for (int64_t xx = s.x0; xx < s.x1; ++xx) {
        const float a = plane[yy * w.w + xx];
        v = v < a ? a : v;
      }
    }
    return v;
  }
  float sum = 0;
  for (int64_t yy = s.y0; yy < s.y1; ++yy) {
    for (int64_t xx = s.x0; xx < s.x1; ++xx) sum += plane[yy * w.w + xx];
  }
  return type == PoolType::kSum ? sum : sum / s.count;
}

// The element of window (oy, ox) that takes its gradient in max pooling: the first maximum in
// row-major order (a later element must be strictly greater), as a plane offset; -1 for a window
// with no elements.
COHORT_HOST_DEVICE int32_t PoolArgMax(const PoolWindow& w, const float* plane, int64_t oy,
                                      int64_t ox) {
  const PoolSpan s = PoolSpanAt(w, oy, ox);
  int64_t best = -1;
  float v = -INFINITY;
  for (int64_t yy = s.y0; yy < s.y1; ++yy) {
    for (int64_t xx = s.x0; xx < s.x1; ++xx) {
      if (best < 0 || plane[yy * w.w + xx] > v) {
        v = plane[yy * w.w + xx];
        best = yy * w.w + xx;
      }
    }
  }
  return static_cast<int32_t>(best);
}

// Outputs [*lo, *hi] whose windows (before clipping to the image) cover input coordinate `at`:
// o*s - p <= at < o*s - p + k. Clipping never removes an input coordinate from a window.
COHORT_HOST_DEVICE void PoolCoveringWindows(int64_t at, int64_t k, int64_t s, int64_t p,
                                            int64_t out, int64_t* lo, int64_t* hi) {
  const int64_t first = at + p - k + 1;  // o*s >= first
  *lo = first <= 0 ? 0 : (first + s - 1) / s;
  *hi = (at + p) / s < out - 1 ? (at + p) / s : out - 1;
}

// The gradient of input (yy, xx) of one plane, gathered from the windows that cover it in
// row-major window order onto `acc` (0, or the old gradient for kAdd): no atomics, and the same
// sums on either side. `best` holds each window's PoolArgMax (read only by max pooling).
COHORT_HOST_DEVICE float PoolGradAt(const PoolWindow& w, PoolType type, const float* dy,
                                    const int32_t* best, int64_t yy, int64_t xx, float acc) {
  int64_t oy0, oy1, ox0, ox1;
  PoolCoveringWindows(yy, w.kh, w.sh, w.ph, w.out_h, &oy0, &oy1);
  PoolCoveringWindows(xx, w.kw, w.sw, w.pw, w.out_w, &ox0, &ox1);
  const int64_t offset = yy * w.w + xx;
  for (int64_t oy = oy0; oy <= oy1; ++oy) {
    for (int64_t ox = ox0; ox <= ox1; ++ox) {
      const int64_t o = oy * w.out_w + ox;
      if (type == PoolType::kMax) {
        if (best[o] == offset) acc += dy[o];
      } else {
        acc += type == PoolType::kSum ? dy[o] : dy[o] / PoolSpanAt(w, oy, ox).count;
      }
    }
  }
  return acc;
}

}  // namespace cohort::op
