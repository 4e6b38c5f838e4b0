// LayerNorm on the CPU: layer_norm.h's row bodies over blocks of rows, and its column sums for
// gamma's and beta's gradients over blocks of columns, in the device's arena.
#include "operator/layer_norm.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// layer_norm.cu (Note [GPU kernels]).
void LayerNormForwardGpu(const OpContext& ctx, const LayerNormRows& rows, int64_t outer,
                         int64_t inner);
void LayerNormBackwardGpu(const OpContext& ctx, const LayerNormGradRows* rows,
                          const LayerNormParamGrads* params, int64_t outer, int64_t inner);

LayerNormParam LayerNormParam::Parse(const Attrs& attrs) {
  ParamReader r("LayerNorm", attrs);
  LayerNormParam p;
  p.axis = static_cast<int>(r.Int("axis"));
  p.eps = static_cast<float>(r.Float("eps"));
  p.output_mean_var = r.Bool("output_mean_var");
  r.Finish();
  COHORT_CHECK(p.eps >= 0) << "LayerNorm: eps must be >= 0, got " << p.eps;
  return p;
}

namespace {

// The row loops and the parameter sums built for AVX2 and AVX-512 too (Note [CPU clones]).
COHORT_CPU_CLONES void RunLayerNormRows(const LayerNormRows& body, int64_t first, int64_t last,
                                        int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}
COHORT_CPU_CLONES void RunLayerNormGradRows(const LayerNormGradRows& body, int64_t first,
                                            int64_t last, int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}
COHORT_CPU_CLONES void RunLayerNormParamGrads(const LayerNormParamGrads& p, int64_t c0, int64_t c1,
                                              float* scratch) {
  const int64_t n = c1 - c0;
  if (p.inner == 1) {
    LayerNormParamGradRows(p, UnitStride{}, c0, c1, scratch, scratch + n, scratch + 2 * n,
                           scratch + 3 * n);
  } else {
    LayerNormParamGradRows(p, p.inner, c0, c1, scratch, scratch + n, scratch + 2 * n,
                           scratch + 3 * n);
  }
}

constexpr int64_t kMinChunk = 1 << 13;  // elements per chunk of columns

class LayerNorm : public Operator {
 public:
  explicit LayerNorm(const Attrs& attrs) : p_(LayerNormParam::Parse(attrs)) {}

  std::vector<std::string> ListArguments() const override { return {"data", "gamma", "beta"}; }
  std::vector<std::string> ListOutputs() const override { return {"output", "mean", "std"}; }
  int NumVisibleOutputs() const override { return p_.output_mean_var ? 3 : 1; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], in[0], "LayerNorm", "output");
    AssignShape(in[0], out[0], "LayerNorm", "data");
    if (!ShapeKnown(in[0])) return false;
    const int axis = Axis(in[0]);
    AssignShape(in[1], {in[0][axis]}, "LayerNorm", "gamma");
    AssignShape(in[2], {in[0][axis]}, "LayerNorm", "beta");
    Shape stats = in[0];
    stats[axis] = 1;
    AssignShape(out[1], stats, "LayerNorm", "mean");
    AssignShape(out[2], stats, "LayerNorm", "std");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const AxisSplit s = SplitAt(in[0].shape(), Axis(in[0].shape()));
    const LayerNormRows rows{FloatsOf(in[0]),  FloatsOf(in[1]),  FloatsOf(in[2]),
                             FloatsOf(out[0]), FloatsOf(out[1]), FloatsOf(out[2]),
                             s.size,           s.inner,          p_.eps};
    COHORT_GPU_DISPATCH(ctx, LayerNormForwardGpu(ctx, rows, s.outer, s.inner));
    ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows, &RunLayerNormRows);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const AxisSplit s = SplitAt(in[0].shape(), Axis(in[0].shape()));
    const float* x = FloatsOf(in[0]);
    const float* dy = FloatsOf(out_grad[0]);
    const float* mean = FloatsOf(out[1]);
    const float* std = FloatsOf(out[2]);
    const LayerNormGradRows rows{
        x,      dy,      FloatsOf(in[1]),
        mean,   std,     req[0] != GradReq::kNull ? FloatsOf(in_grad[0]) : nullptr,
        s.size, s.inner, req[0]};
    const bool want_gamma = req[1] != GradReq::kNull, want_beta = req[2] != GradReq::kNull;
    const LayerNormParamGrads params{x,
                                     dy,
                                     mean,
                                     std,
                                     want_gamma ? FloatsOf(in_grad[1]) : nullptr,
                                     want_beta ? FloatsOf(in_grad[2]) : nullptr,
                                     req[1],
                                     req[2],
                                     s.outer,
                                     s.size,
                                     s.inner};
    COHORT_GPU_DISPATCH(
        ctx, LayerNormBackwardGpu(ctx, req[0] != GradReq::kNull ? &rows : nullptr,
                                  want_gamma || want_beta ? &params : nullptr, s.outer, s.inner));
    if (req[0] != GradReq::kNull) {
      ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows, &RunLayerNormGradRows);
    }
    if (want_gamma || want_beta) {
      ParallelChunks(
          s.size, ChunksFor(ctx, s.outer * s.inner * s.size / kMinChunk),
          [&](int64_t, int64_t first, int64_t last) {
            float* scratch = Scratch(4 * static_cast<size_t>(last - first));  // per thread
            RunLayerNormParamGrads(params, first, last, scratch);
          },
          ctx.arena);
    }
  }

 private:
  int Axis(const Shape& s) const { return NormalizeAxis(p_.axis, s, "LayerNorm"); }

  LayerNormParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"LayerNorm",
       "Layer normalization.",
       {"data", "gamma", "beta"},
       "",
       {{"axis", "int", "-1",
         "The axis to perform layer normalization. Usually, this should be be axis of the channel "
         "dimension. Negative values means indexing from right to left."},
        {"eps", "float", "9.99999975e-06", "An `epsilon` parameter to prevent division by 0."},
        {"output_mean_var", "boolean", "0",
         "Output the mean and std calculated along the given axis."}}},
  };
}

}  // namespace

void RegisterLayerNorm(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("LayerNorm", [](const Attrs& a) { return std::make_unique<LayerNorm>(a); });
}

}  // namespace cohort::op
