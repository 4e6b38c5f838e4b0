// sum, mean, max, min, prod, nansum, nanprod and norm over axes on the CPU, with reduce.h's
// functions: rows split over the device's arena where the axes allow (Note [Reduce as rows]), else
// output elements (forward) and input elements (backward).
#include "operator/reduce.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// reduce.cu (Note [GPU kernels]); x and y are null where the kind does not read them.
void ReduceRowsGpu(const OpContext& ctx, const ReduceRows& rows, int64_t outer);
void ReduceGradRowsGpu(const OpContext& ctx, const ReduceGradRows& rows, int64_t outer);
void ReduceTypedForwardGpu(const OpContext& ctx, ReduceKind kind, const BroadcastLayout& l,
                           int64_t count, const NDArray& in, const NDArray& out);
void ReduceForwardGpu(const OpContext& ctx, ReduceKind kind, const BroadcastLayout& l,
                      int64_t count, const NDArray& in, const NDArray& out);
void ReduceBackwardGpu(const OpContext& ctx, ReduceKind kind, const BroadcastLayout& l,
                       int64_t count, GradReq req, const NDArray& out_grad, const float* x,
                       const float* y, const NDArray& in_grad);

ReduceParam ReduceParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  ReduceParam p;
  const std::pair<const char*, ReduceKind> kinds[] = {
      {"sum", ReduceKind::kSum},         {"mean", ReduceKind::kMean},
      {"max", ReduceKind::kMax},         {"min", ReduceKind::kMin},
      {"prod", ReduceKind::kProd},       {"nansum", ReduceKind::kNanSum},
      {"nanprod", ReduceKind::kNanProd}, {"norm", ReduceKind::kNorm2}};
  for (auto [name, kind] : kinds) {
    if (op == name) p.kind = kind;
  }
  if (op == "norm") {  // MXNet's norm: ord 1 or 2 (the default); out_dtype None or float32
    const int64_t ord = r.Int("ord");
    if (ord != 1 && ord != 2) {
      COHORT_THROW() << "norm: ord " << ord << " is not supported (1 or 2)";
    }
    p.kind = ord == 1 ? ReduceKind::kNorm1 : ReduceKind::kNorm2;
    r.Enum("out_dtype");
  }
  // None and "()" (an empty tuple) both mean every axis.
  if (auto axes = r.OptionalTuple("axis")) {
    for (int64_t a : *axes) p.axes.push_back(static_cast<int>(a));
  }
  p.keepdims = r.Bool("keepdims");
  if (op != "norm") p.exclude = r.Bool("exclude");  // (norm has no exclude)
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

ReduceRowsShape ReduceParam::RowsShape(const Shape& in) const {
  const uint32_t reduced = ReducedAxes(*this, in);
  if (in.Size() == 0 || !ReducesAsRows(kind))
    return {};  // nothing to read: the general path writes what is due
  // The axes of extent > 1 must run reduced (lead), kept (outer), reduced (size), kept (inner),
  // each run possibly empty.
  ReduceRowsShape r;
  int64_t* runs[] = {&r.lead, &r.outer, &r.size, &r.inner};
  int run = 0;
  for (int d = 0; d < in.ndim(); ++d) {
    if (in[d] == 1) continue;
    const int want = reduced >> d & 1 ? (run <= 0 ? 0 : 2) : (run <= 1 ? 1 : 3);
    if (want < run) return {};  // a reduced axis after the inner run
    run = want;
    *runs[run] *= in[d];
  }
  if (r.size == 1) {  // one reduced run at the start: (outer 1, size, inner) rows
    r.size = r.lead;
    r.inner = r.outer;
    r.outer = r.lead = 1;
  }
  r.rows = true;
  return r;
}

namespace {

// The row loops built for AVX2 and AVX-512 too (Note [CPU clones]).
COHORT_CPU_CLONES void RunReduceRows(const ReduceRows& body, int64_t first, int64_t last,
                                     int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}
COHORT_CPU_CLONES void RunReduceGradRows(const ReduceGradRows& body, int64_t first, int64_t last,
                                         int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}

constexpr int64_t kMinChunk = 1 << 14;  // input elements per chunk

// Note [Reduce as rows] on the CPU when rows lie `inner` > 1 apart: one row at a time reads
// elements `inner` apart (axis 0 of 1024x1024: 6.4 ms for max, against 3.3 through the layout).
// So kColumns neighbouring rows are reduced at once, position by position: each position of the
// block is a contiguous run, and the adds vectorize across rows. Each row still sums in
// SumOf16's order (position c into partial c % 16, the partials combined pairwise), so the bits
// are those of ReduceRows on one row.
constexpr int64_t kColumns = 64;

COHORT_CPU_CLONES void ReduceColumnBlocks(const ReduceRows& r, int64_t first, int64_t last) {
  const int64_t blocks_per_outer = (r.inner + kColumns - 1) / kColumns;
  float acc[PartialSums16::kLanes][kColumns], total[kColumns];
  for (int64_t b = first; b < last; ++b) {
    const int64_t o = b / blocks_per_outer, i0 = b % blocks_per_outer * kColumns;
    const int64_t width = std::min(kColumns, r.inner - i0);
    std::fill_n(total, width, r.kind == ReduceKind::kMax ? -INFINITY : 0.0f);
    for (int64_t l = 0; l < r.lead; ++l) {
      const float* x = r.x + l * r.lead_stride + o * r.size * r.inner + i0;
      if (r.kind == ReduceKind::kMax) {
        for (int64_t c = 0; c < r.size; ++c) {
          const float* v = x + c * r.inner;
          for (int64_t k = 0; k < width; ++k) total[k] = MaxKeepingNaNOp{}(total[k], v[k]);
        }
        continue;
      }
      for (auto& lane : acc) std::fill_n(lane, width, 0.0f);
      for (int64_t c = 0; c < r.size; ++c) {
        const float* v = x + c * r.inner;
        float* lane = acc[c % PartialSums16::kLanes];
        for (int64_t k = 0; k < width; ++k) lane[k] += v[k];
      }
      for (int w = PartialSums16::kLanes / 2; w >= 1; w /= 2) {  // PartialSums16::Total's order
        for (int j = 0; j < w; ++j) {
          for (int64_t k = 0; k < width; ++k) acc[j][k] += acc[j + w][k];
        }
      }
      for (int64_t k = 0; k < width; ++k) total[k] = l == 0 ? acc[0][k] : total[k] + acc[0][k];
    }
    const float count = static_cast<float>(r.lead * r.size);
    float* y = r.y + o * r.inner + i0;
    for (int64_t k = 0; k < width; ++k) {
      y[k] = r.kind == ReduceKind::kMean ? total[k] / count : total[k];
    }
  }
}

// The gradient of rows `inner` > 1 apart, a position of every row at once: (lead · outer · size)
// runs of `inner` contiguous elements, the gradient of run (l, o, c) read from row o·inner on.
COHORT_CPU_CLONES void ReduceGradColumnRuns(const ReduceGradRows& r, int64_t first, int64_t last) {
  const int64_t outer = r.lead_stride / (r.size * r.inner);
  const float count = static_cast<float>(r.lead * r.size);
  for (int64_t run = first; run < last; ++run) {
    const int64_t o = run / r.size % outer, begin = run * r.inner;
    const float* dy = r.dy + o * r.inner;
    if (r.kind == ReduceKind::kMax) {
      const float* x = r.x + begin;
      const float* y = r.y + o * r.inner;
      WriteRowGrad(SerialLanes{}, r.inner, begin, UnitStride{}, r.req, r.dx,
                   [&](int64_t k, int64_t) { return x[k] == y[k] ? dy[k] : 0.0f; });
    } else if (r.kind == ReduceKind::kMean) {
      WriteRowGrad(SerialLanes{}, r.inner, begin, UnitStride{}, r.req, r.dx,
                   [&](int64_t k, int64_t) { return dy[k] / count; });
    } else {
      WriteRowGrad(SerialLanes{}, r.inner, begin, UnitStride{}, r.req, r.dx,
                   [&](int64_t k, int64_t) { return dy[k]; });
    }
  }
}

// A row body on the CPU (Note [Reduce as rows]) over `elements` input elements: whole rows split
// over the arena when they are contiguous, else `apart`'s `apart_items` units.
template <typename Body>
void RunOnCpu(const OpContext& ctx, const ReduceRowsShape& s, int64_t elements, const Body& body,
              RowsRunner<Body> rows, int64_t apart_items,
              void (*apart)(const Body&, int64_t, int64_t)) {
  const int64_t chunks = ChunksFor(ctx, elements / kMinChunk);
  if (s.inner == 1) {
    ParallelChunks(
        s.outer, chunks,
        [&](int64_t, int64_t first, int64_t last) { rows(body, first, last, s.size, 1); },
        ctx.arena);
  } else {
    ParallelChunks(
        apart_items, chunks,
        [&](int64_t, int64_t first, int64_t last) { apart(body, first, last); }, ctx.arena);
  }
}

class Reduce : public Operator {
 public:
  Reduce(const std::string& name, const Attrs& attrs) : p_(ReduceParam::Parse(name, attrs)) {}

  bool BackwardNeedsInputs() const override { return ReduceGradReadsInput(p_.kind); }
  bool BackwardNeedsOutputs() const override { return ReduceGradReadsOutput(p_.kind); }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    AssignShape(out[0], p_.OutShape(in[0]), type(), "output");
    return true;
  }

  bool TakesDType(DType dtype) const override { return ReduceTakes(p_.kind, dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    if (out[0].dtype() != DType::kFloat32) {  // Note [Typed reductions]
      const Shape kept = p_.KeptShape(in[0].shape());
      const BroadcastLayout l = BroadcastLayout::Make(kept, kept, in[0].shape());
      const int64_t count = in[0].size() / std::max<int64_t>(kept.Size(), 1);
      COHORT_GPU_DISPATCH(ctx, ReduceTypedForwardGpu(ctx, p_.kind, l, count, in[0], out[0]));
      DispatchArithmetic(type(), out[0].dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* x = in[0].data<T>();
        T* y = out[0].data<T>();
        for (int64_t j = 0; j < out[0].size(); ++j) {
          y[j] = ReduceValueTyped<T>(p_.kind, l, j, x, count);
        }
      });
      return;
    }
    if (const ReduceRowsShape s = p_.RowsShape(in[0].shape()); s.rows) {
      const ReduceRows rows{p_.kind, FloatsOf(in[0]), FloatsOf(out[0]), s.size,
                            s.inner,  s.lead,          s.outer * s.size * s.inner};
      COHORT_GPU_DISPATCH(ctx, ReduceRowsGpu(ctx, rows, s.outer));
      const int64_t blocks = s.outer * ((s.inner + kColumns - 1) / kColumns);
      RunOnCpu(ctx, s, in[0].size(), rows, &RunReduceRows, blocks, &ReduceColumnBlocks);
      return;
    }
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
    const float* x = ReduceGradReadsInput(p_.kind) ? FloatsOf(in[0]) : nullptr;
    const float* y = ReduceGradReadsOutput(p_.kind) ? FloatsOf(out[0]) : nullptr;
    if (const ReduceRowsShape s = p_.RowsShape(in_grad[0].shape()); s.rows) {
      const ReduceGradRows rows{p_.kind,  req[0],
                                FloatsOf(out_grad[0]), x,
                                y,        FloatsOf(in_grad[0]),
                                s.size,   s.inner,
                                s.lead,   s.outer * s.size * s.inner};
      COHORT_GPU_DISPATCH(ctx, ReduceGradRowsGpu(ctx, rows, s.outer));
      RunOnCpu(ctx, s, in_grad[0].size(), rows, &RunReduceGradRows, s.lead * s.outer * s.size,
               &ReduceGradColumnRuns);
      return;
    }
    const Shape kept = p_.KeptShape(in_grad[0].shape());
    const BroadcastLayout l = BroadcastLayout::Make(kept, kept, in_grad[0].shape());
    const int64_t count = in_grad[0].size() / std::max<int64_t>(kept.Size(), 1);
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

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const std::vector<ParamSpec> reduce = {
      {"axis", "Shape or None", "None",
       "The axis or axes along which to perform the reduction. The default, `axis=()`, will "
       "compute over all elements into a scalar array with shape `(1,)`. If `axis` is int, a "
       "reduction is performed on a particular axis. If `axis` is a tuple of ints, a reduction "
       "is performed on all the axes specified in the tuple. If `exclude` is true, reduction "
       "will be performed on the axes that are NOT in axis instead. Negative values means "
       "indexing from right to left."},
      {"keepdims", "boolean", "0",
       "If this is set to `True`, the reduced axes are left in the result as dimension with "
       "size one."},
      {"exclude", "boolean", "0",
       "Whether to perform reduction on axis that are NOT in axis instead."}};
  return {
      {"max", "Computes the max of array elements over given axes.", {"data"}, "", reduce},
      {"mean", "Computes the mean of array elements over given axes.", {"data"}, "", reduce},
      {"min", "Computes the min of array elements over given axes.", {"data"}, "", reduce},
      {"nanprod",
       "Computes the product of array elements over given axes treating Not a Numbers (``NaN``) as "
       "one.",
       {"data"},
       "",
       reduce},
      {"nansum",
       "Computes the sum of array elements over given axes treating Not a Numbers (``NaN``) as "
       "zero.",
       {"data"},
       "",
       reduce},
      {"norm",
       "Computes the norm on an NDArray.",
       {"data"},
       "",
       {{"ord", "int", "2", "Order of the norm. Currently ord=1 and ord=2 is supported."},
        {"axis", "Shape or None", "None",
         "The axis or axes along which to perform the reduction. The default, `axis=()`, will "
         "compute over all elements into a scalar array with shape `(1,)`. If `axis` is int, a "
         "reduction is performed on a particular axis. If `axis` is a 2-tuple, it specifies the "
         "axes that hold 2-D matrices, and the matrix norms of these matrices are computed."},
        {"out_dtype", "{None, 'float32'}", "None", "The data type of the output."},
        {"keepdims", "boolean", "0",
         "If this is set to `True`, the reduced axis is left in the result as dimension with size "
         "one."}}},
      {"prod", "Computes the product of array elements over given axes.", {"data"}, "", reduce},
      {"sum", "Computes the sum of array elements over given axes.", {"data"}, "", reduce},
  };
}

}  // namespace

void RegisterReduce(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  for (const char* name : {"sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Reduce>(n, a); });
  }
  r.Alias("sum_axis", "sum");
  r.Alias("max_axis", "max");
  r.Alias("min_axis", "min");
}

}  // namespace cohort::op
