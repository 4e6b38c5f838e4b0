// slice_axis and SliceChannel (split) on the CPU, with slice.h's index map: a window is copied
// (forward) or written back (backward) one contiguous run of `size · inner` elements at a time,
// of any type (they move elements; the half types add gradients in float and round once).
// slice, slice_like and flip: an element at a time through the strided window.
#include <charconv>
#include <cstring>

#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"
#include "operator/slice.h"

namespace cohort::op {

// slice.cu (Note [GPU kernels]): out = the window of in (forward), or the window of in_grad
// (=|+=) out_grad (backward). in_grad is zeroed first by the caller for kWrite.
void SliceForwardGpu(const OpContext& ctx, const SliceWindow& w, const NDArray& in,
                     const NDArray& out);
void SliceBackwardGpu(const OpContext& ctx, const SliceWindow& w, GradReq req,
                      const NDArray& out_grad, const NDArray& in_grad, bool zero_first);

SliceAxisParam SliceAxisParam::Parse(const Attrs& attrs) {
  ParamReader r("slice_axis", attrs);
  SliceAxisParam p;
  p.axis = static_cast<int>(r.Int("axis"));
  p.begin = r.Int("begin");
  p.end = r.OptionalInt("end");
  r.Finish();
  return p;
}

SliceChannelParam SliceChannelParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  SliceChannelParam p;
  p.num_outputs = static_cast<int>(r.Int("num_outputs"));
  p.axis = static_cast<int>(r.Int("axis"));
  p.squeeze_axis = r.Bool("squeeze_axis");
  r.Finish();
  COHORT_CHECK_GT(p.num_outputs, 0) << op << ": num_outputs must be positive";
  return p;
}

namespace {

// "(None, 2, -1)", "[1,2]", "3" or "()": integers and Nones.
std::vector<std::optional<int64_t>> OptionalInts(const std::string& op, const std::string& key,
                                                 const std::string& text) {
  std::string body;
  for (char c : text) {
    if (c != '(' && c != ')' && c != '[' && c != ']' && c != ' ') body += c;
  }
  std::vector<std::optional<int64_t>> out;
  size_t start = 0;
  while (start < body.size()) {
    size_t comma = body.find(',', start);
    if (comma == std::string::npos) comma = body.size();
    const std::string item = body.substr(start, comma - start);
    if (item == "None") {
      out.emplace_back();
    } else if (!item.empty()) {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      COHORT_CHECK(ec == std::errc() && end == item.data() + item.size())
          << op << ": " << key << " '" << text << "' is not a tuple of integers and None";
      out.push_back(v);
    }
    start = comma + 1;
  }
  return out;
}

std::optional<int64_t> At(const std::vector<std::optional<int64_t>>& v, int d) {
  return d < static_cast<int>(v.size()) ? v[d] : std::nullopt;
}

}  // namespace

StridedParam StridedParam::Parse(const std::string& op, const Attrs& attrs) {
  // The tuples hold Nones, which ParamReader's Tuple does not take: they are parsed here.
  ParamReader r(op, attrs);
  StridedParam p;
  if (op == "slice") {
    p.kind = StridedKind::kSlice;
    p.begin = OptionalInts(op, "begin", r.String("begin"));
    p.end = OptionalInts(op, "end", r.String("end"));
    p.step = OptionalInts(op, "step", r.String("step"));
    COHORT_CHECK(p.begin.size() == p.end.size() &&
                 (p.step.empty() || p.step.size() == p.begin.size()))
        << "slice: begin, end and step must have as many entries";
  } else {
    p.kind = op == "slice_like" ? StridedKind::kSliceLike : StridedKind::kFlip;
    for (const auto& a : OptionalInts(op, "axis", r.String(op == "slice_like" ? "axes" : "axis"))) {
      COHORT_CHECK(a.has_value()) << op << ": an axis is None";
      p.axes.push_back(static_cast<int>(*a));
    }
  }
  r.Finish();
  return p;
}

StridedWindow StridedParam::Window(const Shape& in, const Shape& like) const {
  const char* op = kind == StridedKind::kSlice       ? "slice"
                   : kind == StridedKind::kSliceLike ? "slice_like"
                                                     : "flip";
  StridedWindow w;
  w.ndim = in.ndim();
  int64_t stride = 1;
  std::vector<int64_t> strides(in.ndim());
  for (int d = in.ndim() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= in[d];
  }
  std::vector<bool> listed(in.ndim(), axes.empty() && kind == StridedKind::kSliceLike);
  for (int a : axes) listed[NormalizeAxis(a, in, op)] = true;
  if (kind == StridedKind::kSlice) {
    COHORT_CHECK(static_cast<int>(begin.size()) <= in.ndim())
        << "slice: " << begin.size() << " axes given for an input of shape " << in;
  }
  if (kind == StridedKind::kSliceLike && axes.empty()) {
    COHORT_CHECK(like.ndim() == in.ndim())
        << "slice_like: shape_like " << like << " and data " << in << " differ in dimensions";
  }
  for (int d = 0; d < in.ndim(); ++d) {
    const int64_t dim = in[d];
    int64_t first = 0, count = dim, step = 1;
    if (kind == StridedKind::kSlice) {
      step = At(this->step, d).value_or(1);
      COHORT_CHECK(step != 0) << "slice: step 0 on axis " << d;
      auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; };
      if (step > 0) {
        int64_t b = At(begin, d).value_or(0), e = At(end, d).value_or(dim);
        b = clamp(b < 0 ? b + dim : b, 0, dim);
        e = clamp(e < 0 ? e + dim : e, 0, dim);
        first = b;
        count = e > b ? (e - b + step - 1) / step : 0;
      } else {
        int64_t b = At(begin, d).value_or(dim - 1);
        b = clamp(b < 0 ? b + dim : b, -1, dim - 1);
        int64_t e = -1;
        if (auto given = At(end, d)) e = clamp(*given < 0 ? *given + dim : *given, -1, dim - 1);
        first = b;
        count = b > e ? (b - e - step - 1) / -step : 0;
      }
    } else if (kind == StridedKind::kSliceLike && listed[d]) {
      COHORT_CHECK(d < like.ndim() && like[d] <= dim)
          << "slice_like: axis " << d << " of " << in << " cannot take the extent of " << like;
      count = like[d];
    } else if (kind == StridedKind::kFlip && listed[d]) {
      first = dim - 1;
      step = -1;
    }
    // An extent of 0 means "unknown" to MXNet 1.x shapes (and Cohort's): an empty window is
    // refused rather than made.
    COHORT_CHECK(count > 0) << op << ": the window of axis " << d << " of " << in << " is empty";
    w.out_dim[d] = count;
    w.step[d] = step * strides[d];
    w.offset += first * strides[d];
  }
  return w;
}

Shape StridedParam::OutShape(const StridedWindow& w) {
  return Shape(std::span<const int64_t>(w.out_dim, static_cast<size_t>(w.ndim)));
}

namespace {

void CopyWindow(const SliceWindow& w, int64_t outer, const NDArray& in, const NDArray& out) {
  const int64_t run = w.size * w.inner;
  const size_t bytes = DTypeSize(in.dtype());
  const char* x = static_cast<const char*>(in.raw_data());
  char* y = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(y + o * run * bytes, x + SliceSource(w, o * run) * bytes, run * bytes);
  }
}

void WriteBackWindow(const SliceWindow& w, int64_t outer, GradReq req, const NDArray& out_grad,
                     const NDArray& in_grad) {
  DispatchDType(in_grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const int64_t run = w.size * w.inner;
    const T* dy = out_grad.data<T>();
    T* dx = in_grad.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      T* d = dx + SliceSource(w, o * run);
      const T* g = dy + o * run;
      if (req == GradReq::kAdd) {
        for (int64_t k = 0; k < run; ++k) {
          d[k] = ConvertValue<T>(ConvertValue<C>(d[k]) + ConvertValue<C>(g[k]));
        }
      } else {
        std::memcpy(d, g, run * sizeof(T));
      }
    }
  });
}

class SliceAxis : public Operator {
 public:
  explicit SliceAxis(const Attrs& attrs) : p_(SliceAxisParam::Parse(attrs)) {}

  bool TakesDType(DType) const override { return true; }  // it moves elements, of any type
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    const int axis = NormalizeAxis(p_.axis, in[0], "slice_axis");
    Shape shape = in[0];
    shape[axis] = Window(in[0]).size;
    AssignShape(out[0], shape, "slice_axis", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const SliceWindow w = Window(in[0].shape());
    COHORT_GPU_DISPATCH(ctx, SliceForwardGpu(ctx, w, in[0], out[0]));
    CopyWindow(w, Outer(in[0].shape()), in[0], out[0]);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const SliceWindow w = Window(in_grad[0].shape());
    const bool zero = req[0] == GradReq::kWrite;
    COHORT_GPU_DISPATCH(ctx, SliceBackwardGpu(ctx, w, req[0], out_grad[0], in_grad[0], zero));
    if (zero) in_grad[0].Fill(0);
    WriteBackWindow(w, Outer(in_grad[0].shape()), req[0], out_grad[0], in_grad[0]);
  }

 private:
  SliceWindow Window(const Shape& s) const {
    const int axis = NormalizeAxis(p_.axis, s, "slice_axis");
    const int64_t extent = s[axis];
    int64_t begin = p_.begin < 0 ? p_.begin + extent : p_.begin;
    int64_t end = p_.end ? (*p_.end < 0 ? *p_.end + extent : *p_.end) : extent;
    COHORT_CHECK(begin >= 0 && begin < extent && end > begin && end <= extent)
        << "slice_axis: [" << p_.begin << ", " << (p_.end ? std::to_string(*p_.end) : "None")
        << ") is not a non-empty range of axis " << p_.axis << " of " << s;
    return {extent, begin, end - begin, SplitAt(s, axis).inner};
  }
  int64_t Outer(const Shape& s) const {
    return SplitAt(s, NormalizeAxis(p_.axis, s, "slice_axis")).outer;
  }

  SliceAxisParam p_;
};

// SliceChannel / split: num_outputs equal windows of an axis.
class SliceChannel : public Operator {
 public:
  SliceChannel(const std::string& name, const Attrs& attrs)
      : p_(SliceChannelParam::Parse(name, attrs)) {}

  bool TakesDType(DType) const override { return true; }  // it moves elements, of any type
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names;
    for (int k = 0; k < p_.num_outputs; ++k) names.push_back("output" + std::to_string(k));
    return names;
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    const int axis = NormalizeAxis(p_.axis, in[0], type());
    COHORT_CHECK(in[0][axis] % p_.num_outputs == 0)
        << type() << ": axis " << p_.axis << " of " << in[0] << " does not split into "
        << p_.num_outputs << " equal parts";
    const int64_t part = in[0][axis] / p_.num_outputs;
    std::vector<int64_t> dims;
    for (int d = 0; d < in[0].ndim(); ++d) {
      if (d != axis) {
        dims.push_back(in[0][d]);
      } else if (!p_.squeeze_axis) {
        dims.push_back(part);
      } else {
        COHORT_CHECK_EQ(part, 1) << type() << ": squeeze_axis needs parts of size 1, got " << part
                                 << " from " << in[0];
      }
    }
    for (Shape& o : out) AssignShape(o, Shape(std::span<const int64_t>(dims)), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, for (int k = 0; k < p_.num_outputs; ++k)
                                 SliceForwardGpu(ctx, Window(in[0].shape(), k), in[0], out[k]));
    for (int k = 0; k < p_.num_outputs; ++k) {
      CopyWindow(Window(in[0].shape(), k), Outer(in[0].shape()), in[0], out[k]);
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    // The windows tile the axis, so together they write every element: no zeroing needed.
    const Shape& s = in_grad[0].shape();
    COHORT_GPU_DISPATCH(ctx, for (int k = 0; k < p_.num_outputs; ++k) SliceBackwardGpu(
                                 ctx, Window(s, k), req[0], out_grad[k], in_grad[0], false));
    for (int k = 0; k < p_.num_outputs; ++k) {
      WriteBackWindow(Window(s, k), Outer(s), req[0], out_grad[k], in_grad[0]);
    }
  }

 private:
  SliceWindow Window(const Shape& s, int k) const {
    const int axis = NormalizeAxis(p_.axis, s, type());
    const int64_t part = s[axis] / p_.num_outputs;
    return {s[axis], k * part, part, SplitAt(s, axis).inner};
  }
  int64_t Outer(const Shape& s) const {
    return SplitAt(s, NormalizeAxis(p_.axis, s, type())).outer;
  }

  SliceChannelParam p_;
};

// slice (crop), slice_like and flip (reverse): any window of strides.
class Strided : public Operator {
 public:
  Strided(const std::string& name, const Attrs& attrs) : p_(StridedParam::Parse(name, attrs)) {}

  std::vector<std::string> ListArguments() const override {
    if (p_.kind == StridedKind::kSliceLike) return {"data", "shape_like"};
    return {"data"};
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const bool like = p_.kind == StridedKind::kSliceLike;
    if (!ShapeKnown(in[0]) || (like && !ShapeKnown(in[1]))) return false;
    AssignShape(out[0], StridedParam::OutShape(p_.Window(in[0], like ? in[1] : Shape())), type(),
                "output");
    return true;
  }

  // Copies take every numeric dtype; gradients are float32.
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const StridedWindow w = WindowOf(in);
    COHORT_GPU_DISPATCH(ctx, StridedForwardGpu(ctx, w, in[0], out[0]));
    DispatchArithmetic(type(), out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in[0].data<T>();
      T* y = out[0].data<T>();
      ParallelChunks(
          out[0].size(), ChunksFor(ctx, out[0].size() / (1 << 14)),
          [&](int64_t, int64_t first, int64_t last) {
            for (int64_t i = first; i < last; ++i) y[i] = x[StridedSource(w, i)];
          },
          ctx.arena);
    });
  }

  // Every output element has its own input element, so the scatter has no conflicts.
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const StridedWindow w = WindowOf(in);
    const bool zero_like = req.size() > 1 && req[1] == GradReq::kWrite;
    COHORT_GPU_DISPATCH(ctx, StridedBackwardGpu(ctx, w, req[0], out_grad[0], in_grad[0],
                                                zero_like ? &in_grad[1] : nullptr));
    if (zero_like) in_grad[1].Fill(0);
    if (req[0] == GradReq::kNull) return;
    if (req[0] == GradReq::kWrite) in_grad[0].Fill(0);
    // Every numeric dtype, as the forward copies it (integer arrays' gradients are MXNet's too).
    DispatchArithmetic(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dy = out_grad[0].data<T>();
      T* dx = in_grad[0].data<T>();
      for (int64_t i = 0; i < out_grad[0].size(); ++i) AddInto(&dx[StridedSource(w, i)], dy[i]);
    });
  }

 private:
  StridedWindow WindowOf(const std::vector<NDArray>& in) const {
    return p_.Window(in[0].shape(), p_.kind == StridedKind::kSliceLike ? in[1].shape() : Shape());
  }

  StridedParam p_;
};

// _slice_assign (lhs, rhs) and _slice_assign_scalar (lhs): lhs with a slice window replaced
// (MXNet's x[begin:end:step] = rhs as an operator).
class SliceAssign : public Operator {
 public:
  SliceAssign(bool scalar, const Attrs& attrs) : scalar_form_(scalar) {
    Attrs window = attrs;
    if (scalar) {
      ParamReader r("_slice_assign_scalar", attrs);
      value_ = r.Float("scalar");
      window.erase("scalar");
    }
    p_ = StridedParam::Parse("slice", window);
  }
  std::vector<std::string> ListArguments() const override {
    if (scalar_form_) return {"lhs"};
    return {"lhs", "rhs"};
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], in[0], type(), "output");
    AssignShape(in[0], out[0], type(), "lhs");
    if (!ShapeKnown(in[0])) return false;
    if (!scalar_form_) {
      AssignShape(in[1], StridedParam::OutShape(p_.Window(in[0], Shape())), type(), "rhs");
    }
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const StridedWindow w = p_.Window(in[0].shape(), Shape());
    COHORT_GPU_DISPATCH(
        ctx, SliceAssignForwardGpu(ctx, w, in[0], scalar_form_ ? nullptr : &in[1], value_, out[0]));
    DispatchArithmetic(type(), out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* a = in[0].data<T>();
      T* y = out[0].data<T>();
      if (a != y) std::copy_n(a, out[0].size(), y);
      const int64_t n = StridedWindowSize(w);
      if (scalar_form_) {
        const T v = static_cast<T>(value_);
        for (int64_t i = 0; i < n; ++i) y[StridedSource(w, i)] = v;
      } else {
        const T* b = in[1].data<T>();
        for (int64_t i = 0; i < n; ++i) y[StridedSource(w, i)] = b[i];
      }
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const StridedWindow w = p_.Window(out_grad[0].shape(), Shape());
    const GradReq rhs_req = scalar_form_ ? GradReq::kNull : req[1];
    COHORT_GPU_DISPATCH(ctx, SliceAssignBackwardGpu(ctx, w, out_grad[0], req[0], in_grad[0],
                                                    rhs_req, scalar_form_ ? nullptr : &in_grad[1]));
    (void)in;
    const float* dy = F(out_grad[0]);
    const int64_t n = StridedWindowSize(w);
    if (req[0] != GradReq::kNull) {
      // Outside the window the head gradient, inside nothing (rhs replaced those elements).
      std::vector<char> inside(static_cast<size_t>(out_grad[0].size()), 0);
      for (int64_t i = 0; i < n; ++i) inside[StridedSource(w, i)] = 1;
      float* dx = F(in_grad[0]);
      for (int64_t i = 0; i < out_grad[0].size(); ++i) {
        AssignReq(req[0], dx, i, inside[i] ? 0.0f : dy[i]);
      }
    }
    if (rhs_req != GradReq::kNull) {
      float* db = F(in_grad[1]);
      for (int64_t i = 0; i < n; ++i) AssignReq(rhs_req, db, i, dy[StridedSource(w, i)]);
    }
  }

 private:
  bool scalar_form_;
  double value_ = 0;
  StridedParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const ParamSpec begin{"begin", "Shape(tuple)", kRequired,
                        "starting indices for the slice operation, supports negative indices."};
  const ParamSpec end{"end", "Shape(tuple)", kRequired,
                      "ending indices for the slice operation, supports negative indices."};
  const ParamSpec step{"step", "Shape(tuple)", "[]",
                       "step for the slice operation, supports negative values."};
  return {
      {"SliceChannel",
       "Splits an array along a particular axis into multiple sub-arrays.",
       {"data"},
       "",
       {{"num_outputs", "int", kRequired,
         "Number of splits. Note that this should evenly divide the length of the `axis`."},
        {"axis", "int", "1", "Axis along which to split."},
        {"squeeze_axis", "boolean", "0",
         "If true, Removes the axis with length 1 from the shapes of the output arrays. **Note** "
         "that setting `squeeze_axis` to ``true`` removes axis with length 1 only along the `axis` "
         "which it is split. Also `squeeze_axis` can be set to ``true`` only if "
         "``input.shape[axis] == num_outputs``."}}},
      {"_slice_assign",
       "Assign the rhs to a cropped subset of lhs.",
       {"lhs", "rhs"},
       "",
       {begin, end, step}},
      {"_slice_assign_scalar",
       "Assigns the scalar to a cropped subset of the input.",
       {"data"},
       "",
       {{"scalar", "double", "0", "The scalar value for assignment."}, begin, end, step}},
      {"flip",
       "Reverses the order of elements along the given axes while preserving the array shape "
       "(reverse and flip are equivalent).",
       {"data"},
       "",
       {{"axis", "Shape(tuple)", kRequired, "The axis which to reverse elements."}}},
      {"slice",
       "Slices a region of the array between the indices given by `begin` and `end` with the "
       "corresponding `step` (None entries take the whole axis; negative indices count from the "
       "end).",
       {"data"},
       "",
       {begin, end, step}},
      {"slice_axis",
       "Slices along a given axis: the array slice along `axis` from index `begin` to index `end` "
       "(None: to the end).",
       {"data"},
       "",
       {{"axis", "int", kRequired, "Axis along which to be sliced, supports negative indexes."},
        {"begin", "int", kRequired,
         "The beginning index along the axis to be sliced, supports negative indexes."},
        {"end", "int or None", kRequired,
         "The ending index along the axis to be sliced, supports negative indexes."}}},
      {"slice_like",
       "Slices a region of the array like the shape of another array: as slice with `begin` all 0 "
       "and `end` the shape of the second input, along `axes` (all axes by default).",
       {"data", "shape_like"},
       "",
       {{"axes", "Shape(tuple)", "[]",
         "List of axes on which input data will be sliced according to the corresponding size of "
         "the second input. By default will slice on all axes. Negative axes are supported."}}},
  };
}

}  // namespace

void RegisterSlice(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("_slice_assign",
             [](const Attrs& a) { return std::make_unique<SliceAssign>(false, a); });
  r.Register("_slice_assign_scalar",
             [](const Attrs& a) { return std::make_unique<SliceAssign>(true, a); });
  r.Alias("_crop_assign", "_slice_assign");
  r.Alias("_crop_assign_scalar", "_slice_assign_scalar");
  r.Register("slice_axis", [](const Attrs& a) { return std::make_unique<SliceAxis>(a); });
  r.Register("SliceChannel",
             [](const Attrs& a) { return std::make_unique<SliceChannel>("SliceChannel", a); });
  r.Alias("split", "SliceChannel");
  for (const char* name : {"slice", "slice_like", "flip"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Strided>(n, a); });
  }
  r.Alias("crop", "slice");
  r.Alias("reverse", "flip");
}

}  // namespace cohort::op
