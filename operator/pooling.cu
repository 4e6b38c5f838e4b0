// Pooling in CUDA kernels of its own (Note [GPU kernels]) rather than cuDNN: cuDNN has no "full"
// convention (its extra clipped windows) and does not promise which of equal maxima takes the
// gradient, while these kernels walk each window as the CPU loops do, giving the same results
// bit for bit.
#include <cstdint>
#include <limits>

#include "operator/gpu_common.cuh"

namespace cohort::op {
namespace {

enum PoolKind { kMax = 0, kAvg = 1, kSum = 2 };  // pooling.cc's Pooling::Kind

struct PoolWindow {
  int64_t h, w, kh, kw, sh, sw, ph, pw, out_h, out_w;
  bool count_include_pad;
};

struct Span {
  int64_t y0, y1, x0, x1;
  float count;  // the divisor of avg pooling
};

// The window of output (oy, ox) clipped to the image, with MXNet's avg divisor: the CPU's
// Pooling::SpanAt, expression for expression.
__device__ Span SpanAt(const PoolWindow& w, int64_t oy, int64_t ox) {
  int64_t y0 = oy * w.sh - w.ph, x0 = ox * w.sw - w.pw;
  int64_t y1 = min(y0 + w.kh, w.h + w.ph), x1 = min(x0 + w.kw, w.w + w.pw);
  const float padded = static_cast<float>((y1 - y0) * (x1 - x0));
  y0 = max(y0, int64_t{0});
  x0 = max(x0, int64_t{0});
  y1 = min(y1, w.h);
  x1 = min(x1, w.w);
  const float inside = static_cast<float>((y1 - y0) * (x1 - x0));
  return {y0, y1, x0, x1, w.count_include_pad ? padded : (inside < 1.0f ? 1.0f : inside)};
}

// One thread per output, the window in row-major order as on the CPU. Max is std::max's
// `v < a ? a : v`, which passes over NaNs as the CPU does.
__global__ void PoolForwardKernel(PoolWindow w, PoolKind kind, int64_t n, const float* x,
                                  float* y) {
  COHORT_CUDA_LOOP(i, n) {
    const int64_t ox = i % w.out_w, oy = i / w.out_w % w.out_h, plane = i / (w.out_w * w.out_h);
    const float* in = x + plane * w.h * w.w;
    const Span s = SpanAt(w, oy, ox);
    float v;
    if (kind == kMax) {
      v = -std::numeric_limits<float>::infinity();
      for (int64_t yy = s.y0; yy < s.y1; ++yy) {
        for (int64_t xx = s.x0; xx < s.x1; ++xx) {
          const float a = in[yy * w.w + xx];
          v = v < a ? a : v;
        }
      }
    } else {
      float sum = 0;
      for (int64_t yy = s.y0; yy < s.y1; ++yy) {
        for (int64_t xx = s.x0; xx < s.x1; ++xx) sum += in[yy * w.w + xx];
      }
      v = kind == kSum ? sum : sum / s.count;
    }
    y[i] = v;
  }
}

// The element of each window that takes its gradient: the first maximum in row-major order (a
// later element must be strictly greater), as a plane offset; -1 for a window with no elements.
__global__ void ArgMaxKernel(PoolWindow w, int64_t n, const float* x, int32_t* best) {
  COHORT_CUDA_LOOP(i, n) {
    const int64_t ox = i % w.out_w, oy = i / w.out_w % w.out_h, plane = i / (w.out_w * w.out_h);
    const float* in = x + plane * w.h * w.w;
    const Span s = SpanAt(w, oy, ox);
    int64_t b = -1;
    float v = -std::numeric_limits<float>::infinity();
    for (int64_t yy = s.y0; yy < s.y1; ++yy) {
      for (int64_t xx = s.x0; xx < s.x1; ++xx) {
        if (b < 0 || in[yy * w.w + xx] > v) {
          v = in[yy * w.w + xx];
          b = yy * w.w + xx;
        }
      }
    }
    best[i] = static_cast<int32_t>(b);
  }
}

// Outputs [*lo, *hi] whose windows (before clipping to the image) cover input coordinate `at`:
// o*s - p <= at < o*s - p + k. Clipping never removes an input coordinate from a window.
__device__ void CoveringWindows(int64_t at, int64_t k, int64_t s, int64_t p, int64_t out,
                                int64_t* lo, int64_t* hi) {
  const int64_t first = at + p - k + 1;  // o*s >= first
  *lo = first <= 0 ? 0 : (first + s - 1) / s;
  *hi = min((at + p) / s, out - 1);
}

// Gather form of the backward: one thread per input element adds the gradients of the windows
// that send it one, in the CPU's window order (row-major), onto 0 (kWrite) or its old value
// (kAdd). No atomics, and the sums are the CPU's to the bit. best is null unless kind is kMax.
__global__ void PoolBackwardKernel(PoolWindow w, PoolKind kind, bool add, int64_t n,
                                   const float* dy, const int32_t* best, float* dx) {
  COHORT_CUDA_LOOP(i, n) {
    const int64_t xx = i % w.w, yy = i / w.w % w.h, plane = i / (w.w * w.h);
    const int64_t offset = yy * w.w + xx, first_out = plane * w.out_h * w.out_w;
    int64_t oy0, oy1, ox0, ox1;
    CoveringWindows(yy, w.kh, w.sh, w.ph, w.out_h, &oy0, &oy1);
    CoveringWindows(xx, w.kw, w.sw, w.pw, w.out_w, &ox0, &ox1);
    float acc = add ? dx[i] : 0.0f;
    for (int64_t oy = oy0; oy <= oy1; ++oy) {
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const int64_t o = first_out + oy * w.out_w + ox;
        if (kind == kMax) {
          if (best[o] == offset) acc += dy[o];
        } else {
          acc += kind == kSum ? dy[o] : dy[o] / SpanAt(w, oy, ox).count;
        }
      }
    }
    dx[i] = acc;
  }
}

PoolWindow WindowOf(const Shape& in, const Shape& out, const Shape& kernel, const Shape& stride,
                    const Shape& pad, bool count_include_pad) {
  return {in[2],  in[3],  kernel[0], kernel[1], stride[0],        stride[1],
          pad[0], pad[1], out[2],    out[3],    count_include_pad};
}

}  // namespace

void PoolingForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& y, int kind,
                       const Shape& kernel, const Shape& stride, const Shape& pad,
                       bool count_include_pad) {
  const GpuResources::Impl& g = Gpu(ctx);
  const PoolWindow w = WindowOf(x.shape(), y.shape(), kernel, stride, pad, count_include_pad);
  const int64_t n = y.size();
  if (n == 0) return;
  PoolForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, g.stream>>>(w, static_cast<PoolKind>(kind), n,
                                                                  G(x), G(y));
  CUDA_CHECK(cudaGetLastError());
}

void PoolingBackwardGpu(const OpContext& ctx, const NDArray& dy, const NDArray& x, GradReq req,
                        const NDArray& dx, int kind, const Shape& kernel, const Shape& stride,
                        const Shape& pad, bool count_include_pad) {
  GpuResources::Impl& g = Gpu(ctx);
  const PoolWindow w = WindowOf(x.shape(), dy.shape(), kernel, stride, pad, count_include_pad);
  const int64_t outs = dy.size(), ins = x.size();
  if (ins == 0) return;
  int32_t* best = nullptr;
  if (kind == kMax && outs > 0) {
    COHORT_CHECK(w.h * w.w <= std::numeric_limits<int32_t>::max())
        << "Pooling: a plane of " << w.h << "x" << w.w << " is too large for the GPU kernel";
    best = static_cast<int32_t*>(g.Workspace(outs * sizeof(int32_t)));
    ArgMaxKernel<<<CudaBlocks(outs), kCudaThreads, 0, g.stream>>>(w, outs, G(x), best);
    CUDA_CHECK(cudaGetLastError());
  }
  PoolBackwardKernel<<<CudaBlocks(ins), kCudaThreads, 0, g.stream>>>(
      w, static_cast<PoolKind>(kind), req == GradReq::kAdd, ins, G(dy), best, G(dx));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace cohort::op
