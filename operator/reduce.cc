// sum, mean and max over axes on the CPU, with reduce.h's functions: output elements (forward)
// and input elements (backward) split over the device's arena.
#include "operator/reduce.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// reduce.cu (Note [GPU kernels]); x and y are null where the kind does not read them.
void ReduceForwardGpu(const OpContext& ctx, ReduceKind kind, const BroadcastLayout& l,
                      int64_t count, const NDArray& in, const NDArray& out);
void ReduceBackwardGpu(const OpContext& ctx, ReduceKind kind, const BroadcastLayout& l,
                       int64_t count, GradReq req, const NDArray& out_grad, const float* x,
                       const float* y, const NDArray& in_grad);

ReduceParam ReduceParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  ReduceParam p;
  p.kind = op == "sum" ? ReduceKind::kSum : op == "mean" ? ReduceKind::kMean : ReduceKind::kMax;
  auto it = attrs.find("axis");
  if (it != attrs.end() && it->second != "None") {  // "()" is an empty tuple: every axis
    for (int64_t a : r.Tuple("axis", Shape())) p.axes.push_back(static_cast<int>(a));
  } else {
    r.OptionalInt("axis");  // marks "None" as read
  }
  p.keepdims = r.Bool("keepdims", p.keepdims);
  p.exclude = r.Bool("exclude", p.exclude);
  r.Finish();
  return p;
}

// Bit d set where axis d of `in` is reduced; throws naming an axis out of range. (A mask, not a
// vector: Forward and Backward ask every step and allocate nothing.)
static uint32_t ReducedAxes(const ReduceParam& p, const Shape& in) {
  const uint32_t all = (1u << in.ndim()) - 1;
  if (p.axes.empty()) return all;
  uint32_t listed = 0;
  for (int a : p.axes) {
    listed |= 1u << NormalizeAxis(a, in, "reduce");
  }
  return p.exclude ? all & ~listed : listed;
}

Shape ReduceParam::KeptShape(const Shape& in) const {
  const uint32_t reduced = ReducedAxes(*this, in);
  Shape kept = in;
  for (int d = 0; d < in.ndim(); ++d) {
    if (reduced >> d & 1) kept[d] = 1;
  }
  return kept;
}

Shape ReduceParam::OutShape(const Shape& in) const {
  if (keepdims) return KeptShape(in);
  const uint32_t reduced = ReducedAxes(*this, in);
  int64_t dims[Shape::kMaxNdim];
  size_t count = 0;
  for (int d = 0; d < in.ndim(); ++d) {
    if (!(reduced >> d & 1)) dims[count++] = in[d];
  }
  if (count == 0) dims[count++] = 1;  // MXNet 1.x gives (1,) for a full reduction
  return Shape(std::span<const int64_t>(dims, count));
}

namespace {

constexpr int64_t kMinChunk = 1 << 14;  // input elements per chunk

class Reduce : public Operator {
 public:
  Reduce(const std::string& name, const Attrs& attrs) : p_(ReduceParam::Parse(name, attrs)) {}

  bool BackwardNeedsInputs() const override { return p_.kind == ReduceKind::kMax; }
  bool BackwardNeedsOutputs() const override { return p_.kind == ReduceKind::kMax; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], p_.OutShape(in[0]), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const Shape kept = p_.KeptShape(in[0].shape());
    const BroadcastLayout l = BroadcastLayout::Make(kept, kept, in[0].shape());
    const int64_t count = in[0].size() / std::max<int64_t>(kept.Size(), 1);
    COHORT_GPU_DISPATCH(ctx, ReduceForwardGpu(ctx, p_.kind, l, count, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    ParallelChunks(
        out[0].size(), ChunksFor(ctx, in[0].size() / kMinChunk),
        [&](int64_t, int64_t first, int64_t last) {
          for (int64_t j = first; j < last; ++j) y[j] = ReduceValue(p_.kind, l, j, x, count);
        },
        ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const Shape kept = p_.KeptShape(in_grad[0].shape());
    const BroadcastLayout l = BroadcastLayout::Make(kept, kept, in_grad[0].shape());
    const int64_t count = in_grad[0].size() / std::max<int64_t>(kept.Size(), 1);
    const bool max = p_.kind == ReduceKind::kMax;
    const float* x = max ? FloatsOf(in[0]) : nullptr;
    const float* y = max ? FloatsOf(out[0]) : nullptr;
    COHORT_GPU_DISPATCH(
        ctx, ReduceBackwardGpu(ctx, p_.kind, l, count, req[0], out_grad[0], x, y, in_grad[0]));
    const float* dy = F(out_grad[0]);
    float* dx = F(in_grad[0]);
    const GradReq r = req[0];
    ParallelChunks(
        in_grad[0].size(), ChunksFor(ctx, in_grad[0].size() / kMinChunk),
        [&](int64_t, int64_t first, int64_t last) {
          for (int64_t i = first; i < last; ++i) {
            AssignReq(r, dx, i, ReduceGrad(p_.kind, l, i, dy, x, y, count));
          }
        },
        ctx.arena);
  }

 private:
  ReduceParam p_;
};

}  // namespace

void RegisterReduce(OpRegistry& r) {
  for (const char* name : {"sum", "mean", "max"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Reduce>(n, a); });
  }
  r.Alias("sum_axis", "sum");
  r.Alias("max_axis", "max");
}

}  // namespace cohort::op
