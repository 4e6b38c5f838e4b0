// transpose on the CPU: transpose.h's index map, a row (the last merged output axis) at a time.
#include "operator/transpose.h"

#include <cstring>

#include "operator/common/kernel_util.h"

namespace cohort::op {

// transpose.cu (Note [GPU kernels]); backward = true scatters dy back through the map.
void TransposeGpu(const OpContext& ctx, const TransposeLayout& l, bool backward, GradReq req,
                  const NDArray& src, const NDArray& dst);

TransposeParam TransposeParam::Parse(const Attrs& attrs) {
  ParamReader r("transpose", attrs);
  TransposeParam p;
  for (int64_t a : r.Tuple("axes")) p.axes.push_back(static_cast<int>(a));
  r.Finish();
  return p;
}

TransposeLayout TransposeLayout::Make(const TransposeParam& p, const Shape& in, Shape* out) {
  const int n = in.ndim();
  COHORT_CHECK(p.axes.empty() || static_cast<int>(p.axes.size()) == n)
      << "transpose: axes has " << p.axes.size() << " entries for input " << in;
  // Fixed arrays: Forward and Backward make the layout every step and allocate nothing.
  int axes[Shape::kMaxNdim];
  bool seen[Shape::kMaxNdim] = {};
  for (int d = 0; d < n; ++d) {
    int a = p.axes.empty() ? n - 1 - d : p.axes[d];
    if (a < 0) a += n;
    COHORT_CHECK(a >= 0 && a < n && !seen[a])
        << "transpose: axes must be a permutation of 0.." << n - 1 << " for input " << in;
    seen[a] = true;
    axes[d] = a;
  }
  int64_t stride[Shape::kMaxNdim];
  if (n > 0) stride[n - 1] = 1;
  for (int d = n - 2; d >= 0; --d) stride[d] = stride[d + 1] * in[d + 1];
  if (out) {
    *out = in;
    for (int d = 0; d < n; ++d) (*out)[d] = in[axes[d]];
  }
  TransposeLayout l;
  for (int d = 0; d < n; ++d) {
    const int64_t dim = in[axes[d]], s = stride[axes[d]];
    if (dim == 1) continue;
    // Merge with the previous output axis when it is the input axis just before this one.
    if (l.ndim > 0 && l.in_stride[l.ndim - 1] == s * dim) {
      l.out_dim[l.ndim - 1] *= dim;
      l.in_stride[l.ndim - 1] = s;
    } else {
      l.out_dim[l.ndim] = dim;
      l.in_stride[l.ndim] = s;
      ++l.ndim;
    }
  }
  return l;
}

namespace {

constexpr int64_t kMinChunk = 1 << 14;

// y[i] = x[src(i)] (forward) or dx[src(i)] (=|+=) dy[i] (backward) over output rows, for any
// element type (the half types add in float and round once).
template <typename T>
void TransposeRows(const OpContext& ctx, const TransposeLayout& l, bool backward, GradReq req,
                   const T* src, T* dst, int64_t n) {
  using C = ComputeType<T>;
  const int64_t row = l.ndim > 0 ? l.out_dim[l.ndim - 1] : 1;
  const int64_t s = l.ndim > 0 ? l.in_stride[l.ndim - 1] : 1;
  ParallelChunks(
      n / std::max<int64_t>(row, 1), ChunksFor(ctx, n / kMinChunk),
      [&](int64_t, int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r) {
          const int64_t i = r * row, base = TransposeSource(l, i);
          if (s == 1 && req != GradReq::kAdd) {  // the last axis stays: rows move whole
            if (backward) {
              std::memcpy(dst + base, src + i, static_cast<size_t>(row) * sizeof(T));
            } else {
              std::memcpy(dst + i, src + base, static_cast<size_t>(row) * sizeof(T));
            }
          } else if (!backward) {
            for (int64_t k = 0; k < row; ++k) dst[i + k] = src[base + k * s];
          } else if (req == GradReq::kAdd) {
            for (int64_t k = 0; k < row; ++k) {
              T& d = dst[base + k * s];
              d = ConvertValue<T>(ConvertValue<C>(d) + ConvertValue<C>(src[i + k]));
            }
          } else {
            for (int64_t k = 0; k < row; ++k) dst[base + k * s] = src[i + k];
          }
        }
      },
      ctx.arena);
}

class Transpose : public Operator {
 public:
  explicit Transpose(const Attrs& attrs) : p_(TransposeParam::Parse(attrs)) {}

  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType) const override { return true; }  // it moves elements, of any type

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    Shape shape;
    TransposeLayout::Make(p_, in[0], &shape);
    AssignShape(out[0], shape, "transpose", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const TransposeLayout l = TransposeLayout::Make(p_, in[0].shape(), nullptr);
    COHORT_GPU_DISPATCH(ctx, TransposeGpu(ctx, l, false, GradReq::kWrite, in[0], out[0]));
    DispatchDType(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      TransposeRows(ctx, l, false, GradReq::kWrite, in[0].data<T>(), out[0].data<T>(),
                    out[0].size());
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const TransposeLayout l = TransposeLayout::Make(p_, in_grad[0].shape(), nullptr);
    COHORT_GPU_DISPATCH(ctx, TransposeGpu(ctx, l, true, req[0], out_grad[0], in_grad[0]));
    DispatchDType(in_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      TransposeRows(ctx, l, true, req[0], out_grad[0].data<T>(), in_grad[0].data<T>(),
                    out_grad[0].size());
    });
  }

 private:
  TransposeParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"transpose",
       "Permutes the dimensions of an array (by default, reverses them).",
       {"data"},
       "",
       {{"axes", "Shape(tuple)", "[]",
         "Target axis order. By default the axes will be inverted."}}},
  };
}

}  // namespace

void RegisterTranspose(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("transpose", [](const Attrs& a) { return std::make_unique<Transpose>(a); });
}

}  // namespace cohort::op
