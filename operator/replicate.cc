// broadcast_to, broadcast_axis, broadcast_like, tile and repeat on the CPU: replicate.h's views
// and functions, output elements (forward) and input elements (backward) split over the arena.
#include "operator/replicate.h"

#include <algorithm>

#include "operator/common/kernel_util.h"

namespace cohort::op {
namespace {

// A tuple of axes; None is empty.
std::vector<int> Axes(ParamReader& r, const std::string& key) {
  std::vector<int> axes;
  for (int64_t a : r.OptionalTuple(key).value_or(Shape())) axes.push_back(static_cast<int>(a));
  return axes;
}

const char* Name(ReplicateKind kind) {
  switch (kind) {
    case ReplicateKind::kBroadcastTo: return "broadcast_to";
    case ReplicateKind::kBroadcastAxis: return "broadcast_axis";
    case ReplicateKind::kBroadcastLike: return "broadcast_like";
    case ReplicateKind::kTile: return "tile";
    case ReplicateKind::kRepeat: return "repeat";
  }
  return "?";
}

// Sets out[d] to `target`, which the input's extent must equal unless it is 1.
void Spread(Shape& out, int d, int64_t from, int64_t target, ReplicateKind kind) {
  COHORT_CHECK(from == target || from == 1)
      << Name(kind) << ": axis " << d << " of extent " << from << " cannot become " << target
      << " (only extents of 1 are replicated)";
  out[d] = target;
}

}  // namespace

ReplicateParam ReplicateParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  ReplicateParam p;
  if (op == "broadcast_to") {
    p.kind = ReplicateKind::kBroadcastTo;
    p.shape = r.Tuple("shape");
  } else if (op == "broadcast_axis") {
    p.kind = ReplicateKind::kBroadcastAxis;
    p.axes = Axes(r, "axis");
    for (int64_t s : r.Tuple("size")) p.sizes.push_back(s);
    COHORT_CHECK(p.axes.size() == p.sizes.size())
        << "broadcast_axis: " << p.axes.size() << " axes but " << p.sizes.size() << " sizes";
  } else if (op == "broadcast_like") {
    p.kind = ReplicateKind::kBroadcastLike;
    p.lhs_axes = Axes(r, "lhs_axes");
    p.rhs_axes = Axes(r, "rhs_axes");
    COHORT_CHECK(p.lhs_axes.size() == p.rhs_axes.size())
        << "broadcast_like: lhs_axes and rhs_axes must name as many axes";
    // Given but empty (MXNet refuses it too): leave them out to broadcast like the whole rhs.
    for (const char* key : {"lhs_axes", "rhs_axes"}) {
      auto it = attrs.find(key);
      COHORT_CHECK(it == attrs.end() || it->second == "None" || !p.lhs_axes.empty())
          << "broadcast_like: " << key << " is empty; give the axes, or leave both out";
    }
  } else if (op == "tile") {
    p.kind = ReplicateKind::kTile;
    for (int64_t k : r.Tuple("reps")) p.reps.push_back(k);
    for (int64_t k : p.reps) COHORT_CHECK(k >= 0) << "tile: reps must be >= 0, got " << k;
  } else {
    p.kind = ReplicateKind::kRepeat;
    p.repeats = r.Int("repeats");
    COHORT_CHECK(p.repeats >= 0) << "repeat: repeats must be >= 0, got " << p.repeats;
    if (auto a = r.OptionalInt("axis")) p.axis = static_cast<int>(*a);
  }
  r.Finish();
  return p;
}

Shape ReplicateParam::OutShape(const Shape& in, const Shape& rhs) const {
  Shape out = in;
  switch (kind) {
    case ReplicateKind::kBroadcastTo:
      COHORT_CHECK(shape.ndim() == in.ndim())
          << "broadcast_to: shape " << shape << " has " << shape.ndim()
          << " dimensions but the input " << in << " has " << in.ndim();
      for (int d = 0; d < in.ndim(); ++d) Spread(out, d, in[d], shape[d] ? shape[d] : in[d], kind);
      return out;
    case ReplicateKind::kBroadcastAxis:
      for (size_t k = 0; k < axes.size(); ++k) {
        const int d = NormalizeAxis(axes[k], in, Name(kind));
        Spread(out, d, in[d], sizes[k], kind);
      }
      return out;
    case ReplicateKind::kBroadcastLike:
      if (lhs_axes.empty()) {
        COHORT_CHECK(rhs.ndim() == in.ndim())
            << "broadcast_like: lhs " << in << " and rhs " << rhs << " differ in dimensions";
        for (int d = 0; d < in.ndim(); ++d) Spread(out, d, in[d], rhs[d], kind);
      } else {
        for (size_t k = 0; k < lhs_axes.size(); ++k) {
          const int d = NormalizeAxis(lhs_axes[k], in, Name(kind));
          Spread(out, d, in[d], rhs[NormalizeAxis(rhs_axes[k], rhs, Name(kind))], kind);
        }
      }
      return out;
    case ReplicateKind::kTile: {
      const int n = std::max<int>(in.ndim(), static_cast<int>(reps.size()));
      COHORT_CHECK(n <= Shape::kMaxNdim / 2)
          << "tile: at most " << Shape::kMaxNdim / 2 << " dimensions, got " << n;
      std::vector<int64_t> dims(n);
      for (int d = 0; d < n; ++d) {
        const int di = d - (n - in.ndim()), dr = d - (n - static_cast<int>(reps.size()));
        dims[d] = (di >= 0 ? in[di] : 1) * (dr >= 0 ? reps[dr] : 1);
      }
      return Shape(std::span<const int64_t>(dims));
    }
    case ReplicateKind::kRepeat:
      if (!axis) return Shape({in.Size() * repeats});
      out[NormalizeAxis(*axis, in, Name(kind))] *= repeats;
      return out;
  }
  return out;
}

std::pair<Shape, Shape> ReplicateParam::Views(const Shape& in, const Shape& out) const {
  if (kind == ReplicateKind::kTile) {  // (1, a, 1, b) -> (r, a, s, b)
    const int n = out.ndim();
    std::vector<int64_t> from, to;
    for (int d = 0; d < n; ++d) {
      const int di = d - (n - in.ndim());
      const int64_t extent = di >= 0 ? in[di] : 1;
      from.insert(from.end(), {1, extent});
      to.insert(to.end(), {extent == 0 ? 0 : out[d] / extent, extent});
    }
    return {Shape(std::span<const int64_t>(from)), Shape(std::span<const int64_t>(to))};
  }
  if (kind == ReplicateKind::kRepeat) {  // an axis of 1 after the repeated one
    if (!axis) return {Shape({in.Size(), 1}), Shape({in.Size(), repeats})};
    const int a = NormalizeAxis(*axis, in, Name(kind));
    COHORT_CHECK(in.ndim() < Shape::kMaxNdim)
        << "repeat: at most " << Shape::kMaxNdim - 1 << " dimensions";
    std::vector<int64_t> from(in.begin(), in.end()), to(in.begin(), in.end());
    from.insert(from.begin() + a + 1, 1);
    to.insert(to.begin() + a + 1, repeats);
    return {Shape(std::span<const int64_t>(from)), Shape(std::span<const int64_t>(to))};
  }
  return {in, out};
}

namespace {

constexpr int64_t kMinChunk = 1 << 14;

class Replicate : public Operator {
 public:
  Replicate(const std::string& name, const Attrs& attrs) : p_(ReplicateParam::Parse(name, attrs)) {}

  std::vector<std::string> ListArguments() const override {
    if (p_.kind == ReplicateKind::kBroadcastLike) return {"lhs", "rhs"};
    return {"data"};
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const bool like = p_.kind == ReplicateKind::kBroadcastLike;
    if (!ShapeKnown(in[0]) || (like && !ShapeKnown(in[1]))) return false;
    AssignShape(out[0], p_.OutShape(in[0], like ? in[1] : Shape()), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const BroadcastLayout l = Layout(in[0].shape(), out[0].shape());
    COHORT_GPU_DISPATCH(ctx, ReplicateForwardGpu(ctx, l, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    ParallelChunks(
        out[0].size(), ChunksFor(ctx, out[0].size() / kMinChunk),
        [&](int64_t, int64_t first, int64_t last) {
          for (int64_t i = first; i < last; ++i) y[i] = ReplicateValue(l, x, i);
        },
        ctx.arena);
  }

  // broadcast_like's rhs only gives a shape: its gradient is zero.
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const bool zero_rhs = req.size() > 1 && req[1] == GradReq::kWrite;
    const BroadcastLayout l = req[0] == GradReq::kNull
                                  ? BroadcastLayout()
                                  : Layout(in_grad[0].shape(), out_grad[0].shape());
    COHORT_GPU_DISPATCH(ctx, ReplicateBackwardGpu(ctx, l, req[0], out_grad[0], in_grad[0],
                                                  zero_rhs ? &in_grad[1] : nullptr));
    if (zero_rhs) std::fill_n(F(in_grad[1]), in_grad[1].size(), 0.0f);
    if (req[0] == GradReq::kNull) return;
    const float* dy = F(out_grad[0]);
    float* dx = F(in_grad[0]);
    const GradReq r = req[0];
    ParallelChunks(
        in_grad[0].size(), ChunksFor(ctx, out_grad[0].size() / kMinChunk),
        [&](int64_t, int64_t first, int64_t last) {
          for (int64_t j = first; j < last; ++j) AssignReq(r, dx, j, ReplicateGrad(l, dy, j));
        },
        ctx.arena);
  }

 private:
  BroadcastLayout Layout(const Shape& in, const Shape& out) const {
    const auto [from, to] = p_.Views(in, out);
    return BroadcastLayout::Make(from, from, to);
  }

  ReplicateParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"broadcast_axis",
       "Broadcasts the input array over particular axes.",
       {"data"},
       "",
       {{"axis", "Shape(tuple)", "[]", "The axes to perform the broadcasting."},
        {"size", "Shape(tuple)", "[]", "Target sizes of the broadcasting axes."}}},
      {"broadcast_like",
       "Broadcasts lhs to have the same shape as rhs.",
       {"lhs", "rhs"},
       "",
       {{"lhs_axes", "Shape or None", "None",
         "Axes to perform broadcast on in the first input array"},
        {"rhs_axes", "Shape or None", "None", "Axes to copy from the second input array"}}},
      {"broadcast_to",
       "Broadcasts the input array to a new shape.",
       {"data"},
       "",
       {{"shape", "Shape(tuple)", "[]",
         "The shape of the desired array. We can set the dim to zero if it's same as the original. "
         "E.g `A = broadcast_to(B, shape=(10, 0, 0))` has the same meaning as `A = "
         "broadcast_axis(B, axis=0, size=10)`."}}},
      {"repeat",
       "Repeats elements of an array. By default, repeat flattens the input array into 1-D and "
       "then repeats the elements; with `axis`, it repeats along that axis.",
       {"data"},
       "",
       {{"repeats", "int", kRequired, "The number of repetitions for each element."},
        {"axis", "int or None", "None",
         "The axis along which to repeat values. The negative numbers are interpreted counting "
         "from the backward. By default, use the flattened input array, and return a flat output "
         "array."}}},
      {"tile",
       "Repeats the whole array multiple times: `reps` times along each axis, with the array or "
       "reps padded with leading ones to the same length.",
       {"data"},
       "",
       {{"reps", "Shape(tuple)", kRequired,
         "The number of times for repeating the tensor a. Each dim size of reps must be a positive "
         "integer. If reps has length d, the result will have dimension of max(d, a.ndim); If "
         "a.ndim < d, a is promoted to be d-dimensional by prepending new axes. If a.ndim > d, "
         "reps is promoted to a.ndim by pre-pending 1's to it."}}},
  };
}

}  // namespace

void RegisterReplicate(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  for (const char* name : {"broadcast_to", "broadcast_axis", "broadcast_like", "tile", "repeat"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Replicate>(n, a); });
  }
  r.Alias("broadcast_axes", "broadcast_axis");
}

}  // namespace cohort::op
