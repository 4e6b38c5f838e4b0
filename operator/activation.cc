// Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu, selu): one
// pointwise operator whose loops are specialised per function (no dispatch per element).
#include <cmath>

#include "operator/fast_math.h"
#include "operator/kernel_util.h"

namespace cohort::op {

// activation.cu (Note [GPU kernels]); act is an Act as an int, and `in` is null unless backward
// reads the input.
void ActivationForwardGpu(const OpContext& ctx, int act, float slope, const NDArray& in,
                          const NDArray& out);
void ActivationBackwardGpu(const OpContext& ctx, int act, float slope, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray& out,
                           const NDArray& in_grad);

namespace {

enum class Act { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign, kLeaky, kElu, kSelu };

constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluLambda = 1.0507009873554805f;
constexpr int64_t kMinChunk = 1 << 14;  // elements: smaller arrays are not worth splitting

// dx = dy * d(x, y), or dx += ... for kAdd.
template <typename D>
[[gnu::always_inline]] inline void Grad(GradReq req, int64_t n, const float* dy, const float* x,
                                        const float* y, float* dx, D d) {
  if (req == GradReq::kAdd) {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * d(x ? x[i] : 0.0f, y[i]);
  } else {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * d(x ? x[i] : 0.0f, y[i]);
  }
}

// The loops, compiled for AVX2 and AVX-512 too (Note [CPU clones]). y may be x (in place).
COHORT_CPU_CLONES void ActivationForward(Act act, int64_t n, const float* x, float* y, float s) {
  switch (act) {
    case Act::kRelu:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
      break;
    case Act::kSigmoid:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = FastSigmoid(x[i]);
      break;
    case Act::kTanh:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = FastTanh(x[i]);
      break;
    case Act::kSoftrelu:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 20 ? x[i] : std::log1p(std::exp(x[i]));
      break;
    case Act::kSoftsign:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1 + std::fabs(x[i]));
      break;
    case Act::kLeaky:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : s * x[i];
      break;
    case Act::kElu:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : s * std::expm1(x[i]);
      break;
    case Act::kSelu:
      COHORT_ELEMENTWISE
      for (int64_t i = 0; i < n; ++i) {
        y[i] = kSeluLambda * (x[i] > 0 ? x[i] : kSeluAlpha * std::expm1(x[i]));
      }
      break;
  }
}

COHORT_CPU_CLONES void ActivationBackward(Act act, GradReq r, int64_t n, const float* dy,
                                          const float* x, const float* y, float* dx, float s) {
  switch (act) {
    case Act::kRelu:
      Grad(r, n, dy, x, y, dx, [](float, float v) { return v > 0 ? 1.0f : 0.0f; });
      break;
    case Act::kSigmoid: Grad(r, n, dy, x, y, dx, [](float, float v) { return v * (1 - v); }); break;
    case Act::kTanh: Grad(r, n, dy, x, y, dx, [](float, float v) { return 1 - v * v; }); break;
    case Act::kSoftrelu:  // sigmoid(x) = 1 - e^-y
      Grad(r, n, dy, x, y, dx, [](float, float v) { return -std::expm1(-v); });
      break;
    case Act::kSoftsign:
      Grad(r, n, dy, x, y, dx, [](float u, float) {
        const float d = 1 + std::fabs(u);
        return 1 / (d * d);
      });
      break;
    case Act::kLeaky:
      Grad(r, n, dy, x, y, dx, [s](float u, float) { return u > 0 ? 1.0f : s; });
      break;
    case Act::kElu:
      Grad(r, n, dy, x, y, dx, [s](float u, float) { return u > 0 ? 1.0f : s * std::exp(u); });
      break;
    case Act::kSelu:
      Grad(r, n, dy, x, y, dx,
           [](float u, float) { return kSeluLambda * (u > 0 ? 1.0f : kSeluAlpha * std::exp(u)); });
      break;
  }
}

class Pointwise : public Operator {
 public:
  Pointwise(const Attrs& attrs, bool leaky) {
    if (leaky) {
      ParamReader r("LeakyReLU", attrs);
      const std::string t = r.Enum("act_type", {"leaky", "elu", "selu"}, "leaky");
      act_ = t == "leaky" ? Act::kLeaky : t == "elu" ? Act::kElu : Act::kSelu;
      slope_ = static_cast<float>(r.Float("slope", 0.25));
      r.Float("lower_bound", 0.125);  // rrelu's bounds: accepted, unused by these act types
      r.Float("upper_bound", 0.334);
      r.Finish();
    } else {
      ParamReader r("Activation", attrs);
      const std::string t =
          r.Enum("act_type", {"relu", "sigmoid", "tanh", "softrelu", "softsign"}, "");
      COHORT_CHECK(!t.empty()) << "Activation: required attribute 'act_type' is missing";
      r.Finish();
      act_ = t == "relu"       ? Act::kRelu
             : t == "sigmoid"  ? Act::kSigmoid
             : t == "tanh"     ? Act::kTanh
             : t == "softrelu" ? Act::kSoftrelu
                               : Act::kSoftsign;
    }
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx,
                        ActivationForwardGpu(ctx, static_cast<int>(act_), slope_, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    const int64_t n = in[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          ActivationForward(act_, e - b, x + b, y + b, slope_);
        },
        ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(
        ctx, ActivationBackwardGpu(ctx, static_cast<int>(act_), slope_, req[0], out_grad[0],
                                   BackwardNeedsInputs() ? &in[0] : nullptr, out[0], in_grad[0]));
    const float* dy = F(out_grad[0]);
    const float* x = BackwardNeedsInputs() ? F(in[0]) : nullptr;
    const float* y = F(out[0]);
    float* dx = F(in_grad[0]);
    const int64_t n = out[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          ActivationBackward(act_, req[0], e - b, dy + b, x ? x + b : nullptr, y + b, dx + b,
                             slope_);
        },
        ctx.arena);
  }

  // relu, sigmoid, tanh and softrelu differentiate from the output alone, so the input's memory
  // may be reused by the output.
  bool BackwardNeedsInputs() const override { return act_ >= Act::kSoftsign; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  Act act_ = Act::kRelu;
  float slope_ = 0.25f;
};

}  // namespace

void RegisterActivations(OpRegistry& r) {
  r.Register("Activation", [](const Attrs& a) { return std::make_unique<Pointwise>(a, false); });
  r.Register("LeakyReLU", [](const Attrs& a) { return std::make_unique<Pointwise>(a, true); });
}

}  // namespace cohort::op
