// Pooling (2-D, NCHW): max, avg and sum; global pooling; "valid" and "full" conventions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "operator/kernel_util.h"

namespace cohort::op {

// pooling.cu (Note [GPU kernels]); kind is Pooling::Kind (0 max, 1 avg, 2 sum), the window's
// kernel, stride and pad as resolved for the input (global pooling included).
void PoolingForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& y, int kind,
                       const Shape& kernel, const Shape& stride, const Shape& pad,
                       bool count_include_pad);
void PoolingBackwardGpu(const OpContext& ctx, const NDArray& dy, const NDArray& x, GradReq req,
                        const NDArray& dx, int kind, const Shape& kernel, const Shape& stride,
                        const Shape& pad, bool count_include_pad);

namespace {

// Note [2x2 max pooling]
// Max pooling with 2x2 windows, stride 2 and no padding (LeNet, VGG, most CNNs) has a loop of
// its own: no window clipping, branch-free selects the compiler vectorizes, and a backward that
// writes every input element of a window once, four windows at a time, instead of clearing the
// gradient first and searching each window for its maximum (LeNet's pool1 per step, batch 64,
// one thread: forward 0.73 -> 0.11 ms, backward 2.5 -> 0.4 ms). Ties and
// NaNs go as in the general loops: forward is max(max(max(max(-inf, a), b), c), d) with
// std::max, and the gradient goes to the first maximum in (a, b, c, d) order, a NaN first
// element keeping it.
COHORT_CPU_CLONES void MaxPool2x2Forward(int64_t planes, int64_t h, int64_t w, int64_t out_h,
                                         int64_t out_w, const float* x, float* y) {
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < out_h; ++oy) {
      const float* r0 = x + (p * h + 2 * oy) * w;
      const float* r1 = r0 + w;
      float* o = y + (p * out_h + oy) * out_w;
      for (int64_t ox = 0; ox < out_w; ++ox) {
        float v = std::max(-std::numeric_limits<float>::infinity(), r0[2 * ox]);
        v = std::max(v, r0[2 * ox + 1]);
        v = std::max(v, r1[2 * ox]);
        o[ox] = std::max(v, r1[2 * ox + 1]);
      }
    }
  }
}

// The winner of one window (a b / c d) gets the gradient: element k when it beats every element
// before it (strict >) and no element after it beats the running maximum.
template <bool kAdd>
[[gnu::always_inline]] inline void MaxPool2x2BackwardOne(const float* x0, const float* x1, float go,
                                                         float* d0, float* d1) {
  const float a = x0[0], b = x0[1], c = x1[0], d = x1[1];
  const bool pb = b > a;
  const float mb = pb ? b : a;
  const bool pc = c > mb;
  const bool pd = d > (pc ? c : mb);
  const float g[4] = {!pd && !pc && !pb ? go : 0.0f, !pd && !pc && pb ? go : 0.0f,
                      !pd && pc ? go : 0.0f, pd ? go : 0.0f};
  float* dst[4] = {d0, d0 + 1, d1, d1 + 1};
  for (int k = 0; k < 4; ++k) *dst[k] = (kAdd ? *dst[k] : 0.0f) + g[k];
}

// Four windows at once with GCC vector extensions (the auto-vectorizer gives up on the
// interleaved stores): lane 2k of a row holds window k's left element, lane 2k+1 its right one,
// so each lane compares with its swapped neighbour and keeps the rule of the scalar code.
using Floats8 = float __attribute__((vector_size(32)));
using Ints8 = int32_t __attribute__((vector_size(32)));

template <bool kAdd>
[[gnu::always_inline]] inline void MaxPool2x2BackwardFour(const float* x0, const float* x1,
                                                          const float* g, float* d0, float* d1) {
  const Ints8 swap = {1, 0, 3, 2, 5, 4, 7, 6}, twice = {0, 0, 1, 1, 2, 2, 3, 3};
  const Ints8 odd = {0, -1, 0, -1, 0, -1, 0, -1};
  Floats8 r0, r1, go = {};
  std::memcpy(&r0, x0, sizeof(r0));
  std::memcpy(&r1, x1, sizeof(r1));
  std::memcpy(&go, g, 4 * sizeof(float));
  go = __builtin_shuffle(go, twice);
  const Floats8 s0 = __builtin_shuffle(r0, swap), s1 = __builtin_shuffle(r1, swap);
  const Floats8 a = odd ? s0 : r0, b = odd ? r0 : s0, c = odd ? s1 : r1, d = odd ? r1 : s1;
  const Ints8 pb = b > a;
  const Floats8 mb = pb ? b : a;
  const Ints8 pc = c > mb;
  const Ints8 pd = d > (pc ? c : mb);
  const Ints8 win0 = ~pd & ~pc & (odd ? pb : ~pb), win1 = odd ? pd : ~pd & pc;
  const Floats8 zero = {};
  Floats8 g0 = win0 ? go : zero, g1 = win1 ? go : zero;
  if constexpr (kAdd) {
    Floats8 old0, old1;
    std::memcpy(&old0, d0, sizeof(old0));
    std::memcpy(&old1, d1, sizeof(old1));
    g0 += old0;
    g1 += old1;
  }
  std::memcpy(d0, &g0, sizeof(g0));
  std::memcpy(d1, &g1, sizeof(g1));
}

template <bool kAdd>
[[gnu::always_inline]] inline void MaxPool2x2BackwardLoop(int64_t planes, int64_t h, int64_t w,
                                                          int64_t out_h, int64_t out_w,
                                                          const float* x, const float* dy,
                                                          float* dx) {
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < out_h; ++oy) {
      const int64_t row = (p * h + 2 * oy) * w;
      const float* g = dy + (p * out_h + oy) * out_w;
      int64_t ox = 0;
      for (; ox + 4 <= out_w; ox += 4) {
        const int64_t i = row + 2 * ox;
        MaxPool2x2BackwardFour<kAdd>(x + i, x + i + w, g + ox, dx + i, dx + i + w);
      }
      for (; ox < out_w; ++ox) {
        const int64_t i = row + 2 * ox;
        MaxPool2x2BackwardOne<kAdd>(x + i, x + i + w, g[ox], dx + i, dx + i + w);
      }
    }
  }
}

COHORT_CPU_CLONES void MaxPool2x2Backward(bool add, int64_t planes, int64_t h, int64_t w,
                                          int64_t out_h, int64_t out_w, const float* x,
                                          const float* dy, float* dx) {
  if (add) {
    MaxPool2x2BackwardLoop<true>(planes, h, w, out_h, out_w, x, dy, dx);
  } else {
    MaxPool2x2BackwardLoop<false>(planes, h, w, out_h, out_w, x, dy, dx);
  }
}

constexpr int64_t kMinChunk = 1 << 14;  // input elements: smaller arrays are not split

class Pooling : public Operator {
 public:
  explicit Pooling(const Attrs& attrs) {
    ParamReader r("Pooling", attrs);
    kernel_ = r.Tuple("kernel", Shape());
    const std::string pool = r.Enum("pool_type", {"max", "avg", "sum"}, "max");
    kind_ = pool == "max" ? kMax : pool == "avg" ? kAvg : kSum;
    global_ = r.Bool("global_pool", false);
    full_ = r.Enum("pooling_convention", {"valid", "full"}, "valid") == "full";
    stride_ = r.Tuple("stride", Shape());
    pad_ = r.Tuple("pad", Shape());
    count_include_pad_ = r.Bool("count_include_pad", true);
    r.Bool("cudnn_off", false);
    r.Enum("layout", {"None", "NCHW"}, "None");
    r.Finish();
    if (stride_.ndim() == 0) stride_ = {1, 1};
    if (pad_.ndim() == 0) pad_ = {0, 0};
    COHORT_CHECK(global_ || kernel_.ndim() == 2)
        << "Pooling: a 2-D kernel is required unless global_pool=True, got " << kernel_;
    COHORT_CHECK(stride_.ndim() == 2 && pad_.ndim() == 2)
        << "Pooling: stride and pad need 2 values";
  }

  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const Shape& d = in[0];
    if (!ShapeKnown(d)) return false;
    COHORT_CHECK_EQ(d.ndim(), 4) << "Pooling: data must be (batch, channel, height, width), got "
                                 << d;
    const Window w = WindowFor(d);
    COHORT_CHECK(w.out_h > 0 && w.out_w > 0)
        << "Pooling: kernel " << kernel_ << " does not fit input " << d;
    AssignShape(out[0], Shape({d[0], d[1], w.out_h, w.out_w}), "Pooling", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const Shape& d = in[0].shape();
    const Window w = WindowFor(d);
    COHORT_GPU_DISPATCH(
        ctx, PoolingForwardGpu(ctx, in[0], out[0], kind_, Shape({w.kh, w.kw}), Shape({w.sh, w.sw}),
                               Shape({w.ph, w.pw}), count_include_pad_));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    const int64_t planes = d[0] * d[1];
    if (IsMax2x2(w)) {
      ParallelChunks(
          planes, ChunksFor(ctx, planes * w.h * w.w / kMinChunk),
          [&](int64_t, int64_t b, int64_t e) {
            MaxPool2x2Forward(e - b, w.h, w.w, w.out_h, w.out_w, x + b * w.h * w.w,
                              y + b * w.out_h * w.out_w);
          },
          ctx.arena);
      return;
    }
    for (int64_t p = 0; p < planes; ++p) {
      const float* plane = x + p * w.h * w.w;
      float* o = y + p * w.out_h * w.out_w;
      for (int64_t oy = 0; oy < w.out_h; ++oy) {
        for (int64_t ox = 0; ox < w.out_w; ++ox) {
          Span s = SpanAt(w, oy, ox);
          float v;
          if (kind_ == kMax) {
            v = -std::numeric_limits<float>::infinity();
            for (int64_t yy = s.y0; yy < s.y1; ++yy) {
              for (int64_t xx = s.x0; xx < s.x1; ++xx) v = std::max(v, plane[yy * w.w + xx]);
            }
          } else {
            float sum = 0;
            for (int64_t yy = s.y0; yy < s.y1; ++yy) {
              for (int64_t xx = s.x0; xx < s.x1; ++xx) sum += plane[yy * w.w + xx];
            }
            v = kind_ == kSum ? sum : sum / s.count;
          }
          o[oy * w.out_w + ox] = v;
        }
      }
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const Shape& d = in[0].shape();
    const Window w = WindowFor(d);
    COHORT_GPU_DISPATCH(ctx, PoolingBackwardGpu(ctx, out_grad[0], in[0], req[0], in_grad[0], kind_,
                                                Shape({w.kh, w.kw}), Shape({w.sh, w.sw}),
                                                Shape({w.ph, w.pw}), count_include_pad_));
    const float* x = F(in[0]);
    const float* dy = F(out_grad[0]);
    float* dx = F(in_grad[0]);
    const int64_t planes = d[0] * d[1];
    const bool add = req[0] == GradReq::kAdd;
    // The 2x2 loop writes every element its windows cover; an odd last row or column is not.
    const bool tiled = IsMax2x2(w) && w.h == 2 * w.out_h && w.w == 2 * w.out_w;
    if (!add && !tiled) in_grad[0].Fill(0);
    if (IsMax2x2(w)) {
      ParallelChunks(
          planes, ChunksFor(ctx, planes * w.h * w.w / kMinChunk),
          [&](int64_t, int64_t b, int64_t e) {
            const int64_t in = b * w.h * w.w, out = b * w.out_h * w.out_w;
            MaxPool2x2Backward(add, e - b, w.h, w.w, w.out_h, w.out_w, x + in, dy + out, dx + in);
          },
          ctx.arena);
      return;
    }
    for (int64_t p = 0; p < planes; ++p) {
      const float* plane = x + p * w.h * w.w;
      float* grad = dx + p * w.h * w.w;
      const float* g = dy + p * w.out_h * w.out_w;
      for (int64_t oy = 0; oy < w.out_h; ++oy) {
        for (int64_t ox = 0; ox < w.out_w; ++ox) {
          const Span s = SpanAt(w, oy, ox);
          const float go = g[oy * w.out_w + ox];
          if (kind_ == kMax) {  // the first maximum takes the gradient
            int64_t best = -1;
            float v = -std::numeric_limits<float>::infinity();
            for (int64_t yy = s.y0; yy < s.y1; ++yy) {
              for (int64_t xx = s.x0; xx < s.x1; ++xx) {
                if (best < 0 || plane[yy * w.w + xx] > v) {
                  v = plane[yy * w.w + xx];
                  best = yy * w.w + xx;
                }
              }
            }
            if (best >= 0) grad[best] += go;
          } else {
            const float share = kind_ == kSum ? go : go / s.count;
            for (int64_t yy = s.y0; yy < s.y1; ++yy) {
              for (int64_t xx = s.x0; xx < s.x1; ++xx) grad[yy * w.w + xx] += share;
            }
          }
        }
      }
    }
  }

 private:
  struct Window {
    int64_t h, w, kh, kw, sh, sw, ph, pw, out_h, out_w;
  };
  struct Span {
    int64_t y0, y1, x0, x1;
    float count;  // the divisor of avg pooling
  };

  Window WindowFor(const Shape& d) const {
    Window w;
    w.h = d[2];
    w.w = d[3];
    if (global_) {
      w.kh = w.h, w.kw = w.w, w.sh = w.sw = 1, w.ph = w.pw = 0;
    } else {
      w.kh = kernel_[0], w.kw = kernel_[1], w.sh = stride_[0], w.sw = stride_[1];
      w.ph = pad_[0], w.pw = pad_[1];
    }
    auto size = [&](int64_t in, int64_t k, int64_t s, int64_t p) {
      const int64_t span = in + 2 * p - k;
      if (span < 0) return int64_t{0};
      return (full_ ? (span + s - 1) / s : span / s) + 1;
    };
    w.out_h = size(w.h, w.kh, w.sh, w.ph);
    w.out_w = size(w.w, w.kw, w.sw, w.pw);
    return w;
  }

  // Note [2x2 max pooling]: windows that never leave the image ("full" may add a clipped one).
  bool IsMax2x2(const Window& w) const {
    return kind_ == kMax && w.kh == 2 && w.kw == 2 && w.sh == 2 && w.sw == 2 && w.ph == 0 &&
           w.pw == 0 && 2 * w.out_h <= w.h && 2 * w.out_w <= w.w;
  }

  // The window of output (oy, ox) clipped to the image, with MXNet's avg divisor.
  Span SpanAt(const Window& w, int64_t oy, int64_t ox) const {
    int64_t y0 = oy * w.sh - w.ph, x0 = ox * w.sw - w.pw;
    int64_t y1 = std::min(y0 + w.kh, w.h + w.ph), x1 = std::min(x0 + w.kw, w.w + w.pw);
    const float padded = static_cast<float>((y1 - y0) * (x1 - x0));
    y0 = std::max<int64_t>(y0, 0);
    x0 = std::max<int64_t>(x0, 0);
    y1 = std::min(y1, w.h);
    x1 = std::min(x1, w.w);
    const float inside = static_cast<float>((y1 - y0) * (x1 - x0));
    return {y0, y1, x0, x1, count_include_pad_ ? padded : std::max(inside, 1.0f)};
  }

  Shape kernel_, stride_, pad_;
  enum Kind { kMax, kAvg, kSum } kind_;  // pooling.cu's PoolKind: keep the values in step
  bool global_, full_, count_include_pad_;
};

}  // namespace

void RegisterPooling(OpRegistry& r) {
  r.Register("Pooling", [](const Attrs& a) { return std::make_unique<Pooling>(a); });
}

}  // namespace cohort::op
