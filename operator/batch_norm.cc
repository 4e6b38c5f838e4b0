// BatchNorm over axis 1 (channels) on the CPU, with moving statistics as auxiliary states;
// the per-channel and per-element math is batch_norm.h's.
#include "operator/batch_norm.h"
#include "ndarray/convert.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// batch_norm.cu (Note [GPU kernels]); the data splits as (outer, channels, inner) around axis 1.
void BatchNormForwardGpu(const OpContext& ctx, const BatchNormParam& p, bool batch_stats,
                         const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                         const std::vector<NDArray>& aux, int64_t outer, int64_t channels,
                         int64_t inner);
void BatchNormBackwardGpu(const OpContext& ctx, const BatchNormParam& p, bool batch_stats,
                          const std::vector<NDArray>& out_grad, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                          const std::vector<NDArray>& in_grad, int64_t outer, int64_t channels,
                          int64_t inner);

BatchNormParam BatchNormParam::Parse(const Attrs& attrs) {
  ParamReader r("BatchNorm", attrs);
  BatchNormParam p;
  p.eps = static_cast<float>(r.Float("eps"));
  p.momentum = static_cast<float>(r.Float("momentum"));
  p.fix_gamma = r.Bool("fix_gamma");
  p.use_global_stats = r.Bool("use_global_stats");
  p.output_mean_var = r.Bool("output_mean_var");
  const int64_t axis = r.Int("axis");
  r.Bool("cudnn_off");
  r.OptionalFloat("min_calib_range");  // quantization's: accepted, unused
  r.OptionalFloat("max_calib_range");
  r.Finish();
  COHORT_CHECK_EQ(axis, 1) << "BatchNorm: only axis=1 (channels) is supported";
  return p;
}

Attrs BatchNormParam::ToAttrs() const {
  return {{"eps", AttrText(eps)},
          {"momentum", AttrText(momentum)},
          {"fix_gamma", AttrText(fix_gamma)},
          {"use_global_stats", AttrText(use_global_stats)},
          {"output_mean_var", AttrText(output_mean_var)}};
}

namespace {

// Note [BatchNorm in low precision]
// As MXNet's BatchNorm, the data (and the output and its gradients) may be float16 or bfloat16
// while gamma, beta, the moving statistics and the saved mean and inverse std stay float32:
// mixed precision then keeps a convolution's low-precision output through BatchNorm and its
// activation into the next convolution, where two cast passes (to float32 and back) ran before.
// Every value is computed in float32 from the widened data, with the float32 kernel's sums in
// its order, and rounded once when stored.

// One channel's rows of `a` as floats: in place for float32; for a half type widened into the
// thread's scratch `slot`, all of the channel's rows at once where they fit kWholeFloats (each
// value widened once however many passes read it), else each row as it is read. With slot
// kStoreOnly the rows of a half type are only stored, never read.
class ChannelRows {
 public:
  static constexpr int64_t kWholeFloats = int64_t{1} << 20;  // 4 MB a thread
  static constexpr int kStoreOnly = -1;

  ChannelRows(const NDArray& a, const AxisSplit& s, int slot)
      : a_(a),
        s_(s),
        low_(a.dtype() != DType::kFloat32),
        whole_(low_ && slot != kStoreOnly && s.outer * s.inner <= kWholeFloats),
        buf_(low_ && slot != kStoreOnly
                 ? Scratch(static_cast<size_t>(whole_ ? s.outer * s.inner : s.inner), slot)
                 : nullptr) {}

  void Channel(int64_t c) {
    c_ = c;
    for (int64_t o = 0; whole_ && o < s_.outer; ++o) Widen(o, buf_ + o * s_.inner);
  }
  // Row o of the channel (a float32 array's own; else valid until the next Row when not whole).
  float* Row(int64_t o) const {
    if (!low_) return a_.data<float>() + Base(o);
    if (whole_) return buf_ + o * s_.inner;
    Widen(o, buf_);
    return buf_;
  }
  // Stores the n floats at `row` (Row(o)'s or a buffer's) as row o of a half-type array.
  void Store(int64_t o, const float* row) const {
    if (low_) NarrowFromFloat(row, s_.inner, a_.dtype(), Bytes() + Base(o) * 2);
  }
  bool low() const { return low_; }

 private:
  int64_t Base(int64_t o) const { return (o * s_.size + c_) * s_.inner; }
  char* Bytes() const { return static_cast<char*>(a_.raw_data()); }
  void Widen(int64_t o, float* into) const {
    WidenToFloat(a_.dtype(), Bytes() + Base(o) * 2, s_.inner, into);
  }

  const NDArray& a_;
  AxisSplit s_;
  bool low_, whole_;
  float* buf_;
  int64_t c_ = 0;
};

class BatchNorm : public Operator {
 public:
  explicit BatchNorm(const Attrs& attrs) : p_(BatchNormParam::Parse(attrs)) {}

  std::vector<std::string> ListArguments() const override { return {"data", "gamma", "beta"}; }
  std::vector<std::string> ListAuxiliaryStates() const override {
    return {"moving_mean", "moving_var"};
  }
  std::string InputInit(const std::string& slot) const override {
    return slot == "moving_mean" ? R"(["zero", {}])" : slot == "moving_var" ? R"(["one", {}])" : "";
  }
  // The batch mean and variance are outputs too, saved for backward (MXNet's layout).
  std::vector<std::string> ListOutputs() const override { return {"output", "mean", "var"}; }
  int NumVisibleOutputs() const override { return p_.output_mean_var ? 3 : 1; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  // Note [BatchNorm in low precision]: the data's type; the parameters and statistics float32.
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == DType::kBFloat16 || dtype == DType::kFloat16;
  }
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots& aux) const override {
    AssignType(out[0], in[0], "BatchNorm", "output");
    AssignType(in[0], out[0], "BatchNorm", "data");
    AssignType(in[1], DType::kFloat32, "BatchNorm", "gamma");
    AssignType(in[2], DType::kFloat32, "BatchNorm", "beta");
    AssignType(aux[0], DType::kFloat32, "BatchNorm", "moving_mean");
    AssignType(aux[1], DType::kFloat32, "BatchNorm", "moving_var");
    AssignType(out[1], DType::kFloat32, "BatchNorm", "mean");
    AssignType(out[2], DType::kFloat32, "BatchNorm", "var");
    return in[0].has_value();
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>& aux) const override {
    const Shape& d = in[0];
    if (d.ndim() == 0) return false;
    COHORT_CHECK_GE(d.ndim(), 2) << "BatchNorm: data needs a channel axis, got " << d;
    const Shape c({d[1]});  // partly known data gives what it knows (infer_shape_partial)
    AssignShape(in[1], c, "BatchNorm", "gamma");
    AssignShape(in[2], c, "BatchNorm", "beta");
    AssignShape(aux[0], c, "BatchNorm", "moving_mean");
    AssignShape(aux[1], c, "BatchNorm", "moving_var");
    AssignShape(out[0], d, "BatchNorm", "output");
    AssignShape(out[1], c, "BatchNorm", "mean");
    AssignShape(out[2], c, "BatchNorm", "var");  // the inverse std, as in MXNet
    return ShapeKnown(d);
  }

  // Channels in parallel chunks (Note [Kernel threads]). Each row of a channel (one sample's
  // plane) is reduced in float with partial sums, the rows in double.
  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>& aux) const override {
    const AxisSplit s = SplitAt(in[0].shape(), 1);
    const bool batch_stats = p_.BatchStats(ctx.is_train);
    COHORT_GPU_DISPATCH(
        ctx, BatchNormForwardGpu(ctx, p_, batch_stats, in, out, aux, s.outer, s.size, s.inner));
    const float* gamma = F(in[1]);
    const float* beta = F(in[2]);
    float* mean = F(out[1]);
    float* inv_std = F(out[2]);  // BatchNormInvStd
    float* moving_mean = F(aux[0]);
    float* moving_var = F(aux[1]);
    const double m = static_cast<double>(s.outer * s.inner);
    auto channels = [&](int64_t, int64_t first, int64_t last) {
      // The output is computed in place of the widened rows (Note [BatchNorm in low precision]).
      ChannelRows x(in[0], s, 0), y(out[0], s, ChannelRows::kStoreOnly);
      for (int64_t c = first; c < last; ++c) {
        x.Channel(c);
        if (batch_stats) {
          double sum = 0, sq = 0;
          for (int64_t o = 0; o < s.outer; ++o) sum += Sum(x.Row(o), s.inner);
          const float mu = static_cast<float>(sum / m);
          for (int64_t o = 0; o < s.outer; ++o) sq += SumSquaredDeviations(x.Row(o), s.inner, mu);
          const float var = static_cast<float>(sq / m);
          mean[c] = mu;
          inv_std[c] = BatchNormInvStd(p_, var);
          moving_mean[c] = BatchNormMoving(moving_mean[c], mu, p_.momentum);
          moving_var[c] = BatchNormMoving(moving_var[c], var, p_.momentum);
        } else {
          mean[c] = moving_mean[c];
          inv_std[c] = BatchNormInvStd(p_, moving_var[c]);
        }
        const BatchNormAffine affine =
            BatchNormAffineOf(p_, gamma[c], beta[c], mean[c], inv_std[c]);
        y.Channel(c);  // a float32 output's rows are its own; a half type's, x's widened rows
        for (int64_t o = 0; o < s.outer; ++o) {
          float* row = x.Row(o);
          float* dst = x.low() ? row : y.Row(o);
          for (int64_t i = 0; i < s.inner; ++i) dst[i] = BatchNormValue(affine, row[i]);
          y.Store(o, dst);
        }
      }
    };
    ParallelChunks(s.size, ChunksFor(ctx, s.size), channels, ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const AxisSplit s = SplitAt(in[0].shape(), 1);
    const bool batch_stats = p_.BatchStats(ctx.is_train);
    COHORT_GPU_DISPATCH(ctx, BatchNormBackwardGpu(ctx, p_, batch_stats, out_grad, in, out, req,
                                                  in_grad, s.outer, s.size, s.inner));
    const float* gamma = F(in[1]);
    const float* mean = F(out[1]);
    const float* inv_std = F(out[2]);
    const bool want_dx = req[0] != GradReq::kNull;
    const double m = static_cast<double>(s.outer * s.inner);
    auto channels = [&](int64_t, int64_t first, int64_t last) {
      // x and dy as floats (Note [BatchNorm in low precision]); a written dx in place of x's
      // widened rows, an added one through a row of its own.
      ChannelRows x(in[0], s, 0), dy(out_grad[0], s, 1);
      ChannelRows dx(want_dx ? in_grad[0] : in[0], s,
                     req[0] == GradReq::kAdd ? 2 : ChannelRows::kStoreOnly);
      for (int64_t c = first; c < last; ++c) {
        x.Channel(c);
        dy.Channel(c);
        double sum_dy = 0, sum_dy_xmu = 0;  // Σ dy and Σ dy (x - mean)
        for (int64_t o = 0; o < s.outer; ++o) {
          sum_dy += Sum(dy.Row(o), s.inner);
          sum_dy_xmu += SumProductsOfDeviations(dy.Row(o), x.Row(o), s.inner, mean[c]);
        }
        const BatchNormGrad grad =
            BatchNormGradOf(p_, batch_stats, gamma[c], inv_std[c], sum_dy, sum_dy_xmu, m);
        if (req[1] != GradReq::kNull) AssignReq(req[1], F(in_grad[1]), c, grad.dgamma);
        if (req[2] != GradReq::kNull) AssignReq(req[2], F(in_grad[2]), c, grad.dbeta);
        if (!want_dx) continue;
        const float mu = mean[c];
        dx.Channel(c);
        for (int64_t o = 0; o < s.outer; ++o) {
          const float* d = dy.Row(o);
          float* xs = x.Row(o);
          // dx may be dy itself: each element is read before it is written.
          if (req[0] == GradReq::kAdd) {
            float* dst = dx.Row(o);
            for (int64_t i = 0; i < s.inner; ++i)
              dst[i] += BatchNormInputGrad(grad, d[i], xs[i], mu);
            dx.Store(o, dst);
          } else {
            float* dst = dx.low() ? xs : dx.Row(o);
            for (int64_t i = 0; i < s.inner; ++i)
              dst[i] = BatchNormInputGrad(grad, d[i], xs[i], mu);
            dx.Store(o, dst);
          }
        }
      }
    };
    ParallelChunks(s.size, ChunksFor(ctx, s.size), channels, ctx.arena);
  }

 private:
  BatchNormParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"BatchNorm",
       "Batch normalization.",
       {"data", "gamma", "beta", "moving_mean", "moving_var"},
       "",
       {{"eps", "double", "0.0010000000474974513",
         "Epsilon to prevent div 0. Must be no less than CUDNN_BN_MIN_EPSILON defined in cudnn.h "
         "when using cudnn (usually 1e-5)"},
        {"momentum", "float", "0.899999976", "Momentum for moving average"},
        {"fix_gamma", "boolean", "1", "Fix gamma while training"},
        {"use_global_stats", "boolean", "0",
         "Whether use global moving statistics instead of local batch-norm. This will force change "
         "batch-norm into a scale shift operator."},
        {"output_mean_var", "boolean", "0", "Output the mean and inverse std"},
        {"axis", "int", "1", "Specify which shape axis the channel is specified"},
        {"cudnn_off", "boolean", "0", "Do not select CUDNN operator, if available"},
        {"min_calib_range", "float or None", "None",
         "The minimum scalar value in the form of float32 obtained through calibration. If "
         "present, it will be used to by quantized batch norm op to calculate primitive "
         "scale.Note: this calib_range is to calib bn output."},
        {"max_calib_range", "float or None", "None",
         "The maximum scalar value in the form of float32 obtained through calibration. If "
         "present, it will be used to by quantized batch norm op to calculate primitive "
         "scale.Note: this calib_range is to calib bn output."}}},
  };
}

}  // namespace

void RegisterBatchNorm(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("BatchNorm", [](const Attrs& a) { return std::make_unique<BatchNorm>(a); });
}

}  // namespace cohort::op
