// Broadcasting binary ops and `where` on the CPU, with broadcast.h's layout, values and
// gradients: forward walks the output a row (the last merged dimension) at a time, backward
// gathers each input element's gradient (Note [Broadcast layout]).
#include "operator/broadcast.h"

#include <algorithm>

#include "operator/common/kernel_util.h"

namespace cohort::op {

// broadcast.cu (Note [GPU kernels]). a and b are null in backward where the kind does not read
// them.
void BroadcastForwardGpu(const OpContext& ctx, BroadcastKind kind, const BroadcastLayout& l,
                         const NDArray& a, const NDArray& b, const NDArray& out);
void BroadcastBackwardGpu(const OpContext& ctx, BroadcastKind kind, const BroadcastLayout& l,
                          const NDArray& out_grad, const float* a, const float* b,
                          const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad);
void WhereForwardGpu(const OpContext& ctx, const std::vector<NDArray>& in, const NDArray& out);
void WhereBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& cond,
                      const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad);

BroadcastLayout BroadcastLayout::Make(const Shape& a, const Shape& b, const Shape& out) {
  const int n = out.ndim();
  COHORT_CHECK(n <= kMaxDims) << "broadcast: at most " << kMaxDims << " dimensions, got " << out;
  // Per output dimension: its extent and whether each input spans it (extent > 1 there).
  int64_t dims[kMaxDims];
  bool spans[2][kMaxDims];
  for (int d = 0; d < n; ++d) {
    dims[d] = out[d];
    const int da = d - (n - a.ndim()), db = d - (n - b.ndim());
    spans[0][d] = da >= 0 && a[da] == out[d] && out[d] != 1;
    spans[1][d] = db >= 0 && b[db] == out[d] && out[d] != 1;
  }
  // Merge runs of dimensions that both inputs span alike (dimensions of extent 1 join any run).
  BroadcastLayout l;
  for (int d = 0; d < n; ++d) {
    if (dims[d] == 1) continue;
    const bool same = l.ndim > 0 && spans[0][d] == (l.stride[0][l.ndim - 1] != 0) &&
                      spans[1][d] == (l.stride[1][l.ndim - 1] != 0);
    if (same) {
      l.out_dim[l.ndim - 1] *= dims[d];
    } else {
      l.out_dim[l.ndim] = dims[d];
      l.stride[0][l.ndim] = spans[0][d] ? 1 : 0;  // a marker here; real strides below
      l.stride[1][l.ndim] = spans[1][d] ? 1 : 0;
      ++l.ndim;
    }
  }
  int64_t out_stride = 1, in_stride[2] = {1, 1};
  for (int d = l.ndim - 1; d >= 0; --d) {
    l.out_stride[d] = out_stride;
    out_stride *= l.out_dim[d];
    for (int s = 0; s < 2; ++s) {
      if (l.stride[s][d] == 0) continue;
      l.stride[s][d] = in_stride[s];
      in_stride[s] *= l.out_dim[d];
    }
  }
  l.in_size[0] = in_stride[0];
  l.in_size[1] = in_stride[1];
  return l;
}

namespace {

// One output element from its inputs, computed in T's ComputeType (a no-op for float32).
template <typename T, BroadcastKind kKind>
[[gnu::always_inline]] inline T Apply(T a, T b) {
  using C = ComputeType<T>;
  return ConvertValue<T>(BroadcastValue<C>(kKind, ConvertValue<C>(a), ConvertValue<C>(b)));
}

// One output row of `n` elements; sa and sb are the inputs' strides along it (0 or 1).
template <typename T, BroadcastKind kKind>
[[gnu::always_inline]] inline void ForwardRow(int64_t n, const T* a, int64_t sa, const T* b,
                                              int64_t sb, T* y) {
  if (sa == 1 && sb == 1) {
    COHORT_ELEMENTWISE
    for (int64_t k = 0; k < n; ++k) y[k] = Apply<T, kKind>(a[k], b[k]);
  } else if (sa == 1) {
    const T bv = b[0];
    COHORT_ELEMENTWISE
    for (int64_t k = 0; k < n; ++k) y[k] = Apply<T, kKind>(a[k], bv);
  } else if (sb == 1) {
    const T av = a[0];
    COHORT_ELEMENTWISE
    for (int64_t k = 0; k < n; ++k) y[k] = Apply<T, kKind>(av, b[k]);
  } else {
    const T v = Apply<T, kKind>(a[0], b[0]);
    for (int64_t k = 0; k < n; ++k) y[k] = v;
  }
}

template <typename T, BroadcastKind kKind>
void ForwardRows(const BroadcastLayout& l, int64_t first, int64_t last, const T* a, const T* b,
                 T* y) {
  const int64_t n = l.ndim > 0 ? l.out_dim[l.ndim - 1] : 1;
  const int64_t sa = l.ndim > 0 ? l.stride[0][l.ndim - 1] : 0;
  const int64_t sb = l.ndim > 0 ? l.stride[1][l.ndim - 1] : 0;
  for (int64_t r = first; r < last; ++r) {
    const int64_t i = r * n;
    ForwardRow<T, kKind>(n, a + BroadcastSource(l, 0, i), sa, b + BroadcastSource(l, 1, i), sb,
                         y + i);
  }
}

template <typename T>
void BroadcastForward(BroadcastKind kind, const BroadcastLayout& l, int64_t first, int64_t last,
                      const T* a, const T* b, T* y) {
  using K = BroadcastKind;
  switch (kind) {
    case K::kAdd: return ForwardRows<T, K::kAdd>(l, first, last, a, b, y);
    case K::kSub: return ForwardRows<T, K::kSub>(l, first, last, a, b, y);
    case K::kMul: return ForwardRows<T, K::kMul>(l, first, last, a, b, y);
    case K::kDiv: return ForwardRows<T, K::kDiv>(l, first, last, a, b, y);
    case K::kMaximum: return ForwardRows<T, K::kMaximum>(l, first, last, a, b, y);
    case K::kMinimum: return ForwardRows<T, K::kMinimum>(l, first, last, a, b, y);
    case K::kPower: return ForwardRows<T, K::kPower>(l, first, last, a, b, y);
    case K::kEqual: return ForwardRows<T, K::kEqual>(l, first, last, a, b, y);
    case K::kNotEqual: return ForwardRows<T, K::kNotEqual>(l, first, last, a, b, y);
    case K::kGreater: return ForwardRows<T, K::kGreater>(l, first, last, a, b, y);
    case K::kGreaterEqual: return ForwardRows<T, K::kGreaterEqual>(l, first, last, a, b, y);
    case K::kLesser: return ForwardRows<T, K::kLesser>(l, first, last, a, b, y);
    case K::kLesserEqual: return ForwardRows<T, K::kLesserEqual>(l, first, last, a, b, y);
  }
}

// The output shape of broadcasting a and b (numpy's rule, as MXNet's broadcast_* ops).
Shape BroadcastShape(const Shape& a, const Shape& b, const std::string& op) {
  const int n = std::max(a.ndim(), b.ndim());
  Shape out = a.ndim() >= b.ndim() ? a : b;
  for (int d = 0; d < n; ++d) {
    const int da = d - (n - a.ndim()), db = d - (n - b.ndim());
    const int64_t x = da >= 0 ? a[da] : 1, y = db >= 0 ? b[db] : 1;
    COHORT_CHECK(x == y || x == 1 || y == 1)
        << op << ": shapes " << a << " and " << b << " do not broadcast (axis " << d << ")";
    out[d] = std::max(x, y);
  }
  return out;
}

constexpr int64_t kMinChunk = 1 << 14;  // elements: smaller arrays are not worth splitting

// The gradient of an input that is not broadcast (it has the output's shape): its element i
// reads output element i only, so it goes a row at a time without BroadcastReduce's index
// search, with the same values (a gather of the one term BroadcastGradTerm(i)).
void FullSideGrad(const OpContext& ctx, BroadcastKind kind, const BroadcastLayout& l, int side,
                  GradReq req, const float* dy, const float* a, const float* b, float* dx,
                  int64_t n) {
  const int64_t row = l.ndim > 0 ? l.out_dim[l.ndim - 1] : 1;
  const int other = 1 - side;
  const int64_t so = l.ndim > 0 ? l.stride[other][l.ndim - 1] : 0;
  const float* mine = side == 0 ? a : b;
  const float* theirs = side == 0 ? b : a;
  ParallelChunks(
      n / row, ChunksFor(ctx, n / kMinChunk),
      [&](int64_t, int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r) {
          const int64_t i0 = r * row;
          if (mine == nullptr) {  // add, sub: ±dy
            const float sign = BroadcastPartial(kind, side, 0.0f, 0.0f);
            COHORT_ELEMENTWISE
            for (int64_t k = 0; k < row; ++k) AssignReq(req, dx, i0 + k, dy[i0 + k] * sign);
            continue;
          }
          const float* t = theirs + BroadcastSource(l, other, i0);
          for (int64_t k = 0; k < row; ++k) {
            const float x = mine[i0 + k], y = t[k * so];
            AssignReq(
                req, dx, i0 + k,
                dy[i0 + k] * BroadcastPartial(kind, side, side == 0 ? x : y, side == 0 ? y : x));
          }
        }
      },
      ctx.arena);
}

// The gradient of add's or sub's input that is repeated over the output's leading rows (a bias or
// a position embedding over the batch, a mask over the heads): the sum of the `rows` rows of dy,
// a vector at a time instead of BroadcastGather's index search per element. Same terms, same
// order (row 0 first, from 0), so the same floats as the generic path and the GPU kernel.
void SumRowsGrad(const OpContext& ctx, BroadcastKind kind, int side, GradReq req, const float* dy,
                 int64_t rows, int64_t n, float* dx) {
  const float sign = BroadcastPartial(kind, side, 0.0f, 0.0f);
  ParallelChunks(
      n, ChunksFor(ctx, rows * n / kMinChunk),
      [&](int64_t, int64_t first, int64_t last) {
        float* acc = Scratch(static_cast<size_t>(last - first));
        const int64_t len = last - first;
        std::fill(acc, acc + len, 0.0f);
        for (int64_t r = 0; r < rows; ++r) {
          const float* row = dy + r * n + first;
          COHORT_ELEMENTWISE
          for (int64_t k = 0; k < len; ++k) acc[k] += row[k] * sign;
        }
        for (int64_t k = 0; k < len; ++k) AssignReq(req, dx, first + k, acc[k]);
      },
      ctx.arena);
}

class Broadcast : public Operator {
 public:
  Broadcast(BroadcastKind kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader(name, attrs).Finish();
  }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0]) || !ShapeKnown(in[1])) return false;
    AssignShape(out[0], BroadcastShape(in[0], in[1], type()), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const BroadcastLayout l = BroadcastLayout::Make(in[0].shape(), in[1].shape(), out[0].shape());
    COHORT_GPU_DISPATCH(ctx, BroadcastForwardGpu(ctx, kind_, l, in[0], in[1], out[0]));
    const int64_t row = l.ndim > 0 ? l.out_dim[l.ndim - 1] : 1;
    const int64_t rows = out[0].size() / std::max<int64_t>(row, 1);
    DispatchArithmetic(type(), out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* a = in[0].data<T>();
      const T* b = in[1].data<T>();
      T* y = out[0].data<T>();
      ParallelChunks(
          rows, ChunksFor(ctx, out[0].size() / kMinChunk),
          [&](int64_t, int64_t b0, int64_t e0) { BroadcastForward<T>(kind_, l, b0, e0, a, b, y); },
          ctx.arena);
    });
  }
  // Forward in every numeric dtype; Backward reads float32 (FloatsOf checks).
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const BroadcastLayout l =
        BroadcastLayout::Make(in[0].shape(), in[1].shape(), out_grad[0].shape());
    const bool reads = BroadcastGradReadsInputs(kind_);
    const float* a = reads ? FloatsOf(in[0]) : nullptr;
    const float* b = reads ? FloatsOf(in[1]) : nullptr;
    COHORT_GPU_DISPATCH(ctx, BroadcastBackwardGpu(ctx, kind_, l, out_grad[0], a, b, req, in_grad));
    const float* dy = F(out_grad[0]);
    const int64_t out_size = out_grad[0].size();
    for (int side = 0; side < 2; ++side) {
      if (req[side] == GradReq::kNull) continue;
      float* dx = F(in_grad[side]);
      const BroadcastGradTerm term{&l, kind_, side, dy, a, b};
      const GradReq r = req[side];
      const int64_t n = l.in_size[side];
      if (n == out_size) {  // this side is not broadcast: its gradient is elementwise, by rows
        FullSideGrad(ctx, kind_, l, side, r, dy, a, b, dx, out_size);
        continue;
      }
      if (!reads && l.ndim == 2 && l.stride[side][0] == 0 && l.stride[side][1] == 1) {
        SumRowsGrad(ctx, kind_, side, r, dy, l.out_dim[0], n, dx);
        continue;
      }
      ParallelChunks(
          n, ChunksFor(ctx, out_grad[0].size() / kMinChunk),
          [&](int64_t, int64_t first, int64_t last) {
            for (int64_t j = first; j < last; ++j) {
              AssignReq(r, dx, j, BroadcastGather(l, side, j, term));
            }
          },
          ctx.arena);
    }
  }

  bool BackwardNeedsInputs() const override { return BroadcastGradReadsInputs(kind_); }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  BroadcastKind kind_;
};

// where(condition, x, y).
class Where : public Operator {
 public:
  explicit Where(const Attrs& attrs) { ParamReader("where", attrs).Finish(); }
  std::vector<std::string> ListArguments() const override { return {"condition", "x", "y"}; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    for (int pass = 0; pass < 2; ++pass) {
      AssignShape(out[0], in[1], "where", "output");
      AssignShape(out[0], in[2], "where", "output");
      AssignShape(in[1], out[0], "where", "x");
      AssignShape(in[2], out[0], "where", "y");
    }
    if (!ShapeKnown(out[0])) return false;
    if (!ShapeKnown(in[0])) in[0] = out[0];
    const Shape& c = in[0];
    const bool same = c == out[0];
    const bool vector = c.ndim() == 1 && out[0].ndim() >= 1 && c[0] == out[0][0];
    COHORT_CHECK(same || vector) << "where: condition " << c << " must have x's shape " << out[0]
                                 << " or be a vector of its first dimension";
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, WhereForwardGpu(ctx, in, out[0]));
    const float* c = F(in[0]);
    const float* x = F(in[1]);
    const float* y = F(in[2]);
    float* o = F(out[0]);
    const int64_t n = out[0].size(), row = n / std::max<int64_t>(in[0].size(), 1);
    for (int64_t i = 0; i < n; ++i) o[i] = WhereValue(c, x, y, i, row);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, WhereBackwardGpu(ctx, out_grad[0], in[0], req, in_grad));
    // The condition gets a zero gradient, as in MXNet.
    if (req[0] == GradReq::kWrite) in_grad[0].Fill(0);
    const float* c = F(in[0]);
    const float* dy = F(out_grad[0]);
    const int64_t n = out_grad[0].size(), row = n / std::max<int64_t>(in[0].size(), 1);
    for (int side = 0; side < 2; ++side) {
      if (req[side + 1] == GradReq::kNull) continue;
      float* dx = F(in_grad[side + 1]);
      for (int64_t i = 0; i < n; ++i) {
        AssignReq(req[side + 1], dx, i, WhereGrad(c, side, dy[i], i, row));
      }
    }
  }

  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"broadcast_add",
       "Returns element-wise sum of the input arrays with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_div",
       "Returns element-wise division of the input arrays with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_equal",
       "Returns the result of element-wise **equal to** (==) comparison operation with "
       "broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_greater",
       "Returns the result of element-wise **greater than** (>) comparison operation with "
       "broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_greater_equal",
       "Returns the result of element-wise **greater than or equal to** (>=) comparison operation "
       "with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_lesser",
       "Returns the result of element-wise **lesser than** (<) comparison operation with "
       "broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_lesser_equal",
       "Returns the result of element-wise **lesser than or equal to** (<=) comparison operation "
       "with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_maximum",
       "Returns element-wise maximum of the input arrays with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_minimum",
       "Returns element-wise minimum of the input arrays with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_mul",
       "Returns element-wise product of the input arrays with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_not_equal",
       "Returns the result of element-wise **not equal to** (!=) comparison operation with "
       "broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_power",
       "Returns result of first array elements raised to powers from second array, element-wise "
       "with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"broadcast_sub",
       "Returns element-wise difference of the input arrays with broadcasting.",
       {"lhs", "rhs"},
       "",
       {}},
      {"where",
       "Return the elements, either from x or y, depending on the condition.",
       {"condition", "x", "y"},
       "",
       {}},
  };
}

}  // namespace

void RegisterBroadcast(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  using K = BroadcastKind;
  const std::pair<const char*, K> kinds[] = {{"broadcast_add", K::kAdd},
                                             {"broadcast_sub", K::kSub},
                                             {"broadcast_mul", K::kMul},
                                             {"broadcast_div", K::kDiv},
                                             {"broadcast_maximum", K::kMaximum},
                                             {"broadcast_minimum", K::kMinimum},
                                             {"broadcast_power", K::kPower},
                                             {"broadcast_equal", K::kEqual},
                                             {"broadcast_not_equal", K::kNotEqual},
                                             {"broadcast_greater", K::kGreater},
                                             {"broadcast_greater_equal", K::kGreaterEqual},
                                             {"broadcast_lesser", K::kLesser},
                                             {"broadcast_lesser_equal", K::kLesserEqual}};
  for (const auto& entry : kinds) {  // (clang 14 cannot capture structured bindings)
    const BroadcastKind kind = entry.second;
    const std::string n = entry.first;
    r.Register(n, [kind, n](const Attrs& a) { return std::make_unique<Broadcast>(kind, n, a); });
  }
  r.Alias("broadcast_plus", "broadcast_add");
  r.Alias("broadcast_minus", "broadcast_sub");
  // MXNet's same-shape comparisons (Symbol's ==, >, ... between two symbols): the broadcast
  // kernels, which equal shapes reach unchanged.
  for (const char* kind :
       {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"}) {
    r.Alias(std::string("_") + kind, std::string("broadcast_") + kind);
  }
  r.Register("where", [](const Attrs& a) { return std::make_unique<Where>(a); });
}

}  // namespace cohort::op
