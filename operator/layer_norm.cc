// LayerNorm on the CPU: layer_norm.h's row bodies over blocks of rows, and its column sums for
// gamma's and beta's gradients over blocks of columns, in the device's arena.
#include "operator/layer_norm.h"

#include <algorithm>
#include <type_traits>

#include "ndarray/convert.h"
#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// layer_norm.cu (Note [GPU kernels]), for T float, float16 and bfloat16.
template <typename T>
void LayerNormForwardGpu(const OpContext& ctx, const LayerNormRowsOf<T>& rows, int64_t outer,
                         int64_t inner);
template <typename T>
void LayerNormBackwardGpu(const OpContext& ctx, const LayerNormGradRowsOf<T>* rows,
                          const LayerNormParamGradsOf<T>* params, int64_t outer, int64_t inner);

LayerNormParam LayerNormParam::Parse(const Attrs& attrs, bool fused) {
  ParamReader r(fused ? "_layer_norm" : "LayerNorm", attrs);
  LayerNormParam p;
  p.axis = static_cast<int>(r.Int("axis"));
  p.eps = static_cast<float>(r.Float("eps"));
  p.output_mean_var = r.Bool("output_mean_var");
  if (fused) p.out_dtype = ParseDType(r.Enum("out_dtype"));
  r.Finish();
  COHORT_CHECK(p.eps >= 0) << "LayerNorm: eps must be >= 0, got " << p.eps;
  return p;
}

namespace {

// The row loops and the parameter sums built for AVX2 and AVX-512 too (Note [CPU clones]), one
// set per output type T (target_clones takes no templates).
#define COHORT_LAYER_NORM_CLONES(T)                                                              \
  COHORT_CPU_CLONES void RunLayerNormRows(const LayerNormRowsOf<T>& body, int64_t first,         \
                                          int64_t last, int64_t size, int64_t inner) {           \
    RunRows(body, first, last, size, inner);                                                     \
  }                                                                                              \
  COHORT_CPU_CLONES void RunLayerNormGradRows(const LayerNormGradRowsOf<T>& body, int64_t first, \
                                              int64_t last, int64_t size, int64_t inner) {       \
    RunRows(body, first, last, size, inner);                                                     \
  }                                                                                              \
  COHORT_CPU_CLONES void RunLayerNormParamGrads(const LayerNormParamGradsOf<T>& p, int64_t c0,   \
                                                int64_t c1, float* scratch) {                    \
    const int64_t n = c1 - c0;                                                                   \
    if (p.inner == 1) {                                                                          \
      LayerNormParamGradRows(p, UnitStride{}, c0, c1, scratch, scratch + n, scratch + 2 * n,     \
                             scratch + 3 * n);                                                   \
    } else {                                                                                     \
      LayerNormParamGradRows(p, p.inner, c0, c1, scratch, scratch + n, scratch + 2 * n,          \
                             scratch + 3 * n);                                                   \
    }                                                                                            \
  }
COHORT_LAYER_NORM_CLONES(float)
COHORT_LAYER_NORM_CLONES(float16)
COHORT_LAYER_NORM_CLONES(bfloat16)
#undef COHORT_LAYER_NORM_CLONES

constexpr int64_t kMinChunk = 1 << 13;  // elements per chunk of columns

// LayerNorm, and _layer_norm: the same with its output in out_dtype (Note [LayerNorm cast
// fusion]); data, gamma, beta, mean and std are float32.
class LayerNorm : public Operator {
 public:
  LayerNorm(const Attrs& attrs, bool fused) : p_(LayerNormParam::Parse(attrs, fused)) {}

  std::vector<std::string> ListArguments() const override { return {"data", "gamma", "beta"}; }
  std::vector<std::string> ListOutputs() const override { return {"output", "mean", "std"}; }
  int NumVisibleOutputs() const override { return p_.output_mean_var ? 3 : 1; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == p_.out_dtype;
  }
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots& aux) const override {
    if (p_.out_dtype == DType::kFloat32) return Operator::InferType(in, out, aux);
    for (size_t i = 0; i < in.size(); ++i) AssignType(in[i], DType::kFloat32, type(), "input");
    AssignType(out[0], p_.out_dtype, type(), "output");
    AssignType(out[1], DType::kFloat32, type(), "mean");
    AssignType(out[2], DType::kFloat32, type(), "std");
    return true;
  }

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
    DispatchFloat32OrHalf(type(), out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const AxisSplit s = SplitAt(in[0].shape(), Axis(in[0].shape()));
      const LayerNormRowsOf<T> rows{FloatsOf(in[0]),  FloatsOf(in[1]),  FloatsOf(in[2]),
                                    out[0].data<T>(), FloatsOf(out[1]), FloatsOf(out[2]),
                                    s.size,           s.inner,          p_.eps};
      COHORT_GPU_DISPATCH(ctx, LayerNormForwardGpu(ctx, rows, s.outer, s.inner));
      if constexpr (!std::is_same_v<T, float>) {
        if (s.inner == 1) return ForwardNarrowingRows(ctx, rows, out[0].dtype(), s.outer);
      }
      ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows,
                      static_cast<RowsRunner<LayerNormRowsOf<T>>>(&RunLayerNormRows));
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    DispatchFloat32OrHalf(type(), out_grad[0].dtype(), [&](auto tag) {
      BackwardOf<decltype(tag)>(ctx, out_grad[0], in, out, req, in_grad);
    });
  }

 private:
  // _layer_norm on the CPU with the axis last: blocks of rows normalized in float32 into the
  // thread's scratch (in cache), then rounded by NarrowFromFloat, whose bfloat16 loop uses
  // AVX512-BF16 where the CPU has it (Note [AVX512-BF16 narrowing]); the same values as the
  // rows' own rounding.
  template <typename T>
  void ForwardNarrowingRows(const OpContext& ctx, const LayerNormRowsOf<T>& rows, DType dtype,
                            int64_t outer) const {
    const int64_t size = rows.size;
    const int64_t block = std::max<int64_t>(1, kMinChunk / std::max<int64_t>(size, 1));
    ParallelChunks(
        outer, ChunksFor(ctx, outer * size / kMinChunk),
        [&](int64_t, int64_t first, int64_t last) {
          float* buf = Scratch(static_cast<size_t>(std::min(block, last - first) * size));
          for (int64_t r0 = first; r0 < last; r0 += block) {
            const int64_t n = std::min(block, last - r0);
            const LayerNormRows part{
                rows.x + r0 * size, rows.gamma, rows.beta, buf,     rows.mean + r0,
                rows.std + r0,      size,       1,         rows.eps};
            RunLayerNormRows(part, 0, n, size, 1);
            NarrowFromFloat(buf, n * size, dtype, rows.y + r0 * size);
          }
        },
        ctx.arena);
  }

  // The gradients for an output gradient dy of type T.
  template <typename T>
  void BackwardOf(const OpContext& ctx, const NDArray& dya, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                  const std::vector<NDArray>& in_grad) const {
    const AxisSplit s = SplitAt(in[0].shape(), Axis(in[0].shape()));
    const float* x = FloatsOf(in[0]);
    const T* dy = dya.data<T>();
    const float* mean = FloatsOf(out[1]);
    const float* std = FloatsOf(out[2]);
    const LayerNormGradRowsOf<T> rows{
        x,      dy,      FloatsOf(in[1]),
        mean,   std,     req[0] != GradReq::kNull ? FloatsOf(in_grad[0]) : nullptr,
        s.size, s.inner, req[0]};
    const bool want_gamma = req[1] != GradReq::kNull, want_beta = req[2] != GradReq::kNull;
    const LayerNormParamGradsOf<T> params{x,
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
      ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows,
                      static_cast<RowsRunner<LayerNormGradRowsOf<T>>>(&RunLayerNormGradRows));
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

  int Axis(const Shape& s) const { return NormalizeAxis(p_.axis, s, type()); }

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
      {"_layer_norm",
       "LayerNorm with its output in out_dtype, rounded once: the executor's fusion of LayerNorm "
       "and the amp_cast of its output (Note [LayerNorm cast fusion]).",
       {"data", "gamma", "beta"},
       "",
       {{"axis", "int", "-1", "The axis to normalize over."},
        {"eps", "float", "9.99999975e-06", "An `epsilon` parameter to prevent division by 0."},
        {"output_mean_var", "boolean", "0", "Output the mean and std."},
        {"out_dtype", "{'float16', 'float32', 'bfloat16'}", "float32", "The output's type."}}},
  };
}

}  // namespace

void RegisterLayerNorm(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("LayerNorm", [](const Attrs& a) { return std::make_unique<LayerNorm>(a, false); });
  r.Register("_layer_norm", [](const Attrs& a) { return std::make_unique<LayerNorm>(a, true); });
}

}  // namespace cohort::op
