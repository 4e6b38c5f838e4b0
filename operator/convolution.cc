// Convolution (2-D, NCHW): a direct kernel for depthwise layers (Note [Depthwise convolution]),
// oneDNN where it suits the channels (Note [oneDNN convolution]), else im2col + OpenBLAS GEMM per
// sample and group, as MXNet's own CPU path.
#include <algorithm>
#include <cstring>

#include "ndarray/convert.h"
#include "operator/common/gemm_lowp.h"
#include "operator/common/kernel_util.h"
#include "operator/convolution.h"
#include "operator/dnnl_conv.h"

namespace cohort::op {

// convolution.cu (Note [GPU kernels]); op (the operator's id()) keys the cached cuDNN plan, b is
// null without bias.
void ConvolutionForwardGpu(const OpContext& ctx, uint64_t op, const ConvolutionParam& p,
                           const NDArray& x, const NDArray& w, const NDArray* b, const NDArray& y);
void ConvolutionBackwardGpu(const OpContext& ctx, uint64_t op, const ConvolutionParam& p,
                            const NDArray& dy, const NDArray& x, const NDArray& w,
                            const std::vector<GradReq>& req, const std::vector<NDArray>& grad);

ConvolutionParam ConvolutionParam::Parse(const Attrs& attrs) {
  ParamReader r("Convolution", attrs);
  ConvolutionParam p;
  p.kernel = r.Tuple("kernel");
  COHORT_CHECK_EQ(p.kernel.ndim(), 2)
      << "Convolution: only 2-D kernels are supported, got " << p.kernel;
  p.stride = r.Tuple("stride");
  p.dilate = r.Tuple("dilate");
  p.pad = r.Tuple("pad");
  p.num_filter = r.Int("num_filter");
  p.num_group = r.Int("num_group");
  p.no_bias = r.Bool("no_bias");
  r.Int("workspace");
  r.Enum("cudnn_tune");
  r.Bool("cudnn_off");
  r.Enum("layout");
  r.Finish();
  const ConvolutionParam defaults;  // "()" written for stride, dilate or pad means the default
  for (auto [s, fallback] :
       {std::pair{&p.stride, &defaults.stride}, std::pair{&p.dilate, &defaults.dilate},
        std::pair{&p.pad, &defaults.pad}}) {
    if (s->ndim() == 0) *s = *fallback;
    COHORT_CHECK_EQ(s->ndim(), 2) << "Convolution: stride, dilate and pad need 2 values";
  }
  COHORT_CHECK(p.num_filter > 0 && p.num_group > 0 && p.num_filter % p.num_group == 0)
      << "Convolution: num_filter " << p.num_filter << " must be a positive multiple of "
      << "num_group " << p.num_group;
  return p;
}

Attrs ConvolutionParam::ToAttrs() const {
  return {{"kernel", AttrText(kernel)},  {"num_filter", AttrText(num_filter)},
          {"stride", AttrText(stride)},  {"pad", AttrText(pad)},
          {"dilate", AttrText(dilate)},  {"num_group", AttrText(num_group)},
          {"no_bias", AttrText(no_bias)}};
}

namespace {

// Calls run(tap, in, out, x0, x1) for each tap (row-major) and each output row it reads inside
// the image: outputs [x0, x1) of the row starting at `out` read the plane's inputs from `in`, a
// column stride apart (Note [Depthwise convolution]).
template <typename Run>
void ForEachTapRun(const DepthwiseGeometry& g, const Run& run) {
  for (int64_t i = 0; i < g.kh; ++i) {
    int64_t y0, y1;
    DepthwiseTapSpan(g.height, g.out_h, g.sh, g.ph, g.dh, i, &y0, &y1);
    for (int64_t j = 0; j < g.kw; ++j) {
      int64_t x0, x1;
      DepthwiseTapSpan(g.width, g.out_w, g.sw, g.pw, g.dw, j, &x0, &x1);
      for (int64_t oy = y0; oy < y1; ++oy) {
        run(i * g.kw + j, (oy * g.sh - g.ph + i * g.dh) * g.width + j * g.dw - g.pw, oy * g.out_w,
            x0, x1);
      }
    }
  }
}

struct ConvGeometry {
  int64_t channels, height, width;  // per group input
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t out_h, out_w;
};

// Output columns [lo, hi) read inside the image for kernel column j (the rest read padding).
inline void ValidColumns(const ConvGeometry& g, int64_t j, int64_t* lo, int64_t* hi) {
  const int64_t offset = j * g.dw - g.pw;  // xx = ox * sw + offset
  *lo = offset >= 0 ? 0 : (-offset + g.sw - 1) / g.sw;
  *hi = g.width - offset <= 0 ? 0 : (g.width - 1 - offset) / g.sw + 1;
  *hi = std::min(*hi, g.out_w);
  *lo = std::min(*lo, *hi);
}

// col[(c*kh + i)*kw + j][oy*out_w + ox] = x[c][oy*sh - ph + i*dh][ox*sw - pw + j*dw] (0 outside).
// Rows are copied in runs (memcpy for stride 1) between the columns that fall in the padding.
void Im2Col(const float* x, const ConvGeometry& g, float* col) {
  const int64_t stride = g.out_h * g.out_w;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        float* row = col + ((c * g.kh + i) * g.kw + j) * stride;
        int64_t lo, hi;
        ValidColumns(g, j, &lo, &hi);
        const int64_t offset = j * g.dw - g.pw;
        for (int64_t oy = 0; oy < g.out_h; ++oy) {
          const int64_t y = oy * g.sh - g.ph + i * g.dh;
          float* out = row + oy * g.out_w;
          if (y < 0 || y >= g.height) {
            std::fill_n(out, g.out_w, 0.0f);
            continue;
          }
          const float* in = x + (c * g.height + y) * g.width + offset;
          std::fill_n(out, lo, 0.0f);
          if (g.sw == 1) {
            std::memcpy(out + lo, in + lo, (hi - lo) * sizeof(float));
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) out[ox] = in[ox * g.sw];
          }
          std::fill(out + hi, out + g.out_w, 0.0f);
        }
      }
    }
  }
}

// The adjoint of Im2Col: adds each column entry back to the pixel it came from.
void Col2ImAdd(const float* col, const ConvGeometry& g, float* x) {
  const int64_t stride = g.out_h * g.out_w;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const float* row = col + ((c * g.kh + i) * g.kw + j) * stride;
        int64_t lo, hi;
        ValidColumns(g, j, &lo, &hi);
        const int64_t offset = j * g.dw - g.pw;
        for (int64_t oy = 0; oy < g.out_h; ++oy) {
          const int64_t y = oy * g.sh - g.ph + i * g.dh;
          if (y < 0 || y >= g.height) continue;
          float* out = x + (c * g.height + y) * g.width + offset;
          const float* in = row + oy * g.out_w;
          if (g.sw == 1) {
            for (int64_t ox = lo; ox < hi; ++ox) out[ox] += in[ox];
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) out[ox * g.sw] += in[ox];
          }
        }
      }
    }
  }
}

class Convolution : public Operator {
 public:
  explicit Convolution(const Attrs& attrs) : p_(ConvolutionParam::Parse(attrs)) {}

  std::vector<std::string> ListArguments() const override {
    if (p_.no_bias) return {"data", "weight"};
    return {"data", "weight", "bias"};
  }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  // bfloat16 and float16 for one group (Notes [bfloat16 convolution], [float16 convolution]).
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 ||
           ((dtype == DType::kBFloat16 || dtype == DType::kFloat16) && p_.num_group == 1);
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const Shape& d = in[0];
    if (d.ndim() == 0) return false;
    COHORT_CHECK_EQ(d.ndim(), 4)
        << "Convolution: data must be (batch, channel, height, width), got " << d;
    if (!ShapeKnown(d)) {  // what the known dims give (MXNet's infer_shape_partial)
      const int64_t channels = DimKnown(d[1]) ? d[1] / p_.num_group : 0;
      AssignShape(in[1], Shape({p_.num_filter, channels, p_.kernel[0], p_.kernel[1]}),
                  "Convolution", "weight");
      if (!p_.no_bias) AssignShape(in[2], Shape({p_.num_filter}), "Convolution", "bias");
      AssignShape(out[0], Shape({d[0], p_.num_filter, 0, 0}), "Convolution", "output");
      return false;
    }
    COHORT_CHECK_EQ(d[1] % p_.num_group, 0)
        << "Convolution: " << d[1] << " input channels do not divide into " << p_.num_group
        << " groups";
    AssignShape(in[1], Shape({p_.num_filter, d[1] / p_.num_group, p_.kernel[0], p_.kernel[1]}),
                "Convolution", "weight");
    if (!p_.no_bias) AssignShape(in[2], Shape({p_.num_filter}), "Convolution", "bias");
    const ConvGeometry g = Geometry(d);
    COHORT_CHECK(g.out_h > 0 && g.out_w > 0)
        << "Convolution: kernel " << p_.kernel << " does not fit input " << d << " with pad "
        << p_.pad;
    AssignShape(out[0], Shape({d[0], p_.num_filter, g.out_h, g.out_w}), "Convolution", "output");
    return true;
  }

  // Samples in parallel chunks, each with its thread's column buffer (Note [Kernel threads]).
  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ConvolutionForwardGpu(ctx, id(), p_, in[0], in[1],
                                                   p_.no_bias ? nullptr : &in[2], out[0]));
    if (in[0].dtype() == DType::kBFloat16) {
      return ForwardBFloat16(ctx, in, out[0]);
    }
    if (in[0].dtype() == DType::kFloat16) {
      return ForwardFloat16(ctx, in, out[0]);
    }
    const Shape& d = in[0].shape();
    const ConvGeometry g = Geometry(d);
    const int64_t spatial = g.out_h * g.out_w, patch = g.channels * g.kh * g.kw;
    const int64_t filters = p_.num_filter / p_.num_group;
    const float* x = F(in[0]);
    const float* w = F(in[1]);
    const float* bias = p_.no_bias ? nullptr : F(in[2]);
    float* y = F(out[0]);
    if (p_.IsDepthwise(d[1])) {  // Note [Depthwise convolution]
      DepthwiseForward(ctx, d, x, w, bias, y);
      return;
    }
    if (UsesDnnl(d)) {  // Note [oneDNN convolution]
      ParallelChunks(
          d[0], ChunksFor(ctx, d[0]),
          [&](int64_t, int64_t begin, int64_t end) {
            DnnlConvForward(DnnlShape(d, end - begin), x + begin * d[1] * g.height * g.width, w,
                            y + begin * p_.num_filter * spatial);
            if (bias) AddBias(bias, begin, end, spatial, y);
          },
          ctx.arena);
      return;
    }
    ParallelChunks(
        d[0], ChunksFor(ctx, d[0]),
        [&](int64_t, int64_t begin, int64_t end) {
          float* col = Scratch(patch * spatial);
          for (int64_t n = begin; n < end; ++n) {
            for (int64_t grp = 0; grp < p_.num_group; ++grp) {
              const float* xg = x + (n * d[1] + grp * g.channels) * g.height * g.width;
              float* yg = y + (n * p_.num_filter + grp * filters) * spatial;
              const float* wg = w + grp * filters * patch;
              if (IsPointwise(g)) {  // 1x1, stride 1, no pad: the input is its own column matrix
                Gemm(false, false, filters, spatial, patch, 1.0f, wg, xg, 0.0f, yg);
              } else {
                Im2Col(xg, g, col);
                Gemm(false, false, filters, spatial, patch, 1.0f, wg, col, 0.0f, yg);
              }
            }
          }
          if (bias) AddBias(bias, begin, end, spatial, y);
        },
        ctx.arena);
  }

  // Samples in parallel chunks (Note [Kernel threads]).
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(
        ctx, ConvolutionBackwardGpu(ctx, id(), p_, out_grad[0], in[0], in[1], req, in_grad));
    if (in[0].dtype() == DType::kBFloat16) {
      return BackwardBFloat16(ctx, out_grad[0], in, req, in_grad);
    }
    if (in[0].dtype() == DType::kFloat16) {
      return BackwardFloat16(ctx, out_grad[0], in, req, in_grad);
    }
    const Shape& d = in[0].shape();
    const float* x = F(in[0]);
    const float* w = F(in[1]);
    const float* dy = F(out_grad[0]);
    const int64_t chunks = ChunksFor(ctx, d[0]);
    if (p_.IsDepthwise(d[1])) {
      DepthwiseBackward(ctx, d, x, w, dy, req, in_grad);
    } else if (UsesDnnl(d)) {
      BackwardDnnl(ctx, d, chunks, x, w, dy, req, in_grad);
    } else {
      BackwardIm2Col(ctx, d, chunks, x, w, dy, req, in_grad);
    }
    const ConvGeometry g = Geometry(d);
    BiasGradient(d, g.out_h * g.out_w, dy, req, in_grad);
  }

 private:
  // Note [bfloat16 convolution]
  // A bfloat16 layer (mixed precision's) runs on oneDNN whatever its channels: each chunk of
  // samples' products summed in float32 into the thread's scratch (Note [oneDNN convolution]),
  // then rounded to bfloat16 in the pass that adds the bias (forward) or the old gradient (kAdd);
  // the weight gradient's chunks are summed in float32 in chunk order and rounded once, and the
  // bias gradient is summed in float32 too. oneDNN computes in bfloat16 where bfloat16 products
  // pay on the CPU (Note [Low-precision GEMM]'s rule), else in float32 from the bfloat16 inputs
  // widened in its layout reorders: on an Intel Xeon with AVX512-BF16 and no AMX, ResNet-20 in
  // bfloat16 took 1.33x its float32 step in bfloat16 arithmetic; a CPU without AVX-512, which has
  // no bfloat16 convolution in oneDNN, runs these layers too. On a GPU, cuDNN rounds the
  // products to bfloat16 and cudnnAddTensor adds the bias to them (as MXNet's cuDNN layer): two
  // roundings, within two units in the last place of the float32 layer's (seen on an H100); its
  // bias gradient is a kernel of ours (cuDNN's has no bfloat16), summed in float32.
  void ForwardBFloat16(const OpContext& ctx, const std::vector<NDArray>& in,
                       const NDArray& out) const {
    const Shape& d = in[0].shape();
    const ConvGeometry g = Geometry(d);
    const int64_t spatial = g.out_h * g.out_w, in_size = d[1] * g.height * g.width;
    const int64_t out_size = p_.num_filter * spatial;
    const bfloat16* x = in[0].data<bfloat16>();
    const bfloat16* bias = p_.no_bias ? nullptr : in[2].data<bfloat16>();
    bfloat16* y = out.data<bfloat16>();
    ParallelChunks(
        d[0], ChunksFor(ctx, d[0]),
        [&](int64_t, int64_t begin, int64_t end) {
          float* acc = Scratch(static_cast<size_t>((end - begin) * out_size));
          DnnlConvForward(DnnlShape(d, end - begin, true), x + begin * in_size,
                          in[1].data<bfloat16>(), acc);
          if (bias) {
            for (int64_t n = begin; n < end; ++n) {
              for (int64_t f = 0; f < p_.num_filter; ++f) {
                const float b = static_cast<float>(bias[f]);
                float* row = acc + ((n - begin) * p_.num_filter + f) * spatial;
                for (int64_t s = 0; s < spatial; ++s) row[s] += b;
              }
            }
          }
          // Rounded by convert.h's vectorised loop (Note [Low-precision write-back]).
          NarrowFromFloat(acc, (end - begin) * out_size, DType::kBFloat16, y + begin * out_size);
        },
        ctx.arena);
  }

  void BackwardBFloat16(const OpContext& ctx, const NDArray& out_grad,
                        const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                        const std::vector<NDArray>& in_grad) const {
    const Shape& d = in[0].shape();
    const ConvGeometry g = Geometry(d);
    const int64_t spatial = g.out_h * g.out_w, in_size = d[1] * g.height * g.width;
    const int64_t out_size = p_.num_filter * spatial;
    const int64_t weights = p_.num_filter * g.channels * g.kh * g.kw;
    const int64_t chunks = ChunksFor(ctx, d[0]);
    const bfloat16* x = in[0].data<bfloat16>();
    const bfloat16* dy = out_grad.data<bfloat16>();
    const bool dw = req[1] != GradReq::kNull;
    float* partials = dw ? Scratch(static_cast<size_t>(chunks * weights), 2) : nullptr;
    ParallelChunks(
        d[0], chunks,
        [&](int64_t chunk, int64_t begin, int64_t end) {
          const DnnlConvShape shape = DnnlShape(d, end - begin, true);
          if (dw) {
            DnnlConvBackwardWeights(shape, x + begin * in_size, dy + begin * out_size,
                                    partials + chunk * weights);
          }
          if (req[0] != GradReq::kNull) {
            const int64_t n = (end - begin) * in_size;
            float* acc = Scratch(static_cast<size_t>(n));
            DnnlConvBackwardData(shape, dy + begin * out_size, in[1].data<bfloat16>(), acc, false);
            StoreNarrowed(acc, n, DType::kBFloat16, in_grad[0].data<bfloat16>() + begin * in_size,
                          req[0] == GradReq::kAdd);
          }
        },
        ctx.arena);
    if (dw) {
      AddPartials(partials + weights, chunks - 1, weights, partials);
      StoreNarrowed(partials, weights, DType::kBFloat16, in_grad[1].data<bfloat16>(),
                    req[1] == GradReq::kAdd);
    }
    if (!p_.no_bias && req[2] != GradReq::kNull) {
      float* sums = Scratch(static_cast<size_t>(p_.num_filter + spatial), 3);
      float* row = sums + p_.num_filter;
      std::fill_n(sums, p_.num_filter, 0.0f);
      for (int64_t n = 0; n < d[0]; ++n) {
        for (int64_t f = 0; f < p_.num_filter; ++f) {
          WidenToFloat(DType::kBFloat16, dy + (n * p_.num_filter + f) * spatial, spatial, row);
          sums[f] += Sum(row, spatial);
        }
      }
      WriteGrad(req[2], p_.num_filter, in_grad[2].data<bfloat16>(),
                [&](int64_t i) { return sums[i]; });
    }
  }

  // Note [float16 convolution]
  // A float16 layer (mixed precision's for GPUs, where cuDNN runs it in float16 on the tensor
  // cores with float32 compute) runs on a CPU as the float32 layer on its inputs widened once
  // (float16 products that accumulate in float32 pay on no CPU here: Note [Low-precision GEMM]),
  // its results rounded once to float16 (a kAdd gradient: the old one widened, added in float32,
  // rounded). So a float16 network gives a CPU the GPU's results within the rounding; a CPU
  // trains faster in bfloat16. The widened operands lie in the calling thread's scratch slots 4
  // to 7, apart from the float32 kernels' 0 to 3.
  static NDArray FloatsAt(float* data, const Shape& shape) {
    return NDArray::Wrap(data, shape, DType::kFloat32, Context::CPU(), [] {});
  }
  static NDArray Widened(const OpContext& ctx, const NDArray& a, int slot) {
    const LowPrecisionOperand operand = LowPrecisionOperandOf(ctx, a, slot);
    COHORT_CHECK(operand.widened) << "Convolution: float16 operands are widened";
    return FloatsAt(const_cast<float*>(operand.widened), a.shape());
  }

  void ForwardFloat16(const OpContext& ctx, const std::vector<NDArray>& in,
                      const NDArray& out) const {
    std::vector<NDArray> wide = {Widened(ctx, in[0], 4), Widened(ctx, in[1], 5)};
    if (!p_.no_bias) wide.push_back(Widened(ctx, in[2], 6));
    const NDArray y = FloatsAt(Scratch(static_cast<size_t>(out.size()), 7), out.shape());
    Forward(ctx, wide, {}, {y}, {});
    NarrowInto(ctx, GradReq::kWrite, y, out);
  }

  void BackwardFloat16(const OpContext& ctx, const NDArray& out_grad,
                       const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                       const std::vector<NDArray>& in_grad) const {
    std::vector<NDArray> wide = {Widened(ctx, in[0], 4), Widened(ctx, in[1], 5)};
    if (!p_.no_bias) wide.push_back(in[2]);  // not read by the gradients
    const NDArray dy = Widened(ctx, out_grad, 6);
    // The gradients asked for, written in float32 into one buffer, then rounded into place.
    int64_t total = 0;
    for (size_t k = 0; k < in_grad.size(); ++k) {
      if (req[k] != GradReq::kNull) total += in_grad[k].size();
    }
    float* buffer = Scratch(static_cast<size_t>(total), 7);
    std::vector<NDArray> grads(in_grad.size());
    std::vector<GradReq> write(in_grad.size(), GradReq::kNull);
    for (size_t k = 0; k < in_grad.size(); ++k) {
      if (req[k] == GradReq::kNull) continue;
      grads[k] = FloatsAt(buffer, in_grad[k].shape());
      buffer += in_grad[k].size();
      write[k] = GradReq::kWrite;
    }
    Backward(ctx, {dy}, wide, {}, write, grads, {});
    for (size_t k = 0; k < in_grad.size(); ++k) NarrowInto(ctx, req[k], grads[k], in_grad[k]);
  }

  // dst (float16) = or += the float32 src, rounded once; kNull leaves it.
  static void NarrowInto(const OpContext& ctx, GradReq req, const NDArray& src,
                         const NDArray& dst) {
    if (req == GradReq::kNull) return;
    const float* from = F(src);
    float16* to = dst.data<float16>();
    constexpr int64_t kMinChunk = 1 << 16;
    ParallelChunks(
        dst.size(), ChunksFor(ctx, dst.size() / kMinChunk),
        [&](int64_t, int64_t begin, int64_t end) {
          StoreNarrowed(from + begin, end - begin, DType::kFloat16, to + begin,
                        req == GradReq::kAdd);
        },
        ctx.arena);
  }

  DepthwiseGeometry DepthwiseOf(const Shape& d) const {
    const ConvGeometry g = Geometry(d);
    return {g.height, g.width, g.out_h, g.out_w, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw};
  }

  // Note [Depthwise convolution]: channel planes in parallel chunks; each output plane gathers
  // its taps one at a time over runs of outputs inside the image, then its bias.
  void DepthwiseForward(const OpContext& ctx, const Shape& d, const float* x, const float* w,
                        const float* bias, float* y) const {
    const DepthwiseGeometry g = DepthwiseOf(d);
    const int64_t channels = d[1], planes = d[0] * d[1];
    const int64_t in_plane = g.height * g.width, out_plane = g.out_h * g.out_w;
    ParallelChunks(
        planes, ChunksFor(ctx, planes),
        [&](int64_t, int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const int64_t c = p % channels;
            const float* xp = x + p * in_plane;
            const float* wc = w + c * g.kh * g.kw;
            float* yp = y + p * out_plane;
            std::fill_n(yp, out_plane, 0.0f);
            ForEachTapRun(g, [&](int64_t tap, int64_t in, int64_t out, int64_t x0, int64_t x1) {
              const float wt = wc[tap];
              const float* xr = xp + in;
              float* yr = yp + out;
              if (g.sw == 1) {
                COHORT_ELEMENTWISE
                for (int64_t ox = x0; ox < x1; ++ox) yr[ox] += xr[ox] * wt;
              } else {
                for (int64_t ox = x0; ox < x1; ++ox) yr[ox] += xr[ox * g.sw] * wt;
              }
            });
            if (bias) {
              for (int64_t s = 0; s < out_plane; ++s) yp[s] += bias[c];
            }
          }
        },
        ctx.arena);
  }

  // The input gradient scattered tap by tap into a plane of the thread's scratch (each input
  // element gets its taps in tap order, as DepthwiseInputGrad adds them), then written with
  // grad_req; the weight gradient one channel's tap at a time (DepthwiseWeightGrad).
  void DepthwiseBackward(const OpContext& ctx, const Shape& d, const float* x, const float* w,
                         const float* dy, const std::vector<GradReq>& req,
                         const std::vector<NDArray>& in_grad) const {
    const DepthwiseGeometry g = DepthwiseOf(d);
    const int64_t channels = d[1], planes = d[0] * d[1], taps = g.kh * g.kw;
    const int64_t in_plane = g.height * g.width, out_plane = g.out_h * g.out_w;
    if (req[0] != GradReq::kNull) {
      float* dx = F(in_grad[0]);
      ParallelChunks(
          planes, ChunksFor(ctx, planes),
          [&](int64_t, int64_t begin, int64_t end) {
            float* acc = Scratch(in_plane);
            for (int64_t p = begin; p < end; ++p) {
              const float* dp = dy + p * out_plane;
              const float* wc = w + (p % channels) * taps;
              std::fill_n(acc, in_plane, 0.0f);
              ForEachTapRun(g, [&](int64_t tap, int64_t in, int64_t out, int64_t x0, int64_t x1) {
                const float wt = wc[tap];
                float* ar = acc + in;
                const float* dr = dp + out;
                for (int64_t ox = x0; ox < x1; ++ox) ar[ox * g.sw] += dr[ox] * wt;
              });
              for (int64_t s = 0; s < in_plane; ++s)
                AssignReq(req[0], dx + p * in_plane, s, acc[s]);
            }
          },
          ctx.arena);
    }
    if (req[1] != GradReq::kNull) {
      float* dw = F(in_grad[1]);
      ParallelChunks(
          channels, ChunksFor(ctx, channels),
          [&](int64_t, int64_t begin, int64_t end) {
            for (int64_t c = begin; c < end; ++c) {
              for (int64_t t = 0; t < taps; ++t) {
                AssignReq(req[1], dw, c * taps + t,
                          DepthwiseWeightGrad(g, dy, x, c, t / g.kw, t % g.kw, 0, d[0], channels));
              }
            }
          },
          ctx.arena);
    }
  }

  // Note [oneDNN convolution]: samples in chunks; each chunk's weight gradient is written to a
  // buffer of the calling thread, except chunk 0's when it may overwrite dW; then added in order.
  void BackwardDnnl(const OpContext& ctx, const Shape& d, int64_t chunks, const float* x,
                    const float* w, const float* dy, const std::vector<GradReq>& req,
                    const std::vector<NDArray>& in_grad) const {
    const ConvGeometry g = Geometry(d);
    const int64_t weights = p_.num_filter * g.channels * g.kh * g.kw;
    const int64_t in_size = d[1] * g.height * g.width, out_size = p_.num_filter * g.out_h * g.out_w;
    const bool write_dw = req[1] == GradReq::kWrite;
    const int64_t buffers = req[1] == GradReq::kNull ? 0 : write_dw ? chunks - 1 : chunks;
    float* partials = buffers > 0 ? Scratch(buffers * weights, 2) : nullptr;
    float* dw = req[1] == GradReq::kNull ? nullptr : F(in_grad[1]);
    ParallelChunks(
        d[0], chunks,
        [&](int64_t chunk, int64_t begin, int64_t end) {
          const DnnlConvShape shape = DnnlShape(d, end - begin);
          if (dw) {
            float* target = write_dw ? (chunk == 0 ? dw : partials + (chunk - 1) * weights)
                                     : partials + chunk * weights;
            DnnlConvBackwardWeights(shape, x + begin * in_size, dy + begin * out_size, target);
          }
          if (req[0] != GradReq::kNull) {
            DnnlConvBackwardData(shape, dy + begin * out_size, w, F(in_grad[0]) + begin * in_size,
                                 req[0] == GradReq::kAdd);
          }
        },
        ctx.arena);
    AddPartials(partials, buffers, weights, dw);
  }

  // Chunk 0 accumulates its weight gradient in place; the others in buffers of the calling
  // thread, added in chunk order afterwards.
  void BackwardIm2Col(const OpContext& ctx, const Shape& d, int64_t chunks, const float* x,
                      const float* w, const float* dy, const std::vector<GradReq>& req,
                      const std::vector<NDArray>& in_grad) const {
    const ConvGeometry g = Geometry(d);
    const int64_t spatial = g.out_h * g.out_w, patch = g.channels * g.kh * g.kw;
    const int64_t filters = p_.num_filter / p_.num_group;
    const int64_t weights = p_.num_filter * patch;
    const bool pointwise = IsPointwise(g);
    float* partials =
        chunks > 1 && req[1] != GradReq::kNull ? Scratch((chunks - 1) * weights, 2) : nullptr;
    if (req[0] == GradReq::kWrite) in_grad[0].Fill(0);
    ParallelChunks(
        d[0], chunks,
        [&](int64_t chunk, int64_t begin, int64_t end) {
          float* col = Scratch(patch * spatial, 0);
          float* dcol = Scratch(patch * spatial, 1);
          float* dw = nullptr;
          if (req[1] != GradReq::kNull) {
            dw = chunk == 0 ? F(in_grad[1]) : partials + (chunk - 1) * weights;
          }
          for (int64_t n = begin; n < end; ++n) {
            for (int64_t grp = 0; grp < p_.num_group; ++grp) {
              const float* xg = x + (n * d[1] + grp * g.channels) * g.height * g.width;
              const float* dyg = dy + (n * p_.num_filter + grp * filters) * spatial;
              const float* wg = w + grp * filters * patch;
              if (dw) {  // dW_g (+)= dy_g · colᵀ
                const float* cols = xg;
                if (!pointwise) {
                  Im2Col(xg, g, col);
                  cols = col;
                }
                const bool first = n == begin && (chunk > 0 || req[1] == GradReq::kWrite);
                Gemm(false, true, filters, patch, spatial, 1.0f, dyg, cols, first ? 0.0f : 1.0f,
                     dw + grp * filters * patch);
              }
              if (req[0] != GradReq::kNull) {  // dcol = W_gᵀ · dy_g, scattered back to the pixels
                float* dxg = F(in_grad[0]) + (n * d[1] + grp * g.channels) * g.height * g.width;
                if (pointwise) {
                  Gemm(true, false, patch, spatial, filters, 1.0f, wg, dyg, 1.0f, dxg);
                } else {
                  Gemm(true, false, patch, spatial, filters, 1.0f, wg, dyg, 0.0f, dcol);
                  Col2ImAdd(dcol, g, dxg);
                }
              }
            }
          }
        },
        ctx.arena);
    if (partials) AddPartials(partials, chunks - 1, weights, F(in_grad[1]));
  }

  // dw += each of `buffers` partial weight gradients, in chunk order (Note [Kernel threads]).
  static void AddPartials(const float* partials, int64_t buffers, int64_t weights, float* dw) {
    for (int64_t b = 0; b < buffers; ++b) {
      const float* p = partials + b * weights;
      for (int64_t i = 0; i < weights; ++i) dw[i] += p[i];
    }
  }

  void BiasGradient(const Shape& d, int64_t spatial, const float* dy,
                    const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad) const {
    if (!p_.no_bias && req[2] != GradReq::kNull) {
      float* db = F(in_grad[2]);
      if (req[2] == GradReq::kWrite) std::fill_n(db, p_.num_filter, 0.0f);
      for (int64_t n = 0; n < d[0]; ++n) {
        for (int64_t f = 0; f < p_.num_filter; ++f)
          db[f] += Sum(dy + (n * p_.num_filter + f) * spatial, spatial);
      }
    }
  }

  // y[n] += bias for samples [begin, end).
  void AddBias(const float* bias, int64_t begin, int64_t end, int64_t spatial, float* y) const {
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t f = 0; f < p_.num_filter; ++f) {
        float* row = y + (n * p_.num_filter + f) * spatial;
        for (int64_t s = 0; s < spatial; ++s) row[s] += bias[f];
      }
    }
  }

  bool UsesDnnl(const Shape& d) const { return DnnlConvSuits(d[1], p_.num_filter, p_.num_group); }

  DnnlConvShape DnnlShape(const Shape& d, int64_t batch, bool bfloat16 = false) const {
    const ConvGeometry g = Geometry(d);
    return {batch, d[1], g.height, g.width, p_.num_filter, g.out_h, g.out_w, g.kh,
            g.kw,  g.sh, g.sw,     g.ph,    g.pw,          g.dh,    g.dw,    bfloat16};
  }

  ConvGeometry Geometry(const Shape& d) const {
    ConvGeometry g;
    g.channels = d[1] / p_.num_group;
    g.height = d[2];
    g.width = d[3];
    g.kh = p_.kernel[0];
    g.kw = p_.kernel[1];
    g.sh = p_.stride[0];
    g.sw = p_.stride[1];
    g.ph = p_.pad[0];
    g.pw = p_.pad[1];
    g.dh = p_.dilate[0];
    g.dw = p_.dilate[1];
    g.out_h = (g.height + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
    g.out_w = (g.width + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
    return g;
  }
  static bool IsPointwise(const ConvGeometry& g) {
    return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
  }

  ConvolutionParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Convolution",
       "Compute *N*-D convolution on *(N+2)*-D input.",
       {"data", "weight", "bias"},
       "",
       {{"kernel", "Shape(tuple)", kRequired, "Convolution kernel size: (h, w)"},
        {"stride", "Shape(tuple)", "[]",
         "Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension."},
        {"dilate", "Shape(tuple)", "[]",
         "Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension."},
        {"pad", "Shape(tuple)", "[]",
         "Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to no padding."},
        {"num_filter", "int (non-negative)", kRequired, "Convolution filter(channel) number"},
        {"num_group", "int (non-negative)", "1", "Number of group partitions."},
        {"workspace", "long (non-negative)", "1024",
         "Maximum temporary workspace allowed (MB) in convolution.This parameter has two usages. "
         "When CUDNN is not used, it determines the effective batch size of the convolution "
         "kernel. When CUDNN is used, it controls the maximum temporary storage used for tuning "
         "the best CUDNN kernel when `limited_workspace` strategy is used."},
        {"no_bias", "boolean", "0", "Whether to disable bias parameter."},
        {"cudnn_tune", "{None, 'fastest', 'limited_workspace', 'off'}", "None",
         "Whether to pick convolution algo by running performance test."},
        {"cudnn_off", "boolean", "0", "Turn off cudnn for this layer."},
        {"layout", "{None, 'NCHW'}", "None",
         "Set layout for input, output and weight. Empty for the default, NCHW (Cohort's "
         "convolutions are 2-D, NCHW)."}}},
  };
}

}  // namespace

void RegisterConvolution(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Convolution", [](const Attrs& a) { return std::make_unique<Convolution>(a); });
}

}  // namespace cohort::op
