// _arange and _contrib_arange_like on the CPU, with arange.h's values, and _zeros, _ones and
// _full as aranges of step 0. Neither passes a
// gradient (arange_like's data gets zeros, as in MXNet).
#include <cmath>

#include "operator/arange.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// arange.cu (Note [GPU kernels]).
void ArangeGpu(const OpContext& ctx, const ArangeParam& p, const NDArray& out);
void ZeroGradGpu(const OpContext& ctx, const NDArray& grad);

ArangeParam ArangeParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  ArangeParam p;
  p.start = r.Float("start");
  p.step = r.Float("step");
  p.repeat = r.Int("repeat");
  if (op == "_arange") {
    p.stop = r.OptionalFloat("stop");
    r.Bool("infer_range");
    p.dtype = ParseDType(r.Enum("dtype"));
  } else if (auto axis = r.OptionalInt("axis")) {
    p.axis = static_cast<int>(*axis);
  }
  r.String("ctx");  // placement: the executor's
  r.Finish();
  COHORT_CHECK(p.step != 0) << op << ": step must not be 0";
  COHORT_CHECK_GT(p.repeat, 0) << op << ": repeat must be positive";
  return p;
}

namespace {

// The values into `out`, on its device: one body for _arange, _contrib_arange_like and the fills.
void RunArange(const OpContext& ctx, const ArangeParam& p, const NDArray& out) {
  COHORT_GPU_DISPATCH(ctx, ArangeGpu(ctx, p, out));
  DispatchDType(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) y[i] = ArangeValue<T>(p.start, p.step, p.repeat, i);
  });
}

class Arange : public Operator {
 public:
  explicit Arange(const Attrs& attrs) : p_(ArangeParam::Parse("_arange", attrs)) {}

  std::vector<std::string> ListArguments() const override { return {}; }
  // The output is `dtype` (MXNet's _arange dtype).
  bool InferType(TypeSlots&, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], p_.dtype, type(), "output");
    return true;
  }
  bool TakesDType(DType dtype) const override { return dtype != DType::kBool; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>&, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const double start = p_.stop ? p_.start : 0, stop = p_.stop ? *p_.stop : p_.start;
    const double n = std::ceil((stop - start) / p_.step);
    COHORT_CHECK(n > 0 && n * p_.repeat < 1e15) << "_arange: start " << start << ", stop " << stop
                                                << ", step " << p_.step << " give no values";
    AssignShape(out[0], {static_cast<int64_t>(n) * p_.repeat}, "_arange", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    ArangeParam p = p_;
    if (!p.stop) p.start = 0;
    RunArange(ctx, p, out[0]);
  }

  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {}

 private:
  ArangeParam p_;
};

// _zeros, _ones and _full (mx.sym.zeros/ones/full): an array of `shape` and `dtype` holding one
// value, an arange of step 0 (the same kernels).
class Filled : public Operator {
 public:
  Filled(const std::string& op, const Attrs& attrs) {
    ParamReader r(op, attrs);
    shape_ = r.Tuple("shape");
    dtype_ = ParseDType(r.Enum("dtype"));
    value_ = op == "_ones" ? 1.0 : op == "_full" ? r.Float("value") : 0.0;
    r.String("ctx");  // placement: the executor's
    r.Finish();
    // A dimension of 0 is unknown (MXNet 1.x's infer_shape_partial): filled in from the ops that
    // read the output, as an RNN cell's begin state (0, hidden) takes its batch.
    bool valid = shape_.ndim() > 0;
    for (int d = 0; d < shape_.ndim(); ++d) valid = valid && shape_[d] >= 0;
    COHORT_CHECK(valid) << op << ": shape " << shape_
                        << " must have dimensions of 0 (unknown) or more";
  }

  std::vector<std::string> ListArguments() const override { return {}; }
  bool InferType(TypeSlots&, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], dtype_, type(), "output");
    return true;
  }
  bool TakesDType(DType dtype) const override { return dtype != DType::kBool; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>&, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], shape_, type(), "output");
    return ShapeKnown(out[0]);
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    ArangeParam p;
    p.start = value_;
    p.step = 0;
    RunArange(ctx, p, out[0]);
  }

  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {}

 private:
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  double value_ = 0;
};

class ArangeLike : public Operator {
 public:
  explicit ArangeLike(const Attrs& attrs) : p_(ArangeParam::Parse("_contrib_arange_like", attrs)) {}

  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    Shape shape = in[0];
    if (p_.axis) {
      const int axis = NormalizeAxis(*p_.axis, in[0], "_contrib_arange_like");
      shape = Shape({in[0][axis]});
    }
    AssignShape(out[0], shape, "_contrib_arange_like", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    RunArange(ctx, p_, out[0]);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    if (req[0] != GradReq::kWrite) return;  // kAdd adds zero
    COHORT_GPU_DISPATCH(ctx, ZeroGradGpu(ctx, in_grad[0]));
    in_grad[0].Fill(0);
  }

 private:
  ArangeParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const ParamSpec step{"step", "double", "1", "Spacing between values."};
  const ParamSpec repeat{
      "repeat", "int", "1",
      "The repeating time of all elements. E.g repeat=3, the element a will be repeated three "
      "times --> a, a, a."};
  const ParamSpec ctx{
      "ctx", "string", "",
      "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for imperative calls."};
  const ParamSpec dtype{"dtype",
                        "{'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}",
                        "float32", "Target data type."};
  const ParamSpec shape{"shape", "Shape(tuple)", "[]", "The shape of the output"};
  return {
      {"_arange",
       "Return evenly spaced values within a given interval. Similar to Numpy",
       {},
       "",
       {{"start", "double", kRequired,
         "Start of interval. The interval includes this value. The default start value is 0."},
        {"stop", "double or None", "None",
         "End of interval. The interval does not include this value, except in some cases where "
         "step is not an integer and floating point round-off affects the length of out."},
        step,
        repeat,
        {"infer_range", "boolean", "0",
         "When set to True, infer the stop position from the start, step, repeat, and output "
         "tensor size."},
        ctx,
        dtype}},
      {"_contrib_arange_like",
       "Return an array with evenly spaced values. If axis is not given, the output has the shape "
       "of the input array; otherwise it is a 1-D array as long as the input along that axis.",
       {"data"},
       "",
       {{"start", "double", "0",
         "Start of interval. The interval includes this value. The default start value is 0."},
        step,
        repeat,
        ctx,
        {"axis", "int or None", "None",
         "Arange elements according to the size of a certain axis of input array. The negative "
         "numbers are interpreted counting from the backward. If not provided, will arange "
         "elements according to the input shape."}}},
      {"_full",
       "fill target with a scalar value",
       {},
       "",
       {shape,
        ctx,
        dtype,
        {"value", "double", kRequired, "Value with which to fill newly created tensor"}}},
      {"_ones", "fill target with ones", {}, "", {shape, ctx, dtype}},
      {"_zeros", "fill target with zeros", {}, "", {shape, ctx, dtype}},
  };
}

}  // namespace

void RegisterArange(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("_arange", [](const Attrs& a) { return std::make_unique<Arange>(a); });
  for (const char* name : {"_zeros", "_ones", "_full"}) {
    const std::string op = name;
    r.Register(op, [op](const Attrs& a) { return std::make_unique<Filled>(op, a); });
  }
  r.Register("_contrib_arange_like",
             [](const Attrs& a) { return std::make_unique<ArangeLike>(a); });
}

}  // namespace cohort::op
