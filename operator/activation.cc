// Activation and LeakyReLU on the CPU: one pointwise operator whose loops are specialised per
// function (no dispatch per element), calling activation.h's functions.
#include "operator/activation.h"
#include "ndarray/convert.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// activation.cu (Note [GPU kernels]); `in` is null unless backward reads the input.
void ActivationForwardGpu(const OpContext& ctx, const ActivationParam& p, const NDArray& in,
                          const NDArray& out);
void ActivationBackwardGpu(const OpContext& ctx, const ActivationParam& p, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray& out,
                           const NDArray& in_grad);
void PreluForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& gamma,
                     const NDArray& out, int64_t channels, int64_t inner);
void PreluBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& in,
                      const NDArray& gamma, const std::vector<GradReq>& req,
                      const std::vector<NDArray>& in_grad, int64_t outer, int64_t channels,
                      int64_t inner);

ActivationParam ActivationParam::ParseActivation(const Attrs& attrs) {
  ParamReader r("Activation", attrs);
  const std::string t = r.Enum("act_type");
  r.Finish();
  ActivationParam p;
  p.act_type = t == "relu"       ? ActType::kRelu
               : t == "sigmoid"  ? ActType::kSigmoid
               : t == "tanh"     ? ActType::kTanh
               : t == "softrelu" ? ActType::kSoftrelu
                                 : ActType::kSoftsign;
  return p;
}

ActivationParam ActivationParam::ParseLeakyReLU(const Attrs& attrs) {
  ParamReader r("LeakyReLU", attrs);
  const std::string t = r.Enum("act_type");  // (prelu is its own op class)
  ActivationParam p;
  p.act_type = t == "leaky"  ? ActType::kLeaky
               : t == "elu"  ? ActType::kElu
               : t == "selu" ? ActType::kSelu
                             : ActType::kGelu;
  p.slope = static_cast<float>(r.Float("slope"));
  r.Float("lower_bound");  // rrelu's bounds: accepted, unused by these act types
  r.Float("upper_bound");
  r.Finish();
  return p;
}

namespace {

constexpr int64_t kMinChunk = 1 << 14;  // elements: smaller arrays are not worth splitting

// One loop per act type (the function inlined, no dispatch per element). y may be x (in place).
template <ActType kAct>
[[gnu::always_inline]] inline void ForwardLoop(int64_t n, const float* x, float* y, float s) {
  COHORT_ELEMENTWISE
  for (int64_t i = 0; i < n; ++i) y[i] = ActivationValue(kAct, x[i], s);
}

// dx = dy * f'(x, y), or dx += ... for kAdd; x is null for the types that read y alone.
template <ActType kAct>
[[gnu::always_inline]] inline void BackwardLoop(GradReq req, int64_t n, const float* dy,
                                                const float* x, const float* y, float* dx,
                                                float s) {
  if (req == GradReq::kAdd) {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) {
      dx[i] += dy[i] * ActivationDerivative(kAct, x ? x[i] : 0.0f, y[i], s);
    }
  } else {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) {
      dx[i] = dy[i] * ActivationDerivative(kAct, x ? x[i] : 0.0f, y[i], s);
    }
  }
}

// The loops, compiled for AVX2 and AVX-512 too (Note [CPU clones]); the switch picks the loop
// outside it, so each clone inlines all nine.
COHORT_CPU_CLONES void ActivationForward(ActType act, int64_t n, const float* x, float* y,
                                         float s) {
  switch (act) {
    case ActType::kRelu: return ForwardLoop<ActType::kRelu>(n, x, y, s);
    case ActType::kSigmoid: return ForwardLoop<ActType::kSigmoid>(n, x, y, s);
    case ActType::kTanh: return ForwardLoop<ActType::kTanh>(n, x, y, s);
    case ActType::kSoftrelu: return ForwardLoop<ActType::kSoftrelu>(n, x, y, s);
    case ActType::kSoftsign: return ForwardLoop<ActType::kSoftsign>(n, x, y, s);
    case ActType::kLeaky: return ForwardLoop<ActType::kLeaky>(n, x, y, s);
    case ActType::kElu: return ForwardLoop<ActType::kElu>(n, x, y, s);
    case ActType::kSelu: return ForwardLoop<ActType::kSelu>(n, x, y, s);
    case ActType::kGelu: return ForwardLoop<ActType::kGelu>(n, x, y, s);
  }
}

COHORT_CPU_CLONES void ActivationBackward(ActType act, GradReq r, int64_t n, const float* dy,
                                          const float* x, const float* y, float* dx, float s) {
  switch (act) {
    case ActType::kRelu: return BackwardLoop<ActType::kRelu>(r, n, dy, x, y, dx, s);
    case ActType::kSigmoid: return BackwardLoop<ActType::kSigmoid>(r, n, dy, x, y, dx, s);
    case ActType::kTanh: return BackwardLoop<ActType::kTanh>(r, n, dy, x, y, dx, s);
    case ActType::kSoftrelu: return BackwardLoop<ActType::kSoftrelu>(r, n, dy, x, y, dx, s);
    case ActType::kSoftsign: return BackwardLoop<ActType::kSoftsign>(r, n, dy, x, y, dx, s);
    case ActType::kLeaky: return BackwardLoop<ActType::kLeaky>(r, n, dy, x, y, dx, s);
    case ActType::kElu: return BackwardLoop<ActType::kElu>(r, n, dy, x, y, dx, s);
    case ActType::kSelu: return BackwardLoop<ActType::kSelu>(r, n, dy, x, y, dx, s);
    case ActType::kGelu: return BackwardLoop<ActType::kGelu>(r, n, dy, x, y, dx, s);
  }
}

// float16 and bfloat16 arrays (mixed precision): tiles widened into float32 scratch, run through
// the float32 loops above and written back in T, each tile in cache (no pass of its own).
constexpr int64_t kTile = 2048;

template <typename T>
void ForwardLowPrecision(const OpContext& ctx, const ActivationParam& p, const NDArray& in,
                         const NDArray& out) {
  const T* x = in.data<T>();
  T* y = out.data<T>();  // may be x
  const int64_t n = in.size();
  ParallelChunks(
      n, ChunksFor(ctx, n / kMinChunk),
      [&](int64_t, int64_t b, int64_t e) {
        float* buf = Scratch(kTile);
        for (int64_t t = b; t < e; t += kTile) {
          const int64_t m = std::min(kTile, e - t);
          WidenToFloat(in.dtype(), x + t, m, buf);
          ActivationForward(p.act_type, m, buf, buf, p.slope);
          NarrowFromFloat(buf, m, out.dtype(), y + t);
        }
      },
      ctx.arena);
}

template <typename T>
void BackwardLowPrecision(const OpContext& ctx, const ActivationParam& p, GradReq req,
                          const NDArray& out_grad, const NDArray* in, const NDArray& out,
                          const NDArray& in_grad) {
  const T* dy = out_grad.data<T>();
  const T* x = in ? in->data<T>() : nullptr;
  const T* y = out.data<T>();
  T* dx = in_grad.data<T>();
  const int64_t n = out.size();
  ParallelChunks(
      n, ChunksFor(ctx, n / kMinChunk),
      [&](int64_t, int64_t b, int64_t e) {
        float* fdy = Scratch(kTile, 0);
        float* fx = Scratch(kTile, 1);
        float* fy = Scratch(kTile, 2);
        float* fdx = Scratch(kTile, 3);
        for (int64_t t = b; t < e; t += kTile) {
          const int64_t m = std::min(kTile, e - t);
          const DType type = out.dtype();
          WidenToFloat(type, dy + t, m, fdy);
          // A derivative reads the input or the output, never both (ActivationDerivative): the
          // one it does not read is not widened (fx passed for it).
          if (x) {
            WidenToFloat(type, x + t, m, fx);
          } else {
            WidenToFloat(type, y + t, m, fy);
          }
          if (req == GradReq::kAdd) WidenToFloat(type, dx + t, m, fdx);
          ActivationBackward(p.act_type, req, m, fdy, x ? fx : nullptr, x ? fx : fy, fdx, p.slope);
          NarrowFromFloat(fdx, m, type, dx + t);
        }
      },
      ctx.arena);
}

class Pointwise : public Operator {
 public:
  explicit Pointwise(const ActivationParam& p) : p_(p) {}

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ActivationForwardGpu(ctx, p_, in[0], out[0]));
    if (in[0].dtype() == DType::kBFloat16)
      return ForwardLowPrecision<bfloat16>(ctx, p_, in[0], out[0]);
    if (in[0].dtype() == DType::kFloat16)
      return ForwardLowPrecision<float16>(ctx, p_, in[0], out[0]);
    const float* x = F(in[0]);
    float* y = F(out[0]);
    const int64_t n = in[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          ActivationForward(p_.act_type, e - b, x + b, y + b, p_.slope);
        },
        ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(
        ctx, ActivationBackwardGpu(ctx, p_, req[0], out_grad[0],
                                   BackwardNeedsInputs() ? &in[0] : nullptr, out[0], in_grad[0]));
    const NDArray* input = BackwardNeedsInputs() ? &in[0] : nullptr;
    if (out[0].dtype() == DType::kBFloat16) {
      return BackwardLowPrecision<bfloat16>(ctx, p_, req[0], out_grad[0], input, out[0],
                                            in_grad[0]);
    }
    if (out[0].dtype() == DType::kFloat16) {
      return BackwardLowPrecision<float16>(ctx, p_, req[0], out_grad[0], input, out[0], in_grad[0]);
    }
    const float* dy = F(out_grad[0]);
    const float* x = BackwardNeedsInputs() ? F(in[0]) : nullptr;
    const float* y = F(out[0]);
    float* dx = F(in_grad[0]);
    const int64_t n = out[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          ActivationBackward(p_.act_type, req[0], e - b, dy + b, x ? x + b : nullptr, y + b, dx + b,
                             p_.slope);
        },
        ctx.arena);
  }

  // relu, sigmoid, tanh and softrelu differentiate from the output alone, so the input's memory
  // may be reused by the output.
  bool BackwardNeedsInputs() const override { return p_.GradReadsInput(); }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  // Mixed precision (issue 37): float16 and bfloat16 computed in float32 registers.
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  }

 private:
  ActivationParam p_;
};

// LeakyReLU with act_type prelu: (data, gamma), a learned slope per channel (axis 1).
class Prelu : public Operator {
 public:
  explicit Prelu(const Attrs& attrs) {
    ParamReader r("LeakyReLU", attrs);
    r.Enum("act_type");
    r.Float("slope");  // accepted as MXNet does; prelu's slopes are the gamma argument
    r.Float("lower_bound");
    r.Float("upper_bound");
    r.Finish();
  }
  std::vector<std::string> ListArguments() const override { return {"data", "gamma"}; }
  std::string InputInit(const std::string& slot) const override {
    return slot == "gamma" ? R"(["Constant", {"value": 0.25}])" : "";
  }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], in[0], "LeakyReLU", "output");
    AssignShape(in[0], out[0], "LeakyReLU", "data");
    if (!ShapeKnown(in[0])) return false;
    if (!ShapeKnown(in[1])) in[1] = Shape({in[0].ndim() >= 2 ? in[0][1] : 1});
    COHORT_CHECK(in[1].ndim() == 1 &&
                 (in[1][0] == 1 || (in[0].ndim() >= 2 && in[1][0] == in[0][1])))
        << "LeakyReLU prelu: gamma " << in[1] << " must have one slope or one per channel of "
        << in[0];
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const auto [outer, channels, inner] = Layout(in[0].shape(), in[1].size());
    COHORT_GPU_DISPATCH(ctx, PreluForwardGpu(ctx, in[0], in[1], out[0], channels, inner));
    const float* x = F(in[0]);
    const float* gamma = F(in[1]);
    float* y = F(out[0]);
    for (int64_t k = 0; k < in[0].size(); ++k) {
      y[k] = PreluValue(x[k], gamma[PreluChannel(k, channels, inner)]);
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const auto [outer, channels, inner] = Layout(in[0].shape(), in[1].size());
    COHORT_GPU_DISPATCH(ctx, PreluBackwardGpu(ctx, out_grad[0], in[0], in[1], req, in_grad, outer,
                                              channels, inner));
    const float* dy = F(out_grad[0]);
    const float* x = F(in[0]);
    const float* gamma = F(in[1]);
    if (req[0] != GradReq::kNull) {
      float* dx = F(in_grad[0]);
      for (int64_t k = 0; k < in[0].size(); ++k) {
        AssignReq(req[0], dx, k,
                  PreluInputGrad(dy[k], x[k], gamma[PreluChannel(k, channels, inner)]));
      }
    }
    if (req[1] != GradReq::kNull) {
      float* dgamma = F(in_grad[1]);
      for (int64_t c = 0; c < channels; ++c) {
        AssignReq(req[1], dgamma, c, PreluGammaGrad(dy, x, c, outer, channels, inner));
      }
    }
  }

 private:
  struct ChannelLayout {
    int64_t outer, channels, inner;
  };
  // One slope for all: a single channel spanning each sample.
  static ChannelLayout Layout(const Shape& s, int64_t slopes) {
    if (slopes == 1) return {1, 1, s.Size()};
    const AxisSplit a = SplitAt(s, 1);
    return {a.outer, a.size, a.inner};
  }
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Activation",
       "Applies an activation function element-wise to the input.",
       {"data"},
       "",
       {{"act_type", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}", kRequired,
         "Activation function to be applied."}}},
      {"LeakyReLU",
       "Applies Leaky rectified linear unit activation element-wise to the input.",
       {"data", "gamma"},
       "",
       {{"act_type", "{'elu', 'gelu', 'leaky', 'prelu', 'selu'}", "leaky",
         "Activation function to be applied."},
        {"slope", "float", "0.25", "Init slope for the activation. (For leaky and elu only)"},
        {"lower_bound", "float", "0.125", "Lower bound of random slope. (For rrelu only)"},
        {"upper_bound", "float", "0.333999991", "Upper bound of random slope. (For rrelu only)"}}},
      {"relu", "Computes rectified linear activation.", {"data"}, "", {}},
      {"sigmoid", "Computes sigmoid of x element-wise.", {"data"}, "", {}},
      {"softsign", "Computes softsign of x element-wise.", {"data"}, "", {}},
      {"tanh",
       "Returns the hyperbolic tangent of the input array, computed element-wise.",
       {"data"},
       "",
       {}},
  };
}

}  // namespace

void RegisterActivations(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Activation", [](const Attrs& a) {
    return std::make_unique<Pointwise>(ActivationParam::ParseActivation(a));
  });
  r.Register("LeakyReLU", [](const Attrs& a) -> std::unique_ptr<Operator> {
    if (auto it = a.find("act_type"); it != a.end() && it->second == "prelu") {
      return std::make_unique<Prelu>(a);
    }
    return std::make_unique<Pointwise>(ActivationParam::ParseLeakyReLU(a));
  });
  // MXNet's standalone functions (F.relu(x) in a gluon block), Activation with that act_type.
  for (const char* name : {"relu", "sigmoid", "tanh", "softsign"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) {
      Attrs with_type = a;
      COHORT_CHECK(with_type.emplace("act_type", n).second)
          << n << ": unknown attribute 'act_type' (the function is its type)";
      return std::make_unique<Pointwise>(ActivationParam::ParseActivation(with_type));
    });
  }
}

}  // namespace cohort::op
