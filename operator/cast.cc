// Cast on the CPU: cast.h's conversion over the elements, split over the arena's threads.
#include "operator/cast.h"

#include "operator/common/kernel_util.h"

namespace cohort::op {

CastParam CastParam::Parse(const Attrs& attrs) {
  ParamReader r("Cast", attrs);
  CastParam p;
  p.dtype = ParseDType(r.Enum("dtype"));
  r.Finish();
  return p;
}

namespace {

// dst (=|+=) src converted, over the arena's threads.
void CastCpu(const OpContext& ctx, const NDArray& src, const NDArray& dst, bool add) {
  const int64_t n = src.size();
  DispatchDType(src.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchDType(dst.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* x = src.data<From>();
      To* y = dst.data<To>();
      ParallelChunks(
          n, ChunksFor(ctx, n),
          [&](int64_t, int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) y[i] = CastElement(x[i], y[i], add);
          },
          ctx.arena);
    });
  });
}

class Cast : public Operator {
 public:
  explicit Cast(const Attrs& attrs) : p_(CastParam::Parse(attrs)) {}

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }
  // The input may be of any type; the output is `dtype`.
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], p_.dtype, type(), "output");
    return in[0].has_value();
  }
  bool TakesDType(DType) const override { return true; }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, CastGpu(ctx, in[0], out[0], false));
    CastCpu(ctx, in[0], out[0], false);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const bool add = req[0] == GradReq::kAdd;
    COHORT_GPU_DISPATCH(ctx, CastGpu(ctx, out_grad[0], in_grad[0], add));
    CastCpu(ctx, out_grad[0], in_grad[0], add);
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  CastParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Cast",
       "Casts all elements of the input to a new type.",
       {"data"},
       "",
       {{"dtype",
         "{'bfloat16', 'bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}",
         kRequired, "Output data type."}}},
  };
}

}  // namespace

void RegisterCast(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Cast", [](const Attrs& a) { return std::make_unique<Cast>(a); });
  r.Alias("cast", "Cast");
}

}  // namespace cohort::op
