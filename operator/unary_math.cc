// Unary math on the CPU: one loop per function of unary_math.h's list, calling its functions.
#include "operator/unary_math.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// unary_math.cu (Note [GPU kernels]); `in` / `out` are null where backward does not read them.
void UnaryTypedForwardGpu(const OpContext& ctx, const UnaryParam& p, const NDArray& in,
                          const NDArray& out);
void UnaryForwardGpu(const OpContext& ctx, const UnaryParam& p, const NDArray& in,
                     const NDArray& out);
void UnaryBackwardGpu(const OpContext& ctx, const UnaryParam& p, GradReq req,
                      const NDArray& out_grad, const NDArray* in, const NDArray* out,
                      const NDArray& in_grad);
void UnaryTypedBackwardGpu(const OpContext& ctx, const UnaryParam& p, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray* out,
                           const NDArray& in_grad);

UnaryParam UnaryParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  UnaryParam p;
  bool known = false;
#define COHORT_UNARY_MATCH(k, n) \
  if (op == n) p.kind = UnaryKind::k, known = true;
  COHORT_UNARY_KINDS(COHORT_UNARY_MATCH)
#undef COHORT_UNARY_MATCH
  COHORT_CHECK(known) << "'" << op << "' is not a function of unary_math.h";
  if (p.kind == UnaryKind::kClip) {
    p.a_min = static_cast<float>(r.Float("a_min"));
    p.a_max = static_cast<float>(r.Float("a_max"));
    COHORT_CHECK(p.a_min <= p.a_max) << "clip: a_min " << p.a_min << " is above a_max " << p.a_max;
  }
  r.Finish();
  return p;
}

namespace {

constexpr int64_t kMinChunk = 1 << 14;  // elements: smaller arrays are not worth splitting

template <UnaryKind kKind>
[[gnu::always_inline]] inline void ForwardLoop(int64_t n, const float* x, float* y, float lo,
                                               float hi) {
  COHORT_ELEMENTWISE
  for (int64_t i = 0; i < n; ++i) y[i] = UnaryValue(kKind, x[i], lo, hi);
}

// Where backward does not read x (or y), the other pointer stands in: the function ignores it.
template <UnaryKind kKind>
[[gnu::always_inline]] inline void BackwardLoop(GradReq req, int64_t n, const float* dy,
                                                const float* x, const float* y, float* dx, float lo,
                                                float hi) {
  if (req == GradReq::kAdd) {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) dx[i] += UnaryGrad(kKind, dy[i], x[i], y[i], lo, hi);
  } else {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) dx[i] = UnaryGrad(kKind, dy[i], x[i], y[i], lo, hi);
  }
}

// Compiled for AVX2 and AVX-512 too (Note [CPU clones]); the switch is outside the loops.
COHORT_CPU_CLONES void UnaryForward(UnaryKind kind, int64_t n, const float* x, float* y, float lo,
                                    float hi) {
  switch (kind) {
#define COHORT_UNARY_FORWARD(k, name) \
  case UnaryKind::k: return ForwardLoop<UnaryKind::k>(n, x, y, lo, hi);
    COHORT_UNARY_KINDS(COHORT_UNARY_FORWARD)
#undef COHORT_UNARY_FORWARD
  }
}

COHORT_CPU_CLONES void UnaryBackward(UnaryKind kind, GradReq r, int64_t n, const float* dy,
                                     const float* x, const float* y, float* dx, float lo,
                                     float hi) {
  switch (kind) {
#define COHORT_UNARY_BACKWARD(k, name) \
  case UnaryKind::k: return BackwardLoop<UnaryKind::k>(r, n, dy, x, y, dx, lo, hi);
    COHORT_UNARY_KINDS(COHORT_UNARY_BACKWARD)
#undef COHORT_UNARY_BACKWARD
  }
}

class Unary : public Operator {
 public:
  explicit Unary(const UnaryParam& p) : p_(p) {}

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }

  bool TakesDType(DType dtype) const override { return UnaryTakes(p_.kind, dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    if (out[0].dtype() != DType::kFloat32) {  // Note [Typed unary math]
      COHORT_GPU_DISPATCH(ctx, UnaryTypedForwardGpu(ctx, p_, in[0], out[0]));
      DispatchDType(out[0].dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* x = in[0].data<T>();
        T* y = out[0].data<T>();
        for (int64_t i = 0; i < out[0].size(); ++i) {
          y[i] = UnaryTyped<T>(p_.kind, x[i], p_.a_min, p_.a_max);
        }
      });
      return;
    }
    COHORT_GPU_DISPATCH(ctx, UnaryForwardGpu(ctx, p_, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    const int64_t n = in[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          UnaryForward(p_.kind, e - b, x + b, y + b, p_.a_min, p_.a_max);
        },
        ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const bool reads_x = p_.GradReadsInput();
    if (out_grad[0].dtype() != DType::kFloat32) {  // Note [Typed unary math]
      const NDArray* x_in = reads_x ? &in[0] : nullptr;
      const NDArray* y_out = reads_x ? nullptr : &out[0];
      COHORT_GPU_DISPATCH(
          ctx, UnaryTypedBackwardGpu(ctx, p_, req[0], out_grad[0], x_in, y_out, in_grad[0]));
      DispatchGradient(type(), out_grad[0].dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* dy = out_grad[0].data<T>();
        const T* x = x_in ? x_in->data<T>() : dy;  // the function ignores the one it does not read
        const T* y = y_out ? y_out->data<T>() : dy;
        T* dx = in_grad[0].data<T>();
        for (int64_t i = 0; i < out_grad[0].size(); ++i) {
          AssignReq(req[0], dx, i,
                    UnaryTypedGrad<T>(p_.kind, ConvertValue<ComputeType<T>>(dy[i]), x[i], y[i],
                                      p_.a_min, p_.a_max));
        }
      });
      return;
    }
    COHORT_GPU_DISPATCH(ctx,
                        UnaryBackwardGpu(ctx, p_, req[0], out_grad[0], reads_x ? &in[0] : nullptr,
                                         reads_x ? nullptr : &out[0], in_grad[0]));
    const float* dy = F(out_grad[0]);
    const float* x = reads_x ? F(in[0]) : dy;
    const float* y = reads_x ? dy : F(out[0]);
    float* dx = F(in_grad[0]);
    const int64_t n = out_grad[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / kMinChunk),
        [&](int64_t, int64_t b, int64_t e) {
          UnaryBackward(p_.kind, req[0], e - b, dy + b, x + b, y + b, dx + b, p_.a_min, p_.a_max);
        },
        ctx.arena);
  }

  bool PassesGradient() const override { return p_.PassesGradient(); }
  bool BackwardNeedsInputs() const override { return p_.GradReadsInput(); }
  bool BackwardNeedsOutputs() const override { return !p_.GradReadsInput(); }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  UnaryParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"_copy", "Returns a copy of the input.", {"data"}, "", {}},
      {"abs", "Returns element-wise absolute value of the input.", {"data"}, "", {}},
      {"arccos", "Returns element-wise inverse cosine of the input array.", {"data"}, "", {}},
      {"arccosh",
       "Returns the element-wise inverse hyperbolic cosine of the input array, \\ computed "
       "element-wise.",
       {"data"},
       "",
       {}},
      {"arcsin", "Returns element-wise inverse sine of the input array.", {"data"}, "", {}},
      {"arcsinh",
       "Returns the element-wise inverse hyperbolic sine of the input array, \\ computed "
       "element-wise.",
       {"data"},
       "",
       {}},
      {"arctan", "Returns element-wise inverse tangent of the input array.", {"data"}, "", {}},
      {"arctanh",
       "Returns the element-wise inverse hyperbolic tangent of the input array, \\ computed "
       "element-wise.",
       {"data"},
       "",
       {}},
      {"cbrt", "Returns element-wise cube-root value of the input.", {"data"}, "", {}},
      {"ceil", "Returns element-wise ceiling of the input.", {"data"}, "", {}},
      {"clip",
       "Clips (limits) the values in an array: clip(x, a_min, a_max) = max(min(x, a_max), a_min).",
       {"data"},
       "",
       {{"a_min", "float", kRequired, "Minimum value"},
        {"a_max", "float", kRequired, "Maximum value"}}},
      {"cos", "Computes the element-wise cosine of the input array.", {"data"}, "", {}},
      {"cosh",
       "Returns the hyperbolic cosine of the input array, computed element-wise.",
       {"data"},
       "",
       {}},
      {"degrees",
       "Converts each element of the input array from radians to degrees.",
       {"data"},
       "",
       {}},
      {"exp", "Returns element-wise exponential value of the input.", {"data"}, "", {}},
      {"expm1", "Returns ``exp(x) - 1`` computed element-wise on the input.", {"data"}, "", {}},
      {"fix",
       "Returns element-wise rounded value to the nearest \\ integer towards zero of the input.",
       {"data"},
       "",
       {}},
      {"floor", "Returns element-wise floor of the input.", {"data"}, "", {}},
      {"log", "Returns element-wise Natural logarithmic value of the input.", {"data"}, "", {}},
      {"log10", "Returns element-wise Base-10 logarithmic value of the input.", {"data"}, "", {}},
      {"log1p", "Returns element-wise ``log(1 + x)`` value of the input.", {"data"}, "", {}},
      {"log2", "Returns element-wise Base-2 logarithmic value of the input.", {"data"}, "", {}},
      {"ones_like",
       "Return an array of ones with the same shape and type as the input array.",
       {"data"},
       "",
       {}},
      {"radians",
       "Converts each element of the input array from degrees to radians.",
       {"data"},
       "",
       {}},
      {"rcbrt", "Returns element-wise inverse cube-root value of the input.", {"data"}, "", {}},
      {"reciprocal", "Returns the reciprocal of the argument, element-wise.", {"data"}, "", {}},
      {"rint",
       "Returns element-wise rounded value to the nearest integer of the input.",
       {"data"},
       "",
       {}},
      {"round",
       "Returns element-wise rounded value to the nearest integer of the input.",
       {"data"},
       "",
       {}},
      {"rsqrt", "Returns element-wise inverse square-root value of the input.", {"data"}, "", {}},
      {"sign", "Returns element-wise sign of the input.", {"data"}, "", {}},
      {"sin", "Computes the element-wise sine of the input array.", {"data"}, "", {}},
      {"sinh",
       "Returns the hyperbolic sine of the input array, computed element-wise.",
       {"data"},
       "",
       {}},
      {"sqrt", "Returns element-wise square-root value of the input.", {"data"}, "", {}},
      {"square", "Returns element-wise squared value of the input.", {"data"}, "", {}},
      {"tan", "Computes the element-wise tangent of the input array.", {"data"}, "", {}},
      {"trunc", "Return the element-wise truncated value of the input.", {"data"}, "", {}},
      {"zeros_like",
       "Return an array of zeros with the same shape, type and storage type as the input array.",
       {"data"},
       "",
       {}},
  };
}

}  // namespace

void RegisterUnaryMath(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  // Every name of unary_math.h's list (Parse refuses one that is not there).
  for (const char* name :
       {"sqrt",       "exp",    "log",   "square",     "clip",     "_copy",   "abs",     "sign",
        "reciprocal", "rsqrt",  "cbrt",  "rcbrt",      "sin",      "cos",     "tan",     "arcsin",
        "arccos",     "arctan", "sinh",  "cosh",       "arcsinh",  "arccosh", "arctanh", "degrees",
        "radians",    "floor",  "ceil",  "round",      "rint",     "fix",     "trunc",   "log10",
        "log2",       "log1p",  "expm1", "zeros_like", "ones_like"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Unary>(UnaryParam::Parse(n, a)); });
  }
  r.Alias("identity", "_copy");  // gluon exports an identity (a Dropout of rate 0) as _copy
}

}  // namespace cohort::op
