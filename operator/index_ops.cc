// argmax, argmin and argmax_channel on the CPU, with index_ops.h's positions.
#include "operator/index_ops.h"

#include "operator/common/kernel_util.h"

namespace cohort::op {

// index_ops.cu (Note [GPU kernels]).
void ArgReduceGpu(const OpContext& ctx, const ArgReduceParam& p, const NDArray& in,
                  const NDArray& out);
void ZeroGradGpu(const OpContext& ctx, const NDArray& grad);  // arange.cu

OneHotParam OneHotParam::Parse(const Attrs& attrs) {
  ParamReader r("one_hot", attrs);
  OneHotParam p;
  p.depth = r.Int("depth");
  COHORT_CHECK(p.depth > 0) << "one_hot: depth must be positive, got " << p.depth;
  p.on_value = static_cast<float>(r.Float("on_value", 1.0));
  p.off_value = static_cast<float>(r.Float("off_value", 0.0));
  r.Enum("dtype", {"float32"}, "float32");  // other dtypes: not yet
  r.Finish();
  return p;
}

ArgReduceParam ArgReduceParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  ArgReduceParam p;
  p.is_max = op != "argmin";
  if (op == "argmax_channel") {
    p.axis = -1;
  } else {
    if (auto it = attrs.find("axis"); it == attrs.end() || it->second == "None") {
      r.OptionalInt("axis");
    } else {
      p.axis = static_cast<int>(r.Int("axis"));
    }
    p.keepdims = r.Bool("keepdims", false);
  }
  r.Finish();
  return p;
}

void ArgReduceParam::Rows(const Shape& in, int64_t* outer, int64_t* size, int64_t* inner) const {
  *outer = *inner = 1;
  *size = in.Size();
  if (!axis) return;
  const int a = NormalizeAxis(*axis, in, is_max ? "argmax" : "argmin");
  *size = in[a];
  for (int d = 0; d < a; ++d) *outer *= in[d];
  for (int d = a + 1; d < in.ndim(); ++d) *inner *= in[d];
}

Shape ArgReduceParam::OutShape(const Shape& in) const {
  std::vector<int64_t> dims;
  if (!axis) {
    dims.assign(static_cast<size_t>(keepdims ? in.ndim() : 1), 1);
  } else {
    const int a = NormalizeAxis(*axis, in, is_max ? "argmax" : "argmin");
    for (int d = 0; d < in.ndim(); ++d) {
      if (d != a) {
        dims.push_back(in[d]);
      } else if (keepdims) {
        dims.push_back(1);
      }
    }
    if (dims.empty()) dims.push_back(1);
  }
  return Shape(std::span<const int64_t>(dims));
}

namespace {

class ArgReduce : public Operator {
 public:
  ArgReduce(const std::string& op, const Attrs& attrs) : p_(ArgReduceParam::Parse(op, attrs)) {}

  bool PassesGradient() const override { return false; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    COHORT_CHECK_GT(in[0].Size(), 0) << type() << ": an empty input " << in[0] << " has no "
                                     << (p_.is_max ? "largest" : "smallest") << " element";
    AssignShape(out[0], p_.OutShape(in[0]), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ArgReduceGpu(ctx, p_, in[0], out[0]));
    int64_t outer, size, inner;
    p_.Rows(in[0].shape(), &outer, &size, &inner);
    const float* x = F(in[0]);
    float* y = F(out[0]);
    for (int64_t j = 0; j < outer * inner; ++j) y[j] = ArgReduceAt(x, j, size, inner, p_.is_max);
  }

  // Positions have no gradient (PassesGradient): a written one is zeros.
  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    if (req[0] != GradReq::kWrite) return;  // kAdd adds zero
    COHORT_GPU_DISPATCH(ctx, ZeroGradGpu(ctx, in_grad[0]));
    in_grad[0].Fill(0);
  }

 private:
  ArgReduceParam p_;
};

// one_hot(indices, depth): rows of `depth` with on_value at each index's position.
class OneHot : public Operator {
 public:
  explicit OneHot(const Attrs& attrs) : p_(OneHotParam::Parse(attrs)) {}
  std::vector<std::string> ListArguments() const override { return {"indices"}; }
  bool PassesGradient() const override { return false; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    COHORT_CHECK(in[0].ndim() < Shape::kMaxNdim)
        << "one_hot: indices of " << in[0].ndim() << " dimensions leave no room for depth";
    std::vector<int64_t> dims(in[0].begin(), in[0].end());
    dims.push_back(p_.depth);
    AssignShape(out[0], Shape(std::span<const int64_t>(dims)), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, OneHotGpu(ctx, p_, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    for (int64_t j = 0; j < out[0].size(); ++j) y[j] = OneHotValue(p_, x, j);
  }
  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {}

 private:
  OneHotParam p_;
};

}  // namespace

void RegisterIndexOps(OpRegistry& r) {
  for (const char* name : {"argmax", "argmin", "argmax_channel"}) {
    const std::string op = name;
    r.Register(op, [op](const Attrs& a) { return std::make_unique<ArgReduce>(op, a); });
  }
  r.Register("one_hot", [](const Attrs& a) { return std::make_unique<OneHot>(a); });
}

}  // namespace cohort::op
