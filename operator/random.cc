// _random_uniform and _random_normal on the CPU, with random.h's values. No inputs, no gradient.
#include "operator/random.h"

#include "operator/common/kernel_util.h"

namespace cohort::op {

// random.cu (Note [GPU kernels]).
void RandomGpu(const OpContext& ctx, const RandomParam& p, uint64_t key, const NDArray& out);

RandomParam RandomParam::Parse(RandomKind kind, const Attrs& attrs) {
  const char* op = kind == RandomKind::kUniform ? "_random_uniform" : "_random_normal";
  ParamReader r(op, attrs);
  RandomParam p;
  p.kind = kind;
  if (kind == RandomKind::kUniform) {
    p.a = r.Float("low");
    p.b = r.Float("high");
    COHORT_CHECK(p.a <= p.b) << op << ": low " << p.a << " is above high " << p.b;
  } else {
    p.a = r.Float("loc");
    p.b = r.Float("scale");
    COHORT_CHECK(p.b >= 0) << op << ": scale " << p.b << " must be >= 0";
  }
  p.shape = r.OptionalTuple("shape").value_or(Shape{});
  const std::string dtype = r.Enum("dtype");
  p.dtype = dtype == "None" ? DType::kFloat32 : ParseDType(dtype);
  r.String("ctx");  // placement: the executor's
  r.Finish();
  COHORT_CHECK(p.shape.ndim() > 0 && p.shape.is_known() && p.shape.Size() > 0)
      << op << ": shape " << p.shape << " must hold at least one element";
  return p;
}

namespace {

class RandomOp : public Operator {
 public:
  RandomOp(RandomKind kind, const Attrs& attrs) : p_(RandomParam::Parse(kind, attrs)) {}

  std::vector<std::string> ListArguments() const override { return {}; }
  bool IsDeterministic() const override { return false; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>&, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], p_.shape, type(), "output");
    return true;
  }
  bool InferType(TypeSlots&, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], p_.dtype, type(), "output");
    return true;
  }
  bool TakesDType(DType dtype) const override { return dtype == p_.dtype; }

  // ctx.seed changes with every forward (Note [Random streams]): each draws afresh.
  void Forward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const uint64_t key = Mix64(ctx.seed);
    COHORT_GPU_DISPATCH(ctx, RandomGpu(ctx, p_, key, out[0]));
    DispatchDType(out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* y = out[0].data<T>();
      for (int64_t i = 0; i < out[0].size(); ++i) {
        y[i] = static_cast<T>(RandomValue(p_.kind, key, p_.a, p_.b, i));
      }
    });
  }

  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {}

 private:
  RandomParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const ParamSpec shape{"shape", "Shape(tuple)", "None", "Shape of the output."};
  const ParamSpec ctx{
      "ctx", "string", "",
      "Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls."};
  const ParamSpec dtype{
      "dtype", "{'None', 'float16', 'float32', 'float64'}", "None",
      "DType of the output in case this can't be inferred. Defaults to float32 if not defined "
      "(dtype=None)."};
  return {
      {"_random_normal",
       "Draw random samples from a normal (Gaussian) distribution.",
       {},
       "",
       {{"loc", "float", "0", "Mean of the distribution."},
        {"scale", "float", "1", "Standard deviation of the distribution."},
        shape,
        ctx,
        dtype}},
      {"_random_uniform",
       "Draw random samples from a uniform distribution.",
       {},
       "",
       {{"low", "float", "0", "Lower bound of the distribution."},
        {"high", "float", "1", "Upper bound of the distribution."},
        shape,
        ctx,
        dtype}},
  };
}

}  // namespace

void RegisterRandom(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  for (RandomKind kind : {RandomKind::kUniform, RandomKind::kNormal}) {
    const std::string name = kind == RandomKind::kUniform ? "_random_uniform" : "_random_normal";
    r.Register(name, [kind](const Attrs& a) { return std::make_unique<RandomOp>(kind, a); });
  }
  r.Alias("random_uniform", "_random_uniform");
  r.Alias("uniform", "_random_uniform");
  r.Alias("random_normal", "_random_normal");
  r.Alias("normal", "_random_normal");
}

}  // namespace cohort::op
