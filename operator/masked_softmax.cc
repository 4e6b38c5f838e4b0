// _masked_softmax on the CPU: masked_softmax.h's row bodies over blocks of rows (Note [Masked
// softmax values]).
#include "operator/masked_softmax.h"

#include <algorithm>
#include <type_traits>

#include "ndarray/convert.h"
#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// masked_softmax.cu (Note [GPU kernels]): the rows of (outer, size) data.
void MaskedSoftmaxForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& mask,
                             const NDArray& y, int64_t mask_rows, double scale);
void MaskedSoftmaxBackwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& mask,
                              const NDArray& dy, const NDArray& dx, GradReq req,
                              const NDArray& dmask, GradReq mask_req, int64_t mask_rows,
                              double scale);

std::optional<int64_t> MaskedSoftmaxMaskRows(const Shape& data, const Shape& mask) {
  const int nd = data.ndim(), nm = mask.ndim();
  if (nd < 1 || nm < 1 || nm > nd || mask[nm - 1] != data[nd - 1]) return std::nullopt;
  int64_t rows = 1;
  bool leading = false;  // past the mask's axes that equal the data's
  for (int i = 2; i <= nm; ++i) {
    const int64_t m = mask[nm - i];
    if (!leading && m == data[nd - i]) {
      rows *= m;
    } else if (m == 1) {
      leading = true;
    } else {
      return std::nullopt;
    }
  }
  return rows;
}

MaskedSoftmaxParam MaskedSoftmaxParam::Parse(const Attrs& attrs) {
  ParamReader r("_masked_softmax", attrs);
  MaskedSoftmaxParam p;
  p.scale = r.Float("scale");
  p.out_dtype = ParseDType(r.Enum("out_dtype"));
  r.Finish();
  return p;
}

namespace {

// The row loops of each (data, output) type pair, built for AVX2 and AVX-512 too (Note [CPU
// clones]; target_clones takes no templates). Runner(tag) picks a pair's loop.
// Each chunk's rows through one scratch row of probabilities (Note [Kernel threads]: the
// thread's own).
template <typename Body>
[[gnu::always_inline]] inline void RunRowsOnCpu(const Body& body, int64_t first, int64_t last,
                                                int64_t size) {
  float* p = Scratch(static_cast<size_t>(size));
  for (int64_t r = first; r < last; ++r) body.RowOnCpu(r * size, p);
}

// Note [Masked softmax blocks]
// Where the data, the output or the data's gradient is float16/bfloat16, the CPU takes a block
// of rows (about 4K values, in L1) at a time: the half-type inputs widened into float32 scratch
// and the results narrowed into the outputs by one call each of convert.h's loops (VCVTNEPS2BF16
// where the CPU has it), the rows between in float32 loops (a bfloat16 rounding through
// RoundedThrough's 32-bit steps). Row by row, each element's own conversions vectorised to
// AVX2's width only (16-bit lanes need AVX512BW, which the avx512f clone may not use) and cost
// as much as the softmax. op_bench, 128x128x128 with a 128x128 mask, one core of the Intel Xeon
// (medians of 4 alternating runs): bfloat16 forward 3.7 -> 2.2 ms, backward 5.5 -> 3.9, against
// float32's 1.75 and 2.7 (the rest is the conversions' own work). The operations and their
// order are the row bodies' (Note [Masked softmax values]), so the values are the same bit for
// bit (tests/executor/masked_softmax_test.cc, in float32, bfloat16 and float16).
constexpr int64_t kBlockValues = 4096;

template <typename T>
constexpr bool kIsHalf = !std::is_same_v<T, float>;

// The n values of `src` from `base` as float32: the array itself, or widened into `scratch`.
template <typename T>
[[gnu::always_inline]] inline const float* AsFloat(const T* src, int64_t base, int64_t n,
                                                   float* scratch) {
  if constexpr (kIsHalf<T>) {
    WidenToFloat(DTypeOf<T>::value, src + base, n, scratch);
    return scratch;
  } else {
    return src + base;
  }
}

// p = softmax(float(In(x · scale)) + mask) for the row at `base`, whose data xr holds widened
// (xr may be p).
template <typename In, typename Out>
[[gnu::always_inline]] inline void RowProbabilities(const MaskedSoftmaxRows<In, Out>& f,
                                                    int64_t base, const float* xr, float* p) {
  const float* m = f.MaskRow(base);
  COHORT_INDEPENDENT
  for (int64_t c = 0; c < f.size; ++c) p[c] = RoundedThrough<In>(xr[c] * f.scale) + m[c];
  f.SoftmaxInPlace(p);
}

template <typename In, typename Out>
[[gnu::always_inline]] inline void RunBlocksOnCpu(const MaskedSoftmaxRows<In, Out>& f,
                                                  int64_t first, int64_t last, int64_t size) {
  const int64_t block = std::max<int64_t>(1, kBlockValues / size);
  float* p = Scratch(static_cast<size_t>(block * size));
  for (int64_t r = first; r < last; r += block) {
    const int64_t base = r * size, n = std::min(block, last - r) * size;
    const float* x = AsFloat(f.x, base, n, p);
    for (int64_t i = 0; i < n; i += size) RowProbabilities(f, base + i, x + i, p + i);
    if constexpr (kIsHalf<Out>) {
      NarrowFromFloat(p, n, DTypeOf<Out>::value, f.y + base);
    } else {
      std::copy_n(p, n, f.y + base);
    }
  }
}

template <typename In, typename Out>
[[gnu::always_inline]] inline void RunBlocksOnCpu(const MaskedSoftmaxGradRows<In, Out>& g,
                                                  int64_t first, int64_t last, int64_t size) {
  const int64_t block = std::max<int64_t>(1, kBlockValues / size);
  float* p = Scratch(static_cast<size_t>(block * size));
  float* wide_dy = Scratch(static_cast<size_t>(block * size), 1);
  const bool add = g.req == GradReq::kAdd;
  for (int64_t r = first; r < last; r += block) {
    const int64_t base = r * size, n = std::min(block, last - r) * size;
    const float* x = AsFloat(g.forward.x, base, n, p);
    const float* dy = AsFloat(g.dy, base, n, wide_dy);
    for (int64_t i = 0; i < n; i += size) {
      float* pr = p + i;
      const float* dyr = dy + i;
      RowProbabilities(g.forward, base + i, x + i, pr);
      const float d = SumOf16(size, [&](int64_t c) { return dyr[c] * pr[c]; });
      COHORT_INDEPENDENT
      for (int64_t c = 0; c < size; ++c) pr[c] = g.Gradient(pr[c], dyr[c], d);
    }
    In* dx = g.dx + base;
    if constexpr (kIsHalf<In>) {
      StoreNarrowed(p, n, DTypeOf<In>::value, dx, add);
    } else {
      COHORT_INDEPENDENT
      for (int64_t i = 0; i < n; ++i) dx[i] = add ? dx[i] + p[i] : p[i];
    }
  }
}

// The rows of one (data, output) type pair: in blocks where either is a half type.
template <typename Body, typename In, typename Out>
[[gnu::always_inline]] inline void RunPairOnCpu(const Body& body, int64_t first, int64_t last,
                                                int64_t size) {
  if constexpr (kIsHalf<In> || kIsHalf<Out>) {
    RunBlocksOnCpu(body, first, last, size);
  } else {
    RunRowsOnCpu(body, first, last, size);
  }
}
#define COHORT_MASKED_SOFTMAX_RUNNERS(In, Out)                                                  \
  COHORT_CPU_CLONES void RunRows_##In##_##Out(const MaskedSoftmaxRows<In, Out>& body,           \
                                              int64_t first, int64_t last, int64_t size,        \
                                              int64_t) {                                        \
    RunPairOnCpu<MaskedSoftmaxRows<In, Out>, In, Out>(body, first, last, size);                 \
  }                                                                                             \
  COHORT_CPU_CLONES void RunGradRows_##In##_##Out(const MaskedSoftmaxGradRows<In, Out>& body,   \
                                                  int64_t first, int64_t last, int64_t size,    \
                                                  int64_t) {                                    \
    RunPairOnCpu<MaskedSoftmaxGradRows<In, Out>, In, Out>(body, first, last, size);             \
  }                                                                                             \
  [[maybe_unused]] RowsRunner<MaskedSoftmaxRows<In, Out>> Runner(MaskedSoftmaxRows<In, Out>*) { \
    return &RunRows_##In##_##Out;                                                               \
  }                                                                                             \
  [[maybe_unused]] RowsRunner<MaskedSoftmaxGradRows<In, Out>> Runner(                           \
      MaskedSoftmaxGradRows<In, Out>*) {                                                        \
    return &RunGradRows_##In##_##Out;                                                           \
  }
#define COHORT_MASKED_SOFTMAX_RUNNERS_FROM(In) \
  COHORT_MASKED_SOFTMAX_RUNNERS(In, float)     \
  COHORT_MASKED_SOFTMAX_RUNNERS(In, bfloat16)  \
  COHORT_MASKED_SOFTMAX_RUNNERS(In, float16)
COHORT_MASKED_SOFTMAX_RUNNERS_FROM(float)
COHORT_MASKED_SOFTMAX_RUNNERS_FROM(bfloat16)
COHORT_MASKED_SOFTMAX_RUNNERS_FROM(float16)
#undef COHORT_MASKED_SOFTMAX_RUNNERS_FROM
#undef COHORT_MASKED_SOFTMAX_RUNNERS

class MaskedSoftmax : public Operator {
 public:
  explicit MaskedSoftmax(const Attrs& attrs) : p_(MaskedSoftmaxParam::Parse(attrs)) {}

  std::vector<std::string> ListArguments() const override { return {"data", "mask"}; }
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == DType::kBFloat16 || dtype == DType::kFloat16;
  }
  bool BackwardNeedsOutputs() const override { return false; }  // recomputed from the inputs
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  // The mask is (..., mask_rows, size) with the data's last axes, 1 (or absent) on the others.
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], in[0], type(), "output");
    if (!ShapeKnown(in[1])) return false;
    MaskRows(in[0], in[1]);
    return true;
  }

  // The data's type rounds the scaled logits; the mask is float32; the output is out_dtype.
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    AssignType(in[1], DType::kFloat32, type(), "mask");
    AssignType(out[0], p_.out_dtype, type(), "output");
    return in[0].has_value();
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const int64_t mask_rows = MaskRows(in[0].shape(), in[1].shape());
    COHORT_GPU_DISPATCH(ctx,
                        MaskedSoftmaxForwardGpu(ctx, in[0], in[1], out[0], mask_rows, p_.scale));
    const int64_t size = LastAxis(in[0].shape());
    DispatchFloat32OrHalf("_masked_softmax", in[0].dtype(), [&](auto in_tag) {
      using In = decltype(in_tag);
      DispatchFloat32OrHalf("_masked_softmax", out[0].dtype(), [&](auto out_tag) {
        using Out = decltype(out_tag);
        const MaskedSoftmaxRows<In, Out> rows{in[0].data<In>(),   in[1].data<float>(),
                                              out[0].data<Out>(), size,
                                              mask_rows,          Scale<In>()};
        ForEachRowOnCpu(ctx, in[0].size() / size, size, 1, rows,
                        Runner(static_cast<MaskedSoftmaxRows<In, Out>*>(nullptr)));
      });
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull && req[1] == GradReq::kNull) return;
    const int64_t mask_rows = MaskRows(in[0].shape(), in[1].shape());
    COHORT_GPU_DISPATCH(ctx,
                        MaskedSoftmaxBackwardGpu(ctx, in[0], in[1], out_grad[0], in_grad[0], req[0],
                                                 in_grad[1], req[1], mask_rows, p_.scale));
    const int64_t size = LastAxis(in[0].shape());
    DispatchFloat32OrHalf("_masked_softmax", in[0].dtype(), [&](auto in_tag) {
      using In = decltype(in_tag);
      DispatchFloat32OrHalf("_masked_softmax", out_grad[0].dtype(), [&](auto out_tag) {
        using Out = decltype(out_tag);
        const MaskedSoftmaxRows<In, Out> forward{
            in[0].data<In>(), in[1].data<float>(), nullptr, size, mask_rows, Scale<In>()};
        const MaskedSoftmaxGradRows<In, Out> rows{
            forward, out_grad[0].data<Out>(),
            req[0] == GradReq::kNull ? nullptr : in_grad[0].data<In>(), req[0]};
        const int64_t outer = in[0].size() / size;
        if (req[0] != GradReq::kNull) {
          ForEachRowOnCpu(ctx, outer, size, 1, rows,
                          Runner(static_cast<MaskedSoftmaxGradRows<In, Out>*>(nullptr)));
        }
        if (req[1] == GradReq::kNull) return;
        const MaskedSoftmaxRowStats<In, Out> stats{rows,
                                                   Scratch(static_cast<size_t>(outer * 3), 1)};
        ForEachRowOnCpu(ctx, outer, size, 1, stats);
        float* dmask = in_grad[1].data<float>();
        const bool add = req[1] == GradReq::kAdd;
        ParallelChunks(
            in[1].size(), ChunksFor(ctx, in[1].size()),
            [&](int64_t, int64_t begin, int64_t end) {
              for (int64_t j = begin; j < end; ++j) {
                const float g = stats.MaskGradient(j, outer);
                dmask[j] = add ? dmask[j] + g : g;
              }
            },
            ctx.arena);
      });
    });
  }

 private:
  // The scale in the data's type, as _mul_scalar multiplies by it.
  template <typename In>
  float Scale() const {
    return static_cast<float>(ConvertValue<In>(p_.scale));
  }
  static int64_t LastAxis(const Shape& s) { return s.ndim() == 0 ? 1 : s[s.ndim() - 1]; }

  int64_t MaskRows(const Shape& data, const Shape& mask) const {
    const std::optional<int64_t> rows = MaskedSoftmaxMaskRows(data, mask);
    COHORT_CHECK(rows) << type() << ": mask " << mask << " does not match data " << data
                       << " on its last axes (and 1 on the others)";
    return *rows;
  }

  MaskedSoftmaxParam p_;
};

}  // namespace

void RegisterMaskedSoftmax(OpRegistry& r) {
  r.Declare(
      {"_masked_softmax",
       "softmax(data * scale + mask) over the last axis, with the data's type rounding the "
       "scaled values and the output in out_dtype: the executor's fusion of _mul_scalar, "
       "broadcast_add and softmax (and the casts between them).",
       {"data", "mask"},
       "",
       {{"scale", "double", "1", "The factor of the data."},
        {"out_dtype", "{'float16', 'float32', 'bfloat16'}", "float32", "The output's type."}}});
  r.Register("_masked_softmax", [](const Attrs& a) { return std::make_unique<MaskedSoftmax>(a); });
}

}  // namespace cohort::op
