// Flatten, Reshape (with MXNet's special values) and Concat on the CPU.
#include <cstring>

#include "operator/common/exact_math.h"
#include "operator/common/gpu_resources.h"
#include "operator/common/kernel_util.h"
#include "operator/shape_ops.h"

namespace cohort::op {

// shape_ops.cu (Note [GPU kernels]).
void RelabelForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out);
void RelabelBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& in_grad);
void ConcatForwardGpu(const OpContext& ctx, const std::vector<NDArray>& in, const NDArray& out,
                      int dim);
void ConcatBackwardGpu(const OpContext& ctx, const NDArray& out_grad,
                       const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                       int dim);

ConcatParam ConcatParam::Parse(const Attrs& attrs) {
  ParamReader r("Concat", attrs);
  ConcatParam p;
  p.num_args = static_cast<int>(r.Int("num_args"));
  p.dim = static_cast<int>(r.Int("dim"));
  r.Finish();
  COHORT_CHECK_GE(p.num_args, 1) << "Concat: num_args";
  return p;
}

namespace {

// An output that holds the input's elements unchanged under another shape: forward and backward
// copy only when the planner did not place input and output (or their gradients) in one buffer.
class Relabel : public Operator {
 public:
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool IsIdentity() const override { return true; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  // Forward and a written gradient move bytes, of any dtype; an added one adds in it.
  bool TakesDType(DType) const override { return true; }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, RelabelForwardGpu(ctx, in[0], out[0]));
    if (out[0].raw_data() != in[0].raw_data()) in[0].Reshape(out[0].shape()).CopyTo(out[0]);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(ctx, RelabelBackwardGpu(ctx, req[0], out_grad[0], in_grad[0]));
    const int64_t n = in_grad[0].size();
    if (req[0] == GradReq::kWrite) {  // bytes, of any dtype
      if (in_grad[0].raw_data() != out_grad[0].raw_data()) {
        std::memcpy(in_grad[0].raw_data(), out_grad[0].raw_data(), in_grad[0].nbytes());
      }
      return;
    }
    DispatchArithmetic(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dy = out_grad[0].data<T>();
      T* dx = in_grad[0].data<T>();
      for (int64_t i = 0; i < n; ++i) AddInto(&dx[i], dy[i]);
    });
  }
};

// Note [Cross-device copies]
// MXNet's _CrossDeviceCopy, which binding inserts where an entry made on one context is read on
// another (group2ctx, executor/place_devices.h): the output is the input on the reader's
// context. The executor runs the node on the input's context (its backward writes there).
// Copies between host and GPU or between GPUs are device::Copy's, ordered with the executors'
// blocking streams through the legacy stream, so no event is needed. An added gradient first
// crosses into a temporary on the input's side (rare: only an entry read on several contexts
// gets a second contribution); on a GPU the add is waited for before the temporary goes back to
// the caching pool (Note [Caching device allocator]).
class CrossDeviceCopy : public Operator {
 public:
  explicit CrossDeviceCopy(const Attrs& attrs) { ParamReader("_CrossDeviceCopy", attrs).Finish(); }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType) const override { return true; }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }

  void Forward(const OpContext&, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    in[0].CopyTo(out[0]);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    if (req[0] == GradReq::kWrite) {
      out_grad[0].CopyTo(in_grad[0]);
      return;
    }
    const NDArray& dx = in_grad[0];
    const NDArray dy = out_grad[0].ctx() == dx.ctx() ? out_grad[0] : out_grad[0].CopyTo(dx.ctx());
    if (dx.ctx().is_gpu()) {
      COHORT_GPU_DISPATCH(ctx, {
        RelabelBackwardGpu(ctx, GradReq::kAdd, dy, dx);
        ctx.gpu->Synchronize();
      });
    }
    DispatchArithmetic(type(), dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* from = dy.data<T>();
      T* into = dx.data<T>();
      for (int64_t i = 0; i < dx.size(); ++i) AddInto(&into[i], from[i]);
    });
  }
};

class Flatten : public Relabel {
 public:
  explicit Flatten(const Attrs& attrs) { ParamReader("Flatten", attrs).Finish(); }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], Shape({in[0][0], in[0].Size() / in[0][0]}), "Flatten", "output");
    return true;
  }
};

// expand_dims: a new axis of extent 1 at `axis` (counted from the end when negative).
class ExpandDims : public Relabel {
 public:
  explicit ExpandDims(const Attrs& attrs) {
    ParamReader r("expand_dims", attrs);
    axis_ = static_cast<int>(r.Int("axis"));
    r.Finish();
  }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    const int ndim = in[0].ndim();
    COHORT_CHECK(axis_ >= -ndim - 1 && axis_ <= ndim && ndim < Shape::kMaxNdim)
        << "expand_dims: axis " << axis_ << " is not in [" << -ndim - 1 << ", " << ndim
        << "] for an input of shape " << in[0];
    const int at = axis_ < 0 ? axis_ + ndim + 1 : axis_;
    std::vector<int64_t> dims(in[0].begin(), in[0].end());
    dims.insert(dims.begin() + at, 1);
    AssignShape(out[0], Shape(std::span<const int64_t>(dims)), "expand_dims", "output");
    return true;
  }

 private:
  int axis_ = 0;
};

// squeeze: removes the given axes (each of extent 1), or every axis of extent 1; an array of
// ones alone becomes shape (1,), as MXNet's.
class Squeeze : public Relabel {
 public:
  explicit Squeeze(const Attrs& attrs) {
    ParamReader r("squeeze", attrs);
    axes_ = r.OptionalTuple("axis").value_or(Shape());
    r.Finish();
  }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    std::vector<bool> drop(static_cast<size_t>(in[0].ndim()), axes_.ndim() == 0);
    for (int64_t a : axes_) {
      const int axis = NormalizeAxis(static_cast<int>(a), in[0], "squeeze");
      COHORT_CHECK_EQ(in[0][axis], 1)
          << "squeeze: axis " << a << " of shape " << in[0] << " is not of extent 1";
      drop[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < in[0].ndim(); ++d) {
      if (!(drop[static_cast<size_t>(d)] && in[0][d] == 1)) dims.push_back(in[0][d]);
    }
    if (dims.empty()) dims.push_back(1);
    AssignShape(out[0], Shape(std::span<const int64_t>(dims)), "squeeze", "output");
    return true;
  }

 private:
  Shape axes_;  // none: every axis of extent 1
};

// MXNet's Reshape: 0 copies a dimension, -1 infers one, -2 copies the rest, -3 merges two,
// -4 splits one into the next two values (one of which may be -1).
class Reshape : public Relabel {
 public:
  explicit Reshape(const Attrs& attrs) {
    ParamReader r("Reshape", attrs);
    target_ = r.Tuple("shape");
    reverse_ = r.Bool("reverse");
    target_shape_legacy_ = r.Tuple("target_shape");
    COHORT_CHECK(!r.Bool("keep_highest")) << "Reshape: keep_highest=True is not supported";
    r.Finish();
    if (target_.ndim() == 0) target_ = target_shape_legacy_;
    COHORT_CHECK_GT(target_.ndim(), 0) << "Reshape: attribute 'shape' is required";
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], reverse_ ? Reversed(Resolve(Reversed(in[0]), Reversed(target_)))
                                 : Resolve(in[0], target_),
                "Reshape", "output");
    return true;
  }

 private:
  // reverse=True reads the special values right to left, as MXNet does: source and target are
  // reversed, resolved, and the result reversed back.
  static Shape Reversed(const Shape& s) {
    Shape r = s;
    for (int i = 0; i < s.ndim(); ++i) r[i] = s[s.ndim() - 1 - i];
    return r;
  }

  static Shape Resolve(const Shape& src, const Shape& target) {
    std::vector<int64_t> dims;
    int infer = -1;
    int s = 0;  // position in src
    for (int i = 0; i < target.ndim(); ++i) {
      const int64_t t = target[i];
      if (t > 0) {
        dims.push_back(t);
        ++s;
      } else if (t == 0) {
        COHORT_CHECK_LT(s, src.ndim()) << "Reshape " << target << " of " << src;
        dims.push_back(src[s++]);
      } else if (t == -1) {
        COHORT_CHECK_LT(infer, 0) << "Reshape " << target << ": more than one -1";
        infer = static_cast<int>(dims.size());
        dims.push_back(1);
        ++s;
      } else if (t == -2) {
        while (s < src.ndim()) dims.push_back(src[s++]);
      } else if (t == -3) {
        COHORT_CHECK_LT(s + 1, src.ndim()) << "Reshape " << target << " of " << src;
        dims.push_back(src[s] * src[s + 1]);
        s += 2;
      } else if (t == -4) {
        COHORT_CHECK(i + 2 < target.ndim() && s < src.ndim())
            << "Reshape " << target << ": -4 needs two values after it";
        int64_t a = target[i + 1], b = target[i + 2];
        if (a == -1) a = src[s] / b;
        if (b == -1) b = src[s] / a;
        COHORT_CHECK_EQ(a * b, src[s]) << "Reshape " << target << " of " << src;
        dims.push_back(a);
        dims.push_back(b);
        ++s;
        i += 2;
      } else {
        COHORT_THROW() << "Reshape: invalid value " << t << " in shape " << target;
      }
    }
    if (infer >= 0) {
      int64_t known = 1;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (static_cast<int>(i) != infer) known *= dims[i];
      }
      COHORT_CHECK(known > 0 && src.Size() % known == 0)
          << "Reshape: cannot reshape " << src << " to " << target;
      dims[infer] = src.Size() / known;
    }
    Shape out{std::span<const int64_t>(dims)};
    COHORT_CHECK_EQ(out.Size(), src.Size())
        << "Reshape: " << src << " to " << target << " gives " << out;
    return out;
  }

  Shape target_, target_shape_legacy_;
  bool reverse_;
};

// reshape_like(lhs, rhs): lhs under rhs's shape, or lhs's axes [lhs_begin, lhs_end) replaced by
// rhs's [rhs_begin, rhs_end) (MXNet 1.9's ranges; None: the start or the end). rhs only gives a
// shape: its gradient is zero.
class ReshapeLike : public Relabel {
 public:
  explicit ReshapeLike(const Attrs& attrs) {
    ParamReader r("reshape_like", attrs);
    lhs_begin_ = r.OptionalInt("lhs_begin");
    lhs_end_ = r.OptionalInt("lhs_end");
    rhs_begin_ = r.OptionalInt("rhs_begin");
    rhs_end_ = r.OptionalInt("rhs_end");
    r.Finish();
  }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0]) || !ShapeKnown(in[1])) return false;
    const auto [lb, le] = Range(in[0], lhs_begin_, lhs_end_, "lhs");
    const auto [rb, re] = Range(in[1], rhs_begin_, rhs_end_, "rhs");
    std::vector<int64_t> dims(in[0].begin(), in[0].begin() + lb);
    dims.insert(dims.end(), in[1].begin() + rb, in[1].begin() + re);
    dims.insert(dims.end(), in[0].begin() + le, in[0].end());
    const Shape shape{std::span<const int64_t>(dims)};
    COHORT_CHECK(shape.ndim() > 0 && shape.Size() == in[0].Size())
        << "reshape_like: lhs " << in[0] << " cannot take the shape " << shape;
    AssignShape(out[0], shape, type(), "output");
    return true;
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>& aux) const override {
    if (req[1] == GradReq::kWrite) {
      COHORT_GPU_DISPATCH(ctx, {
        ZeroGpu(ctx, in_grad[1]);
        Relabel::Backward(ctx, out_grad, in, out, req, in_grad, aux);
      });
      in_grad[1].Fill(0);
    }
    Relabel::Backward(ctx, out_grad, in, out, req, in_grad, aux);
  }

 private:
  // [begin, end) of `s`'s axes (negative: from the end; None: the start, the end).
  static std::pair<int, int> Range(const Shape& s, std::optional<int64_t> begin,
                                   std::optional<int64_t> end, const char* side) {
    const int n = s.ndim();
    const int b = begin ? static_cast<int>(*begin < 0 ? *begin + n : *begin) : 0;
    const int e = end ? static_cast<int>(*end < 0 ? *end + n : *end) : n;
    COHORT_CHECK(0 <= b && b <= e && e <= n)
        << "reshape_like: " << side << " axes [" << b << ", " << e << ") of " << s;
    return {b, e};
  }

  std::optional<int64_t> lhs_begin_, lhs_end_, rhs_begin_, rhs_end_;
};

// Joins its inputs along `dim`.
class Concat : public Operator {
 public:
  explicit Concat(const Attrs& attrs) : p_(ConcatParam::Parse(attrs)) {}
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names;
    for (int i = 0; i < p_.num_args; ++i) names.push_back("arg" + std::to_string(i));
    return names;
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    for (const Shape& s : in) {
      if (!ShapeKnown(s)) return false;
    }
    Shape o = in[0];
    COHORT_CHECK(p_.dim >= -o.ndim() && p_.dim < o.ndim())
        << "Concat: dim " << p_.dim << " is outside the axes of " << o;
    const int dim = Dim(o);
    o[dim] = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      Shape expect = in[i];
      expect[dim] = in[0][dim];
      COHORT_CHECK(expect == in[0])
          << "Concat: input " << i << " has shape " << in[i] << ", which differs from input 0 "
          << in[0] << " outside dim " << dim;
      o[dim] += in[i][dim];
    }
    AssignShape(out[0], o, "Concat", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ConcatForwardGpu(ctx, in, out[0], Dim(out[0].shape())));
    Copy(in, out[0], true, {});
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(
        ctx, ConcatBackwardGpu(ctx, out_grad[0], req, in_grad, Dim(out_grad[0].shape())));
    Copy(in_grad, out_grad[0], false, req);
  }

 private:
  // dim, counted from the end when negative (MXNet's dim=-1).
  int Dim(const Shape& s) const { return p_.dim < 0 ? p_.dim + s.ndim() : p_.dim; }
  // Moves blocks between the parts and the joined array (to_joined: parts -> joined).
  void Copy(const std::vector<NDArray>& parts, const NDArray& joined, bool to_joined,
            const std::vector<GradReq>& req) const {
    const int dim = Dim(joined.shape());
    const ConcatRows j = ConcatRowsOf(joined.shape(), dim);
    float* all = F(joined);
    int64_t offset = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t width = parts[p].shape()[dim] * j.inner;
      if (to_joined) {
        const float* part = F(parts[p]);
        for (int64_t o = 0; o < j.outer; ++o) {
          std::memcpy(all + o * j.row + offset, part + o * width, width * sizeof(float));
        }
      } else if (req[p] != GradReq::kNull) {
        float* part = F(parts[p]);
        for (int64_t k = 0; k < j.outer * width; ++k) {
          AssignReq(req[p], part, k, all[ConcatJoinedIndex(k, width, j.row, offset)]);
        }
      }
      offset += width;
    }
  }

  ConcatParam p_;
};

// shape_array and size_array: the input's shape or size as an int64 array (its data unread).
class ShapeArray : public Operator {
 public:
  ShapeArray(const std::string& name, const Attrs& attrs) : size_only_(name == "size_array") {
    ParamReader(name, attrs).Finish();
  }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], Shape({size_only_ ? 1 : in[0].ndim()}), type(), "output");
    return true;
  }
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], DType::kInt64, type(), "output");
    return in[0].has_value();
  }
  bool TakesDType(DType) const override { return true; }
  bool PassesGradient() const override { return false; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    ShapeValues s;
    s.ndim = in[0].shape().ndim();
    s.size_only = size_only_;
    for (int d = 0; d < s.ndim; ++d) s.dims[d] = in[0].shape()[d];
    COHORT_GPU_DISPATCH(ctx, ShapeArrayGpu(ctx, s, out[0]));
    int64_t* y = out[0].data<int64_t>();
    for (int64_t k = 0; k < out[0].size(); ++k) y[k] = ShapeValue(s, k);
  }
  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {}

 private:
  bool size_only_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Concat",
       "Joins input arrays along a given axis.",
       {"data"},
       "num_args",
       {{"num_args", "int", kRequired, "Number of inputs to be concated."},
        {"dim", "int", "1", "the dimension to be concated."}}},
      {"_CrossDeviceCopy",
       "Special op to copy data cross device (inserted by binding with group2ctx).",
       {"data"},
       "",
       {}},
      {"Flatten",
       "Flattens the input array into a 2-D array by collapsing the higher dimensions: (d1, d2, "
       "..., dk) becomes (d1, d2*...*dk).",
       {"data"},
       "",
       {}},
      {"Reshape",
       "Reshapes the input array. Special values in `shape`: 0 copies this dimension from the "
       "input, -1 infers it from the remaining dimensions, -2 copies all or the remainder of the "
       "input dimensions, -3 uses the product of two consecutive dimensions, -4 splits one "
       "dimension into the two that follow it.",
       {"data"},
       "",
       {{"shape", "Shape(tuple)", "[]", "The target shape"},
        {"reverse", "boolean", "0",
         "If true then the special values are inferred from right to left"},
        {"target_shape", "Shape(tuple)", "[]",
         "(Deprecated! Use ``shape`` instead.) Target new shape. One and only one dim can be 0, in "
         "which case it will be inferred from the rest of dims"},
        {"keep_highest", "boolean", "0",
         "(Deprecated! Use ``shape`` instead.) Whether keep the highest dim unchanged.If set to "
         "true, then the first dim in target_shape is ignored,and always fixed as input"}}},
      {"expand_dims",
       "Inserts a new axis of size 1 into the array shape For example, given ``x`` with shape "
       "``(2,3,4)``, then ``expand_dims(x, axis=1)`` will return a new array with shape "
       "``(2,1,3,4)``.",
       {"data"},
       "",
       {{"axis", "int", kRequired,
         "Position where new axis is to be inserted. Suppose that the input `NDArray`'s dimension "
         "is `ndim`, the range of the inserted axis is `[-ndim, ndim]`"}}},
      {"reshape_like",
       "Reshape some or all dimensions of `lhs` to have the same shape as some or all dimensions "
       "of `rhs`.",
       {"lhs", "rhs"},
       "",
       {{"lhs_begin", "int or None", "None",
         "Defaults to 0. The beginning index along which the lhs dimensions are to be reshaped. "
         "Supports negative indices."},
        {"lhs_end", "int or None", "None",
         "Defaults to None. The ending index along which the lhs dimensions are to be used for "
         "reshaping. Supports negative indices."},
        {"rhs_begin", "int or None", "None",
         "Defaults to 0. The beginning index along which the rhs dimensions are to be used for "
         "reshaping. Supports negative indices."},
        {"rhs_end", "int or None", "None",
         "Defaults to None. The ending index along which the rhs dimensions are to be used for "
         "reshaping. Supports negative indices."}}},
      {"shape_array", "Returns a 1D int64 array containing the shape of data.", {"data"}, "", {}},
      {"size_array", "Returns a 1D int64 array containing the size of data.", {"data"}, "", {}},
      {"squeeze",
       "Removes single-dimensional entries from the shape of an array, as numpy.squeeze (all of "
       "them unless `axis` selects some).",
       {"data"},
       "",
       {{"axis", "Shape or None", "None",
         "Selects a subset of the single-dimensional entries in the shape. If an axis is selected "
         "with shape entry greater than one, an error is raised."}}},
  };
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Flatten", [](const Attrs& a) { return std::make_unique<Flatten>(a); });
  r.Alias("flatten", "Flatten");
  r.Register("Reshape", [](const Attrs& a) { return std::make_unique<Reshape>(a); });
  r.Alias("reshape", "Reshape");
  r.Register("expand_dims", [](const Attrs& a) { return std::make_unique<ExpandDims>(a); });
  r.Register("squeeze", [](const Attrs& a) { return std::make_unique<Squeeze>(a); });
  r.Register("Concat", [](const Attrs& a) { return std::make_unique<Concat>(a); });
  r.Register("_CrossDeviceCopy",
             [](const Attrs& a) { return std::make_unique<CrossDeviceCopy>(a); });
  r.Register("reshape_like", [](const Attrs& a) { return std::make_unique<ReshapeLike>(a); });
  for (const char* name : {"shape_array", "size_array"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<ShapeArray>(n, a); });
  }
  r.Alias("concat", "Concat");
}

}  // namespace cohort::op
