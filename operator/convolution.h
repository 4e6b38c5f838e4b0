// Convolution (2-D, NCHW, groups, dilation): the parameters, parsed once, that the CPU kernel
// (convolution.cc: oneDNN or im2col + OpenBLAS) and the CUDA kernel (convolution.cu: cuDNN) both
// take, and the depthwise convolution's own math (Note [Depthwise convolution]).
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "base/shape.h"
#include "operator/common/operator.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

struct ConvolutionParam {
  Shape kernel;
  int64_t num_filter = 0;
  Shape stride = {1, 1};
  Shape dilate = {1, 1};
  Shape pad = {0, 0};
  int64_t num_group = 1;
  bool no_bias = false;

  static ConvolutionParam Parse(const Attrs& attrs);
  Attrs ToAttrs() const;
  // One filter per input channel (MobileNet's depthwise layers): the direct kernel below.
  bool IsDepthwise(int64_t channels) const {
    return channels > 1 && num_group == channels && num_filter == channels;
  }
};

// Note [Depthwise convolution]
// With one filter per channel, im2col + GEMM per group multiplies a 1 x k·k row by a k·k x H·W
// matrix per channel: the copy costs more than the product. Both kernels instead compute
// directly from a channel's plane: output (oy, ox) sums its in-image taps in row-major tap order,
// from 0 (the bias is added after). The CPU walks tap by tap over runs of outputs
// (DepthwiseTapSpan, so the inner loop is branch-free and vectorizes) and the GPU one output per
// thread (DepthwiseOutput): each output adds the same products in the same order. The input
// gradient likewise adds its taps in tap order, and the weight gradient (DepthwiseWeightGrad) is
// one function on both sides: the CPU sums all samples in one call per tap; the GPU, whose
// channels x taps threads would each add the whole batch alone, gives each (sample, channel,
// tap) a thread and adds the samples' sums in order after (SumInOrder), which differs from the
// CPU's by rounding only.
struct DepthwiseGeometry {
  int64_t height, width, out_h, out_w, kh, kw, sh, sw, ph, pw, dh, dw;
};

// The outputs [*lo, *hi) along one axis whose tap `tap` reads inside the input's extent.
COHORT_HOST_DEVICE void DepthwiseTapSpan(int64_t in_extent, int64_t out_extent, int64_t stride,
                                         int64_t pad, int64_t dilate, int64_t tap, int64_t* lo,
                                         int64_t* hi) {
  const int64_t offset = tap * dilate - pad;  // input = output · stride + offset
  int64_t a = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t b = in_extent - offset <= 0 ? 0 : (in_extent - 1 - offset) / stride + 1;
  b = b < out_extent ? b : out_extent;
  *lo = a < b ? a : b;
  *hi = b;
}

// Output (oy, ox) of one channel: x and w are that channel's plane and k·k taps.
COHORT_HOST_DEVICE float DepthwiseOutput(const DepthwiseGeometry& g, const float* x, const float* w,
                                         int64_t oy, int64_t ox) {
  float sum = 0;
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t iy = oy * g.sh - g.ph + i * g.dh;
    if (iy < 0 || iy >= g.height) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t ix = ox * g.sw - g.pw + j * g.dw;
      if (ix < 0 || ix >= g.width) continue;
      sum += x[iy * g.width + ix] * w[i * g.kw + j];
    }
  }
  return sum;
}

// The input gradient at (iy, ix) of one channel: Σ over taps whose output exists of dy·w.
COHORT_HOST_DEVICE float DepthwiseInputGrad(const DepthwiseGeometry& g, const float* dy,
                                            const float* w, int64_t iy, int64_t ix) {
  float sum = 0;
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ty = iy + g.ph - i * g.dh;
    if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.out_h) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t tx = ix + g.pw - j * g.dw;
      if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.out_w) continue;
      sum += dy[(ty / g.sh) * g.out_w + tx / g.sw] * w[i * g.kw + j];
    }
  }
  return sum;
}

// The gradient of channel c's tap (i, j) from samples [n0, n1): Σ over those samples, output
// rows and columns (in that order) of dy·x. x and dy are the whole (batch, channels, ...) arrays.
COHORT_HOST_DEVICE float DepthwiseWeightGrad(const DepthwiseGeometry& g, const float* dy,
                                             const float* x, int64_t c, int64_t i, int64_t j,
                                             int64_t n0, int64_t n1, int64_t channels) {
  int64_t y0, y1, x0, x1;
  DepthwiseTapSpan(g.height, g.out_h, g.sh, g.ph, g.dh, i, &y0, &y1);
  DepthwiseTapSpan(g.width, g.out_w, g.sw, g.pw, g.dw, j, &x0, &x1);
  // Each in-image run of output columns, as add(length, product of its t-th column).
  auto for_each_run = [&](auto&& add) {
    for (int64_t n = n0; n < n1; ++n) {
      const float* xp = x + (n * channels + c) * g.height * g.width;
      const float* dp = dy + (n * channels + c) * g.out_h * g.out_w;
      for (int64_t oy = y0; oy < y1; ++oy) {
        const float* xr = xp + (oy * g.sh - g.ph + i * g.dh) * g.width + j * g.dw - g.pw;
        const float* dr = dp + oy * g.out_w;
        add(x1 - x0, [&](int64_t t) { return dr[x0 + t] * xr[(x0 + t) * g.sw]; });
      }
    }
  };
  // Contiguous runs vectorize in 16 partial sums; strided ones (stride 2: gathers) ran faster
  // as one running sum (depthwise_bench: 8.4 against 10.8 ms).
  if (g.sw == 1) {
    PartialSums16 sums;
    for_each_run([&](int64_t length, auto product) { sums.Add(length, product); });
    return sums.Total();
  }
  float sum = 0;
  for_each_run([&](int64_t length, auto product) {
    for (int64_t t = 0; t < length; ++t) sum += product(t);
  });
  return sum;
}

}  // namespace cohort::op
