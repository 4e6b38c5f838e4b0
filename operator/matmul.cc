// dot and batch_dot on the CPU: matmul.h's products with OpenBLAS, the matrices of a batch
// split over the device's arena (Note [Kernel threads]).
#include "operator/matmul.h"

#include "ndarray/convert.h"
#include "operator/common/gemm_lowp.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// matmul.cu (Note [GPU kernels]).
void BatchedGemmGpu(const OpContext& ctx, const BatchedGemm& g);

MatmulParam MatmulParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  MatmulParam p;
  p.transpose_a = r.Bool("transpose_a");
  p.transpose_b = r.Bool("transpose_b");
  r.Enum("forward_stype");
  r.Finish();
  return p;
}

MatmulDims MatmulDimsOf(bool batched, const MatmulParam& p, const Shape& lhs, const Shape& rhs,
                        Shape* out) {
  const char* op = batched ? "batch_dot" : "dot";
  MatmulDims d;
  // The output's axes (at most lhs's and rhs's together), in a fixed array: Forward and Backward
  // call this every step and allocate nothing.
  int64_t dims[2 * Shape::kMaxNdim];
  int count = 0;
  if (batched) {
    COHORT_CHECK(lhs.ndim() >= 3 && lhs.ndim() == rhs.ndim())
        << op << ": lhs " << lhs << " and rhs " << rhs << " must both have 3 or more axes";
    const int n = lhs.ndim();
    for (int a = 0; a < n - 2; ++a) {
      COHORT_CHECK_EQ(lhs[a], rhs[a])
          << op << ": batch axes of lhs " << lhs << " and rhs " << rhs << " differ";
      d.batch *= lhs[a];
      dims[count++] = lhs[a];
    }
    d.m = p.transpose_a ? lhs[n - 1] : lhs[n - 2];
    d.k = p.transpose_a ? lhs[n - 2] : lhs[n - 1];
    const int64_t rk = p.transpose_b ? rhs[n - 1] : rhs[n - 2];
    d.n = p.transpose_b ? rhs[n - 2] : rhs[n - 1];
    COHORT_CHECK_EQ(d.k, rk) << op << ": inner sizes of lhs " << lhs << " and rhs " << rhs
                             << " differ (transpose_a " << p.transpose_a << ", transpose_b "
                             << p.transpose_b << ")";
    dims[count++] = d.m;
    dims[count++] = d.n;
  } else {
    COHORT_CHECK(lhs.ndim() >= 1 && rhs.ndim() >= 1)
        << op << ": lhs " << lhs << " and rhs " << rhs << " must have an axis";
    const int la = p.transpose_a ? 0 : lhs.ndim() - 1;  // lhs's contracted axis
    const int ra = p.transpose_b ? rhs.ndim() - 1 : 0;
    COHORT_CHECK_EQ(lhs[la], rhs[ra])
        << op << ": inner sizes of lhs " << lhs << " and rhs " << rhs << " differ (transpose_a "
        << p.transpose_a << ", transpose_b " << p.transpose_b << ")";
    d.k = lhs[la];
    d.m = lhs.Size() / std::max<int64_t>(d.k, 1);
    d.n = rhs.Size() / std::max<int64_t>(d.k, 1);
    for (int a = 0; a < lhs.ndim(); ++a) {
      if (a != la) dims[count++] = lhs[a];
    }
    for (int a = 0; a < rhs.ndim(); ++a) {
      if (a != ra) dims[count++] = rhs[a];
    }
    if (count == 0) dims[count++] = 1;  // vector · vector: MXNet gives shape (1,)
  }
  COHORT_CHECK(count <= Shape::kMaxNdim)
      << op << ": output of " << lhs << " and " << rhs << " has too many axes";
  if (out) *out = Shape(std::span<const int64_t>(dims, count));
  return d;
}

namespace {

// One float16/bfloat16 product: summed in a float32 scratch, written back in T (onto c for
// beta 1) in the same pass.
template <typename T>
void LowPrecisionGemm(const BatchedGemm& g, int64_t i) {
  const T* a = static_cast<const T*>(g.a) + i * g.stride_a;
  const T* b = static_cast<const T*>(g.b) + i * g.stride_b;
  T* c = static_cast<T*>(g.c) + i * g.stride_c;
  float* acc = Scratch(static_cast<size_t>(g.m * g.n));
  GemmLowPrecision(g.dtype, g.ta, g.tb, g.m, g.n, g.k, a, g.ta ? g.m : g.k, b, g.tb ? g.k : g.n,
                   0.0f, acc, g.n);
  // Rounded by convert.h's vectorised loops (Note [Low-precision write-back]).
  StoreNarrowed(acc, g.m * g.n, g.dtype, c, g.beta != 0.0f);
}

void RunGemm(const OpContext& ctx, const BatchedGemm& g) {
  COHORT_GPU_DISPATCH(ctx, BatchedGemmGpu(ctx, g));
  ParallelChunks(
      g.batch, ChunksFor(ctx, g.batch),
      [&](int64_t, int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) {
          if (g.dtype == DType::kFloat16) {
            LowPrecisionGemm<float16>(g, i);
          } else if (g.dtype == DType::kBFloat16) {
            LowPrecisionGemm<bfloat16>(g, i);
          } else {
            Gemm(g.ta, g.tb, g.m, g.n, g.k, 1.0f, static_cast<const float*>(g.a) + i * g.stride_a,
                 static_cast<const float*>(g.b) + i * g.stride_b, g.beta,
                 static_cast<float*>(g.c) + i * g.stride_c);
          }
        }
      },
      ctx.arena);
}

class Matmul : public Operator {
 public:
  Matmul(bool batched, const Attrs& attrs)
      : batched_(batched), p_(MatmulParam::Parse(batched ? "batch_dot" : "dot", attrs)) {}

  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0]) || !ShapeKnown(in[1])) return false;
    Shape shape;
    MatmulDimsOf(batched_, p_, in[0], in[1], &shape);
    AssignShape(out[0], shape, type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const MatmulDims d = MatmulDimsOf(batched_, p_, in[0].shape(), in[1].shape(), nullptr);
    BatchedGemm g = MatmulForward(p_, d, in[0].raw_data(), in[1].raw_data(), out[0].raw_data());
    g.dtype = in[0].dtype();
    RunGemm(ctx, g);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const MatmulDims d = MatmulDimsOf(batched_, p_, in[0].shape(), in[1].shape(), nullptr);
    const void* dout = out_grad[0].raw_data();
    if (req[0] != GradReq::kNull) {
      BatchedGemm g =
          MatmulLhsGrad(p_, d, dout, in[1].raw_data(), in_grad[0].raw_data(), BetaFor(req[0]));
      g.dtype = in[0].dtype();
      RunGemm(ctx, g);
    }
    if (req[1] != GradReq::kNull) {
      BatchedGemm g =
          MatmulRhsGrad(p_, d, in[0].raw_data(), dout, in_grad[1].raw_data(), BetaFor(req[1]));
      g.dtype = in[0].dtype();
      RunGemm(ctx, g);
    }
  }
  // Mixed precision's attention products (issue 37): float16 and bfloat16 sum in float32.
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  }

 private:
  bool batched_;
  MatmulParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const std::vector<ParamSpec> params = {
      {"transpose_a", "boolean", "0", "If true then transpose the first input before dot."},
      {"transpose_b", "boolean", "0", "If true then transpose the second input before dot."},
      {"forward_stype", "{None, 'default'}", "None",
       "The storage type of the output: dense (Cohort's arrays are dense)."}};
  return {
      {"batch_dot", "Batchwise dot product.", {"lhs", "rhs"}, "", params},
      {"dot", "Dot product of two arrays.", {"lhs", "rhs"}, "", params},
  };
}

}  // namespace

void RegisterMatmul(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("dot", [](const Attrs& a) { return std::make_unique<Matmul>(false, a); });
  r.Register("batch_dot", [](const Attrs& a) { return std::make_unique<Matmul>(true, a); });
}

}  // namespace cohort::op
