// Pooling on the CPU: pooling.h's window functions, and a loop of its own for 2x2 max pooling.
#include <algorithm>
#include <cstring>
#include <limits>

#include "operator/common/kernel_util.h"
#include "operator/pooling.h"

namespace cohort::op {

// pooling.cu (Note [GPU kernels]).
void PoolingForwardGpu(const OpContext& ctx, const PoolWindow& w, PoolType type, const NDArray& x,
                       const NDArray& y);
void PoolingBackwardGpu(const OpContext& ctx, const PoolWindow& w, PoolType type, GradReq req,
                        const NDArray& dy, const NDArray& x, const NDArray& dx);

PoolingParam PoolingParam::Parse(const Attrs& attrs) {
  ParamReader r("Pooling", attrs);
  PoolingParam p;
  p.kernel = r.Tuple("kernel");
  p.pool_type = r.EnumValue<PoolType>("pool_type", kPoolTypeNames);
  p.global_pool = r.Bool("global_pool");
  p.pooling_convention =
      r.EnumValue<PoolingConvention>("pooling_convention", kPoolingConventionNames);
  // "[]" (the default) means stride 1 and no padding.
  if (const Shape stride = r.Tuple("stride"); stride.ndim() > 0) p.stride = stride;
  if (const Shape pad = r.Tuple("pad"); pad.ndim() > 0) p.pad = pad;
  // None (the default) means true, as in MXNet.
  p.count_include_pad = r.OptionalBool("count_include_pad").value_or(true);
  r.Bool("cudnn_off");
  r.Enum("layout");
  r.Finish();
  COHORT_CHECK(p.global_pool || p.kernel.ndim() == 2)
      << "Pooling: a 2-D kernel is required unless global_pool=True, got " << p.kernel;
  COHORT_CHECK(p.stride.ndim() == 2 && p.pad.ndim() == 2)
      << "Pooling: stride and pad need 2 values";
  return p;
}

Attrs PoolingParam::ToAttrs() const {
  Attrs a = {{"pool_type", kPoolTypeNames[static_cast<int>(pool_type)]},
             {"global_pool", AttrText(global_pool)},
             {"pooling_convention", kPoolingConventionNames[static_cast<int>(pooling_convention)]},
             {"stride", AttrText(stride)},
             {"pad", AttrText(pad)},
             {"count_include_pad", AttrText(count_include_pad)}};
  if (kernel.ndim() > 0) a["kernel"] = AttrText(kernel);  // global pooling needs none
  return a;
}

PoolWindow PoolingParam::WindowFor(const Shape& d) const {
  PoolWindow w;
  w.h = d[2];
  w.w = d[3];
  if (global_pool) {
    w.kh = w.h, w.kw = w.w, w.sh = w.sw = 1, w.ph = w.pw = 0;
  } else {
    w.kh = kernel[0], w.kw = kernel[1], w.sh = stride[0], w.sw = stride[1];
    w.ph = pad[0], w.pw = pad[1];
  }
  const bool full = pooling_convention == PoolingConvention::kFull;
  auto size = [&](int64_t in, int64_t k, int64_t s, int64_t p) {
    const int64_t span = in + 2 * p - k;
    if (span < 0) return int64_t{0};
    return (full ? (span + s - 1) / s : span / s) + 1;
  };
  w.out_h = size(w.h, w.kh, w.sh, w.ph);
  w.out_w = size(w.w, w.kw, w.sw, w.pw);
  w.count_include_pad = count_include_pad;
  return w;
}

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
#if defined(__clang__)  // (clang's shuffle takes the lane indices as constants)
  (void)swap;
  (void)twice;
  go = __builtin_shufflevector(go, go, 0, 0, 1, 1, 2, 2, 3, 3);
  const Floats8 s0 = __builtin_shufflevector(r0, r0, 1, 0, 3, 2, 5, 4, 7, 6);
  const Floats8 s1 = __builtin_shufflevector(r1, r1, 1, 0, 3, 2, 5, 4, 7, 6);
#else
  go = __builtin_shuffle(go, twice);
  const Floats8 s0 = __builtin_shuffle(r0, swap), s1 = __builtin_shuffle(r1, swap);
#endif
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
  explicit Pooling(const PoolingParam& p) : p_(p) {}

  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const Shape& d = in[0];
    if (!ShapeKnown(d)) return false;
    COHORT_CHECK_EQ(d.ndim(), 4) << "Pooling: data must be (batch, channel, height, width), got "
                                 << d;
    const PoolWindow w = p_.WindowFor(d);
    COHORT_CHECK(w.out_h > 0 && w.out_w > 0)
        << "Pooling: kernel " << p_.kernel << " does not fit input " << d;
    AssignShape(out[0], Shape({d[0], d[1], w.out_h, w.out_w}), "Pooling", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const Shape& d = in[0].shape();
    const PoolWindow w = p_.WindowFor(d);
    COHORT_GPU_DISPATCH(ctx, PoolingForwardGpu(ctx, w, p_.pool_type, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    const int64_t planes = d[0] * d[1];
    const int64_t plane_in = w.h * w.w, plane_out = w.out_h * w.out_w;
    ParallelChunks(
        planes, ChunksFor(ctx, planes * plane_in / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          if (IsMax2x2(w)) {
            MaxPool2x2Forward(e - b, w.h, w.w, w.out_h, w.out_w, x + b * plane_in,
                              y + b * plane_out);
            return;
          }
          for (int64_t p = b; p < e; ++p) {
            for (int64_t oy = 0; oy < w.out_h; ++oy) {
              for (int64_t ox = 0; ox < w.out_w; ++ox) {
                y[p * plane_out + oy * w.out_w + ox] =
                    PoolValue(w, p_.pool_type, x + p * plane_in, oy, ox);
              }
            }
          }
        },
        ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const Shape& d = in[0].shape();
    const PoolWindow w = p_.WindowFor(d);
    COHORT_GPU_DISPATCH(
        ctx, PoolingBackwardGpu(ctx, w, p_.pool_type, req[0], out_grad[0], in[0], in_grad[0]));
    const float* x = F(in[0]);
    const float* dy = F(out_grad[0]);
    float* dx = F(in_grad[0]);
    const int64_t planes = d[0] * d[1];
    const int64_t plane_in = w.h * w.w, plane_out = w.out_h * w.out_w;
    const bool add = req[0] == GradReq::kAdd;
    // The 2x2 loop writes every element its windows cover; an odd last row or column is not.
    const bool tiled = IsMax2x2(w) && w.h == 2 * w.out_h && w.w == 2 * w.out_w;
    if (IsMax2x2(w) && !add && !tiled) in_grad[0].Fill(0);
    ParallelChunks(
        planes, ChunksFor(ctx, planes * plane_in / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          if (IsMax2x2(w)) {
            MaxPool2x2Backward(add, e - b, w.h, w.w, w.out_h, w.out_w, x + b * plane_in,
                               dy + b * plane_out, dx + b * plane_in);
            return;
          }
          // Gathered per input element as on the GPU (pooling.h): each window's winner first.
          int32_t* best = p_.pool_type == PoolType::kMax
                              ? reinterpret_cast<int32_t*>(Scratch(plane_out))
                              : nullptr;
          for (int64_t p = b; p < e; ++p) {
            const float* plane = x + p * plane_in;
            for (int64_t o = 0; best && o < plane_out; ++o) {
              best[o] = PoolArgMax(w, plane, o / w.out_w, o % w.out_w);
            }
            float* grad = dx + p * plane_in;
            for (int64_t yy = 0; yy < w.h; ++yy) {
              for (int64_t xx = 0; xx < w.w; ++xx) {
                float& g = grad[yy * w.w + xx];
                g = PoolGradAt(w, p_.pool_type, dy + p * plane_out, best, yy, xx, add ? g : 0.0f);
              }
            }
          }
        },
        ctx.arena);
  }

 private:
  // Note [2x2 max pooling]: windows that never leave the image ("full" may add a clipped one).
  bool IsMax2x2(const PoolWindow& w) const {
    return p_.pool_type == PoolType::kMax && w.kh == 2 && w.kw == 2 && w.sh == 2 && w.sw == 2 &&
           w.ph == 0 && w.pw == 0 && 2 * w.out_h <= w.h && 2 * w.out_w <= w.w;
  }

  PoolingParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Pooling",
       "Performs pooling on the input.",
       {"data"},
       "",
       {{"kernel", "Shape(tuple)", "[]", "Pooling kernel size: (y, x)"},
        {"pool_type", "{'avg', 'max', 'sum'}", "max", "Pooling type to be applied."},
        {"global_pool", "boolean", "0",
         "Ignore kernel size, do global pooling based on current input feature map."},
        {"cudnn_off", "boolean", "0", "Turn off cudnn pooling and use MXNet pooling operator."},
        {"pooling_convention", "{'full', 'valid'}", "valid", "Pooling convention to be applied."},
        {"stride", "Shape(tuple)", "[]", "Stride: (y, x). Defaults to 1 for each dimension."},
        {"pad", "Shape(tuple)", "[]", "Pad for pooling: (y, x). Defaults to no padding."},
        {"count_include_pad", "boolean or None", "None",
         "Only used for AvgPool, specify whether to count padding elements for averagecalculation. "
         "For example, with a 5*5 kernel on a 3*3 corner of a image,the sum of the 9 valid "
         "elements will be divided by 25 if this is set to true,or it will be divided by 9 if this "
         "is set to false. Defaults to true."},
        {"layout", "{None, 'NCHW'}", "None",
         "Set layout for input and output. Empty for the default, NCHW (Cohort's pooling is 2-D, "
         "NCHW)."}}},
  };
}

}  // namespace

void RegisterPooling(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Pooling",
             [](const Attrs& a) { return std::make_unique<Pooling>(PoolingParam::Parse(a)); });
}

}  // namespace cohort::op
