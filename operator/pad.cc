// Pad on the CPU: pad.h's functions over output elements (forward) and input elements
// (backward), split over the arena.
#include "operator/pad.h"

#include <charconv>

#include "operator/common/kernel_util.h"

namespace cohort::op {

namespace {

// "(0, 0, 1, 2)": pad_width has two values an axis, more than a Shape holds for 5-d inputs.
std::vector<int64_t> Widths(const std::string& text) {
  std::vector<int64_t> out;
  std::string item;
  for (char c : text + ",") {
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ' ') continue;
    if (c != ',') {
      item += c;
      continue;
    }
    if (item.empty()) continue;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    COHORT_CHECK(ec == std::errc() && end == item.data() + item.size())
        << "Pad: pad_width '" << text << "' is not a tuple of integers";
    out.push_back(v);
    item.clear();
  }
  return out;
}

}  // namespace

PadParam PadParam::Parse(const Attrs& attrs) {
  ParamReader r("Pad", attrs);
  PadParam p;
  static const char* const kModes[] = {"constant", "edge", "reflect"};
  p.mode = r.EnumValue<PadMode>("mode", kModes);
  p.width = Widths(r.String("pad_width"));
  p.constant = static_cast<float>(r.Float("constant_value"));
  r.Finish();
  return p;
}

Shape PadParam::OutShape(const Shape& in) const {
  COHORT_CHECK(static_cast<int>(width.size()) == 2 * in.ndim())
      << "Pad: pad_width has " << width.size() << " values; an input of shape " << in << " needs "
      << 2 * in.ndim() << " (before and after each axis)";
  Shape out = in;
  for (int d = 0; d < in.ndim(); ++d) {
    const int64_t before = width[2 * d], after = width[2 * d + 1];
    COHORT_CHECK(before >= 0 && after >= 0) << "Pad: negative pad_width on axis " << d;
    COHORT_CHECK(mode != PadMode::kReflect || (before < in[d] && after < in[d]))
        << "Pad: reflect pads axis " << d << " of extent " << in[d] << " by at most " << in[d] - 1
        << ", got (" << before << ", " << after << ")";
    out[d] = in[d] + before + after;
  }
  return out;
}

namespace {

class Pad : public Operator {
 public:
  explicit Pad(const Attrs& attrs) : p_(PadParam::Parse(attrs)) {}
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], p_.OutShape(in[0]), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const PadLayout l = Layout(in[0].shape());
    COHORT_GPU_DISPATCH(ctx, PadForwardGpu(ctx, l, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    ParallelChunks(
        out[0].size(), ChunksFor(ctx, out[0].size() / (1 << 14)),
        [&](int64_t, int64_t first, int64_t last) {
          for (int64_t i = first; i < last; ++i) y[i] = PadValue(l, x, i);
        },
        ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const PadLayout l = Layout(in_grad[0].shape());
    COHORT_GPU_DISPATCH(ctx, PadBackwardGpu(ctx, l, req[0], out_grad[0], in_grad[0]));
    const float* dy = F(out_grad[0]);
    float* dx = F(in_grad[0]);
    const GradReq r = req[0];
    ParallelChunks(
        in_grad[0].size(), ChunksFor(ctx, out_grad[0].size() / (1 << 14)),
        [&](int64_t, int64_t first, int64_t last) {
          for (int64_t j = first; j < last; ++j) AssignReq(r, dx, j, PadGrad(l, dy, j));
        },
        ctx.arena);
  }

 private:
  PadLayout Layout(const Shape& in) const {
    const Shape out = p_.OutShape(in);
    PadLayout l;
    l.ndim = in.ndim();
    l.mode = p_.mode;
    l.constant = p_.constant;
    for (int d = 0; d < in.ndim(); ++d) {
      l.in_dim[d] = in[d];
      l.out_dim[d] = out[d];
      l.before[d] = p_.width[2 * d];
    }
    return l;
  }

  PadParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Pad",
       "Pads an input array with a constant or edge values of the array.",
       {"data"},
       "",
       {{"mode", "{'constant', 'edge', 'reflect'}", kRequired,
         "Padding type to use. \"constant\" pads with `constant_value` \"edge\" pads using the "
         "edge values of the input array \"reflect\" pads by reflecting values with respect to the "
         "edges."},
        {"pad_width", "Shape(tuple)", kRequired,
         "Widths of the padding regions applied to the edges of each axis. It is a tuple of "
         "integer padding widths for each axis of the format ``(before_1, after_1, ... , before_N, "
         "after_N)``. It should be of length ``2*N`` where ``N`` is the number of dimensions of "
         "the array.This is equivalent to pad_width in numpy.pad, but flattened."},
        {"constant_value", "double", "0",
         "The value used for padding when `mode` is \"constant\"."}}},
  };
}

}  // namespace

void RegisterPad(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Pad", [](const Attrs& a) { return std::make_unique<Pad>(a); });
  r.Alias("pad", "Pad");
}

}  // namespace cohort::op
