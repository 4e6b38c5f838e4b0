// slice_axis and SliceChannel (split) on the CPU, with slice.h's index map: a window is copied
// (forward) or written back (backward) one contiguous run of `size · inner` floats at a time.
#include <cstring>

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
  if (auto it = attrs.find("end"); it != attrs.end() && it->second != "None") {
    p.end = r.Int("end");
  } else {
    r.OptionalInt("end");
  }
  r.Finish();
  return p;
}

SliceChannelParam SliceChannelParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  SliceChannelParam p;
  p.num_outputs = static_cast<int>(r.Int("num_outputs"));
  p.axis = static_cast<int>(r.Int("axis", p.axis));
  p.squeeze_axis = r.Bool("squeeze_axis", p.squeeze_axis);
  r.Finish();
  COHORT_CHECK_GT(p.num_outputs, 0) << op << ": num_outputs must be positive";
  return p;
}

namespace {

void CopyWindow(const SliceWindow& w, int64_t outer, const float* x, float* y) {
  const int64_t run = w.size * w.inner;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(y + o * run, x + SliceSource(w, o * run), run * sizeof(float));
  }
}

void WriteBackWindow(const SliceWindow& w, int64_t outer, GradReq req, const float* dy, float* dx) {
  const int64_t run = w.size * w.inner;
  for (int64_t o = 0; o < outer; ++o) {
    float* d = dx + SliceSource(w, o * run);
    const float* g = dy + o * run;
    if (req == GradReq::kAdd) {
      for (int64_t k = 0; k < run; ++k) d[k] += g[k];
    } else {
      std::memcpy(d, g, run * sizeof(float));
    }
  }
}

class SliceAxis : public Operator {
 public:
  explicit SliceAxis(const Attrs& attrs) : p_(SliceAxisParam::Parse(attrs)) {}

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
    CopyWindow(w, Outer(in[0].shape()), F(in[0]), F(out[0]));
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
    WriteBackWindow(w, Outer(in_grad[0].shape()), req[0], F(out_grad[0]), F(in_grad[0]));
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
      CopyWindow(Window(in[0].shape(), k), Outer(in[0].shape()), F(in[0]), F(out[k]));
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
      WriteBackWindow(Window(s, k), Outer(s), req[0], F(out_grad[k]), F(in_grad[0]));
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

}  // namespace

void RegisterSlice(OpRegistry& r) {
  r.Register("slice_axis", [](const Attrs& a) { return std::make_unique<SliceAxis>(a); });
  r.Register("SliceChannel",
             [](const Attrs& a) { return std::make_unique<SliceChannel>("SliceChannel", a); });
  r.Alias("split", "SliceChannel");
}

}  // namespace cohort::op
