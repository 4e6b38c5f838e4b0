// argmax, argmin, argmax_channel, one_hot, pick, batch_take and fill_element_0index on the CPU,
// with index_ops.h's positions.
#include "operator/index_ops.h"

#include "operator/common/exact_math.h"
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
  p.on_value = static_cast<float>(r.Float("on_value"));
  p.off_value = static_cast<float>(r.Float("off_value"));
  r.Enum("dtype");  // other dtypes: not yet
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
    if (auto axis = r.OptionalInt("axis")) p.axis = static_cast<int>(*axis);
    p.keepdims = r.Bool("keepdims");
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

  // Any numeric dtype; positions come out in the input's dtype, as MXNet's.
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ArgReduceGpu(ctx, p_, in[0], out[0]));
    int64_t outer, size, inner;
    p_.Rows(in[0].shape(), &outer, &size, &inner);
    DispatchArithmetic(type(), in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in[0].data<T>();
      T* y = out[0].data<T>();
      for (int64_t j = 0; j < outer * inner; ++j) {
        y[j] = static_cast<T>(ArgReduceAt<T>(x, j, size, inner, p_.is_max));
      }
    });
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

// Positions have no gradient: a written one is zeros.
void ZeroPositionsGrad(const OpContext& ctx, const NDArray& grad) {
  COHORT_GPU_DISPATCH(ctx, ZeroGradGpu(ctx, grad));
  grad.Fill(0);
}

// pick(data, index): one element of each row along `axis` (Note in index_ops.h).
class Pick : public Operator {
 public:
  explicit Pick(const Attrs& attrs) : p_(PickParam::Parse(attrs)) {}
  std::vector<std::string> ListArguments() const override { return {"data", "index"}; }
  bool BackwardNeedsInputs() const override { return true; }  // the index
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    const Shape o = p_.geometry.OutShape(in[0]);
    AssignShape(out[0], o, type(), "output");
    // As MXNet: the index has the data's shape without the axis; with keepdims the output's
    // shape (the axis kept as 1) is taken too, the same positions in the same order.
    if (!(p_.geometry.keepdims && in[1] == o)) {
      ArgReduceParam dropped = p_.geometry;
      dropped.keepdims = false;
      AssignShape(in[1], dropped.OutShape(in[0]), type(), "index");
    }
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    int64_t outer, size, inner;
    p_.geometry.Rows(in[0].shape(), &outer, &size, &inner);
    const float* x = FloatsOf(in[0]);  // either side: the dispatch decides which reads them
    const float* index = FloatsOf(in[1]);
    float* y = FloatsOf(out[0]);
    const int64_t n = outer * inner;
    COHORT_GPU_DISPATCH(ctx, PickForwardGpu(ctx, x, index, n, size, inner, p_.wrap, y));
    for (int64_t j = 0; j < n; ++j) y[j] = x[PickSource(index, j, size, inner, p_.wrap)];
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[1] == GradReq::kWrite) ZeroPositionsGrad(ctx, in_grad[1]);
    if (req[0] == GradReq::kNull) return;
    int64_t outer, size, inner;
    p_.geometry.Rows(in[0].shape(), &outer, &size, &inner);
    const float* dy = FloatsOf(out_grad[0]);
    const float* index = FloatsOf(in[1]);
    const int64_t n = outer * inner;
    COHORT_GPU_DISPATCH(
        ctx, PickBackwardGpu(ctx, dy, index, n, size, inner, p_.wrap, req[0], in_grad[0]));
    float* dx = F(in_grad[0]);
    if (req[0] == GradReq::kWrite) std::fill_n(dx, in_grad[0].size(), 0.0f);
    for (int64_t j = 0; j < n; ++j) dx[PickSource(index, j, size, inner, p_.wrap)] += dy[j];
  }

 private:
  PickParam p_;
};

// fill_element_0index(lhs, mhs, rhs): lhs (n, m) with element (r, rhs[r]) set to mhs[r].
class FillElement : public Operator {
 public:
  explicit FillElement(const Attrs& attrs) { ParamReader("fill_element_0index", attrs).Finish(); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "mhs", "rhs"}; }
  bool BackwardNeedsInputs() const override { return true; }  // the positions
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], in[0], type(), "output");
    AssignShape(in[0], out[0], type(), "lhs");
    if (!ShapeKnown(in[0])) return false;
    COHORT_CHECK_EQ(in[0].ndim(), 2) << "fill_element_0index: lhs must be 2-D, got " << in[0];
    AssignShape(in[1], Shape({in[0][0]}), type(), "mhs");
    AssignShape(in[2], Shape({in[0][0]}), type(), "rhs");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, FillElementForwardGpu(ctx, in[0], in[1], in[2], out[0]));
    const float* a = F(in[0]);
    const float* m = F(in[1]);
    const float* k = F(in[2]);
    float* y = F(out[0]);
    const int64_t rows = in[0].shape()[0], cols = in[0].shape()[1];
    if (a != y) std::copy_n(a, out[0].size(), y);
    for (int64_t r = 0; r < rows; ++r) y[PickSource(k, r, cols, 1, false)] = m[r];
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[2] == GradReq::kWrite) ZeroPositionsGrad(ctx, in_grad[2]);
    COHORT_GPU_DISPATCH(ctx, FillElementBackwardGpu(ctx, out_grad[0], in[2], req[0], in_grad[0],
                                                    req[1], in_grad[1]));
    const float* dy = F(out_grad[0]);
    const float* k = F(in[2]);
    const int64_t rows = out_grad[0].shape()[0], cols = out_grad[0].shape()[1];
    if (req[0] != GradReq::kNull) {
      float* dx = F(in_grad[0]);
      for (int64_t i = 0; i < rows * cols; ++i) {
        const bool filled = PickSource(k, i / cols, cols, 1, false) == i;
        AssignReq(req[0], dx, i, filled ? 0.0f : dy[i]);
      }
    }
    if (req[1] != GradReq::kNull) {
      float* dm = F(in_grad[1]);
      for (int64_t r = 0; r < rows; ++r) {
        AssignReq(req[1], dm, r, dy[PickSource(k, r, cols, 1, false)]);
      }
    }
  }
};

// batch_take(a, indices): one element of each row of `a` (Note in index_ops.h). MXNet
// registers no gradient for it, so binding refuses one through it (Operator::HasGradient).
class BatchTake : public Operator {
 public:
  explicit BatchTake(const Attrs& attrs) { ParamReader("batch_take", attrs).Finish(); }
  std::vector<std::string> ListArguments() const override { return {"a", "indices"}; }
  bool HasGradient() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }
  // The output has the data's dtype; the indices are int32, as MXNet requires them.
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], in[0], type(), "output");
    AssignType(in[0], out[0], type(), "a");
    AssignType(in[1], DType::kInt32, type(), "indices");
    return in[0].has_value();
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    COHORT_CHECK(in[0].ndim() >= 1) << "batch_take: a must have an axis, got shape ()";
    const int64_t m = in[0][in[0].ndim() - 1];
    const int64_t rows = m == 0 ? 0 : in[0].Size() / m;
    if (!ShapeKnown(in[1])) AssignShape(in[1], Shape({rows}), type(), "indices");
    COHORT_CHECK_EQ(in[1].Size(), rows)
        << "batch_take: the indices " << in[1] << " must hold one position for each of the " << rows
        << " rows of a " << in[0] << " (a's size without its last axis)";
    AssignShape(out[0], in[1], type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, BatchTakeGpu(ctx, in[0], in[1], out[0]));
    const int32_t* k = in[1].data<int32_t>();
    const int64_t m = in[0].shape()[in[0].shape().ndim() - 1];
    DispatchArithmetic(type(), in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in[0].data<T>();
      T* y = out[0].data<T>();
      for (int64_t i = 0; i < out[0].size(); ++i) y[i] = x[BatchTakeSource(k, i, m)];
    });
  }

  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {
    COHORT_THROW() << "batch_take has no gradient";  // binding refuses one (HasGradient)
  }
};

}  // namespace

PickParam PickParam::Parse(const Attrs& attrs) {
  ParamReader r("pick", attrs);
  PickParam p;
  if (auto axis = r.OptionalInt("axis")) p.geometry.axis = static_cast<int>(*axis);
  // (None: the flattened array)
  p.geometry.keepdims = r.Bool("keepdims");
  p.wrap = r.Enum("mode") == "wrap";
  r.Finish();
  return p;
}

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const ParamSpec axis{
      "axis", "int or None", "None",
      "The axis along which to perform the reduction. Negative values means indexing from right "
      "to left. ``Requires axis to be set as int, because global reduction is not supported "
      "yet.``"};
  const ParamSpec keepdims{
      "keepdims", "boolean", "0",
      "If this is set to `True`, the reduced axis is left in the result as dimension with size "
      "one."};
  return {
      {"argmax",
       "Returns indices of the maximum values along an axis.",
       {"data"},
       "",
       {axis, keepdims}},
      {"argmax_channel",
       "Returns argmax indices of each channel from the input array.",
       {"data"},
       "",
       {}},
      {"argmin",
       "Returns indices of the minimum values along an axis.",
       {"data"},
       "",
       {axis, keepdims}},
      {"batch_take", "Takes elements from a data batch.", {"a", "indices"}, "", {}},
      {"fill_element_0index",
       "Fill one element of each line(row for python, column for R/Julia) in lhs according to "
       "index indicated by rhs and values indicated by mhs. This function assume rhs uses 0-based "
       "index.",
       {"lhs", "mhs", "rhs"},
       "",
       {}},
      {"one_hot",
       "Returns a one-hot array.",
       {"indices"},
       "",
       {{"depth", "int", kRequired, "Depth of the one hot dimension."},
        {"on_value", "double", "1", "The value assigned to the locations represented by indices."},
        {"off_value", "double", "0",
         "The value assigned to the locations not represented by indices."},
        {"dtype", "{'float32'}", "float32", "DType of the output"}}},
      {"pick",
       "Picks elements from an input array according to the input indices along the given axis.",
       {"data", "index"},
       "",
       {{"axis", "int or None", "-1",
         "int or None. The axis to picking the elements. Negative values means indexing from right "
         "to left. If is `None`, the elements in the index w.r.t the flattened input will be "
         "picked."},
        {"keepdims", "boolean", "0",
         "If true, the axis where we pick the elements is left in the result as dimension with "
         "size one."},
        {"mode", "{'clip', 'wrap'}", "clip",
         "Specify how out-of-bound indices behave. Default is \"clip\". \"clip\" means clip to the "
         "range. So, if all indices mentioned are too large, they are replaced by the index that "
         "addresses the last element along an axis. \"wrap\" means to wrap around."}}},
  };
}

}  // namespace

void RegisterIndexOps(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("pick", [](const Attrs& a) { return std::make_unique<Pick>(a); });
  r.Alias("choose_element_0index", "pick");
  r.Register("batch_take", [](const Attrs& a) { return std::make_unique<BatchTake>(a); });
  r.Register("fill_element_0index",
             [](const Attrs& a) { return std::make_unique<FillElement>(a); });
  for (const char* name : {"argmax", "argmin", "argmax_channel"}) {
    const std::string op = name;
    r.Register(op, [op](const Attrs& a) { return std::make_unique<ArgReduce>(op, a); });
  }
  r.Register("one_hot", [](const Attrs& a) { return std::make_unique<OneHot>(a); });
}

}  // namespace cohort::op
