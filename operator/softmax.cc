// softmax, log_softmax and softmin on the CPU: softmax.h's row bodies, one row at a time.
#include "operator/softmax.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// softmax.cu (Note [GPU kernels]); the softmax runs over `size` of the (outer, size, inner) data.
void SoftmaxForwardGpu(const OpContext& ctx, const SoftmaxRows& rows, int64_t outer, int64_t inner);
void SoftmaxBackwardGpu(const OpContext& ctx, const SoftmaxGradRows& rows, int64_t outer,
                        int64_t inner);

SoftmaxParam SoftmaxParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  SoftmaxParam p;
  p.axis = static_cast<int>(r.Int("axis"));
  if (auto t = r.OptionalFloat("temperature")) p.temperature = static_cast<float>(*t);
  r.Enum("dtype");
  // use_length=True adds an input of valid lengths per row: not implemented, so refused.
  COHORT_CHECK(!r.OptionalBool("use_length").value_or(false))
      << "softmax: use_length=True (a length input masking each row) is not supported";
  r.Finish();
  return p;
}

namespace {

// The row loops built for AVX2 and AVX-512 too (Note [CPU clones]).
COHORT_CPU_CLONES void RunSoftmaxRows(const SoftmaxRows& body, int64_t first, int64_t last,
                                      int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}
COHORT_CPU_CLONES void RunSoftmaxGradRows(const SoftmaxGradRows& body, int64_t first, int64_t last,
                                          int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}

class Softmax : public Operator {
 public:
  // softmin(x, t) is softmax(-x / t): softmax with the temperature negated.
  Softmax(const std::string& name, const Attrs& attrs)
      : log_(name == "log_softmax"), p_(SoftmaxParam::Parse(name, attrs)) {
    if (name == "softmin") p_.temperature = -p_.temperature;
  }

  bool BackwardNeedsInputs() const override { return false; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const bool done = InferSameShape(in, out, type());
    if (in[0].ndim() > 0) Axis(in[0]);  // an axis the data lacks: refused before any forward
    return done;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const AxisSplit s = SplitAt(in[0].shape(), Axis(in[0].shape()));
    const SoftmaxRows rows{FloatsOf(in[0]), FloatsOf(out[0]), s.size,
                           s.inner,         p_.temperature,   log_};
    COHORT_GPU_DISPATCH(ctx, SoftmaxForwardGpu(ctx, rows, s.outer, s.inner));
    ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows, &RunSoftmaxRows);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const AxisSplit s = SplitAt(out[0].shape(), Axis(out[0].shape()));
    const SoftmaxGradRows rows{FloatsOf(out[0]),
                               FloatsOf(out_grad[0]),
                               FloatsOf(in_grad[0]),
                               s.size,
                               s.inner,
                               p_.temperature,
                               log_,
                               req[0]};
    COHORT_GPU_DISPATCH(ctx, SoftmaxBackwardGpu(ctx, rows, s.outer, s.inner));
    ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows, &RunSoftmaxGradRows);
  }

 private:
  int Axis(const Shape& s) const { return NormalizeAxis(p_.axis, s, type()); }

  bool log_;
  SoftmaxParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const std::vector<ParamSpec> params = {
      {"axis", "int", "-1", "The axis along which to compute softmax."},
      {"temperature", "double or None", "None", "Temperature parameter in softmax"},
      {"dtype", "{None, 'float32'}", "None",
       "DType of the output in case this can't be inferred. Defaults to the same as input's "
       "dtype if not defined (dtype=None)."},
      {"use_length", "boolean or None", "0",
       "Whether to use the length input as a mask over the data input (not supported)."}};
  return {
      {"log_softmax",
       "Computes the log softmax of the input. This is equivalent to computing softmax followed by "
       "log.",
       {"data"},
       "",
       params},
      {"softmax", "Applies the softmax function.", {"data", "length"}, "", params},
      {"softmin", "Applies the softmin function.", {"data"}, "", params},
  };
}

}  // namespace

void RegisterSoftmax(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  for (const char* name : {"softmax", "log_softmax", "softmin"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Softmax>(n, a); });
  }
}

}  // namespace cohort::op
