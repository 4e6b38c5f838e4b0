// FullyConnected: out = data · weightᵀ + bias (MXNet's FullyConnected), on OpenBLAS and oneDNN;
// float16 and bfloat16 layers sum their products in float32 (Note [Low-precision GEMM]).
#include "operator/fully_connected.h"

#include <algorithm>

#include "ndarray/convert.h"
#include "operator/common/gemm_lowp.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// fully_connected.cu (Note [GPU kernels]); b is null without bias.
void FullyConnectedForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& w,
                              const NDArray* b, const NDArray& y, int64_t rows, int64_t k,
                              int64_t h);
void FullyConnectedBackwardGpu(const OpContext& ctx, const NDArray& dy, const NDArray& x,
                               const NDArray& w, const std::vector<GradReq>& req,
                               const std::vector<NDArray>& grad, int64_t rows, int64_t k,
                               int64_t h);

FullyConnectedParam FullyConnectedParam::Parse(const Attrs& attrs) {
  ParamReader r("FullyConnected", attrs);
  FullyConnectedParam p;
  p.num_hidden = r.Int("num_hidden");
  p.no_bias = r.Bool("no_bias");
  p.flatten = r.Bool("flatten");
  r.Finish();
  COHORT_CHECK_GT(p.num_hidden, 0) << "FullyConnected: num_hidden";
  return p;
}

Attrs FullyConnectedParam::ToAttrs() const {
  return {{"num_hidden", AttrText(num_hidden)},
          {"no_bias", AttrText(no_bias)},
          {"flatten", AttrText(flatten)}};
}

namespace {

// A float32 value written back to T: onto the old value for kAdd.
template <typename T>
T Store(float value, const T* old, bool add) {
  return T(add ? value + static_cast<float>(*old) : value);
}

// Note [Low-precision write-back]
// A low-precision layer's float32 results are rounded into its arrays by ndarray/convert.h's
// loops, compiled for AVX-512 and AVX2, not by a loop of T's conversions here, which the
// compiler vectorises only to the baseline ISA (SSE2). On the Intel Xeon (op_bench, bfloat16,
// medians of 4 alternating runs, old -> new): FullyConnected 4096x128 -> 512 forward 5.2 -> 4.55
// ms, backward 9.4 -> 8.65; 4096x512 -> 128 unchanged (4.97, 9.5 -> 9.3: a small output);
// batch_dot 64x128x32 · 64x128x32ᵀ forward 1.29 -> 0.94, backward 1.83 -> 1.61; the GPT's
// bfloat16 step (2 devices, 30 batches) 16.5 -> 18.4 thousand tokens/s. The values are the same:
// each sum (with the bias, or onto the old value for kAdd) is rounded once (StoreNarrowed).

// Note [Low-precision row blocks]
// Where products widen (Note [Low-precision GEMM]), the layer widens its data and output
// gradient a block of rows at a time into scratch that stays in L2 (128K floats), multiplies it,
// and writes the block's results back at once, instead of widening all of each into float32
// arrays twice its size in memory first: the GEMM then reads floats a cache level closer, and
// the bytes moved are the half-type arrays'. The weight, read by every block, is widened once
// (LowPrecisionOperandOf). dW sums its blocks' products into float32 scratch (beta 1 after the
// first block) and rounds once. Where bfloat16 products run on oneDNN's matmul nothing widens and
// a chunk is one block.
// op_bench on one core of the Intel Xeon (bfloat16, medians of 5 alternating runs, before ->
// after, forward and backward ms; float32 beside): 4096x512 -> 128 4.86 -> 4.13, 8.74 -> 7.71
// (float32 3.93, 7.2); 4096x128 -> 384 3.58 -> 3.13, 6.64 -> 6.13 (3.4, 6.95); 4096x128 -> 512
// 4.63 -> 4.27, 8.63 -> 8.31 (4.2-4.8, 8.3-9.4). Blocks of 128K floats were at least as fast as
// 64K and 32K in noisier runs of the first two shapes. A block is at least 256 rows: the GEMM
// packs the weight again in each call, and a wide layer's blocks of 128K floats were too few rows
// to pay for it (4096x512 -> 2048: 64-row blocks forward 75-94 ms, 256-row 62-79, 512-row
// 62-67, all 4096 rows at once 64-80; 3 alternating runs).
constexpr int64_t kBlockFloats = int64_t{1} << 17;
constexpr int64_t kMinBlockRows = 256;

int64_t RowsPerBlock(int64_t widest) {
  return std::max<int64_t>(kMinBlockRows, kBlockFloats / std::max<int64_t>(widest, 1));
}

// The n values from `a` widened into the thread's scratch `slot`.
template <typename T>
LowPrecisionOperand WidenedBlock(const T* a, int64_t n, int slot) {
  float* out = Scratch(static_cast<size_t>(n), slot);
  WidenToFloat(DTypeOf<T>::value, a, n, out);
  return {DTypeOf<T>::value, a, out};
}

template <typename T>
LowPrecisionOperand Unwidened(const T* a) {
  return {DTypeOf<T>::value, a, nullptr};
}

// fn(first_row, rows_in_block, operand) over the blocks of rows of `a` (rows x cols), each
// widened into scratch slot 2 where products widen (blocks of RowsPerBlock(widest)), else one
// block a chunk of the array itself; the chunks run in parallel.
template <typename T, typename Fn>
void ForEachRowBlock(const OpContext& ctx, bool blocks, int64_t rows, int64_t cols, int64_t widest,
                     const T* a, const Fn& fn) {
  ParallelChunks(
      rows, ChunksFor(ctx, rows),
      [&](int64_t, int64_t begin, int64_t end) {
        const int64_t block = blocks ? RowsPerBlock(widest) : end - begin;
        for (int64_t r0 = begin; r0 < end; r0 += block) {
          const int64_t m = std::min(block, end - r0);
          fn(r0, m, blocks ? WidenedBlock(a + r0 * cols, m * cols, 2) : Unwidened(a + r0 * cols));
        }
      },
      ctx.arena);
}

// The float16/bfloat16 layer: each block's products summed in a float32 scratch, bias added and
// the result written in T in the same pass.
template <typename T>
void ForwardLowPrecision(const OpContext& ctx, const NDArray& xa, const NDArray& wa,
                         const NDArray* ba, const NDArray& ya, int64_t rows, int64_t k, int64_t h) {
  const bool blocks = ProductsWidenHere(xa.dtype());
  const LowPrecisionOperand w = LowPrecisionOperandOf(ctx, wa, 5);
  const T* x = xa.data<T>();
  const T* b = ba ? ba->data<T>() : nullptr;
  T* y = ya.data<T>();
  ForEachRowBlock(ctx, blocks, rows, k, std::max(k, h), x,
                  [&](int64_t r0, int64_t m, const LowPrecisionOperand& xb) {
                    float* acc = Scratch(static_cast<size_t>(m * h));
                    GemmLowPrecision(false, true, m, h, k, xb, k, w, k, 0.0f, acc, h);
                    if (b) {
                      for (int64_t r = 0; r < m; ++r) AddWidened(xa.dtype(), b, h, acc + r * h);
                    }
                    StoreNarrowed(acc, m * h, xa.dtype(), y + r0 * h, false);
                  });
}

template <typename T>
void BackwardLowPrecision(const OpContext& ctx, const NDArray& dya, const NDArray& xa,
                          const NDArray& wa, const std::vector<GradReq>& req,
                          const std::vector<NDArray>& grad, int64_t rows, int64_t k, int64_t h) {
  const DType dtype = dya.dtype();
  const bool blocks = ProductsWidenHere(dtype);
  const T* dy = dya.data<T>();
  const T* x = xa.data<T>();
  if (req[0] != GradReq::kNull) {  // ddata = dy · W
    const LowPrecisionOperand w = LowPrecisionOperandOf(ctx, wa, 5);
    T* dx = grad[0].data<T>();
    const bool add = req[0] == GradReq::kAdd;
    ForEachRowBlock(ctx, blocks, rows, h, std::max(k, h), dy,
                    [&](int64_t r0, int64_t m, const LowPrecisionOperand& dyb) {
                      float* acc = Scratch(static_cast<size_t>(m * k));
                      GemmLowPrecision(false, false, m, k, h, dyb, h, w, k, 0.0f, acc, k);
                      StoreNarrowed(acc, m * k, dtype, dx + r0 * k, add);
                    });
  }
  if (req[1] != GradReq::kNull) {  // dW = dyᵀ · data, by chunks of hidden units
    T* dw = grad[1].data<T>();
    const bool add = req[1] == GradReq::kAdd;
    ParallelChunks(
        h, ChunksFor(ctx, h),
        [&](int64_t, int64_t begin, int64_t end) {
          const int64_t units = end - begin;
          float* acc = Scratch(static_cast<size_t>(units * k));
          if (!blocks) {
            GemmLowPrecision(true, false, units, k, rows, Unwidened(dy + begin), h, Unwidened(x),
                             k, 0.0f, acc, k);
          }
          if (blocks && rows == 0) std::fill_n(acc, units * k, 0.0f);  // an empty sum
          const int64_t block = RowsPerBlock(std::max(k, h));
          for (int64_t r0 = 0; blocks && r0 < rows; r0 += block) {
            const int64_t m = std::min(block, rows - r0);
            // dy's rows of the block, this chunk's columns, dense (m x units).
            float* dyb = Scratch(static_cast<size_t>(m * units), 2);
            if (units == h) {
              WidenToFloat(dtype, dy + r0 * h, m * h, dyb);
            } else {
              for (int64_t r = 0; r < m; ++r) {
                WidenToFloat(dtype, dy + (r0 + r) * h + begin, units, dyb + r * units);
              }
            }
            const LowPrecisionOperand xb = WidenedBlock(x + r0 * k, m * k, 3);
            Gemm(true, false, units, k, m, 1.0f, dyb, units, xb.widened, k, r0 == 0 ? 0.0f : 1.0f,
                 acc, k);
          }
          StoreNarrowed(acc, units * k, dtype, dw + begin * k, add);
        },
        ctx.arena);
  }
  if (req.size() > 2 && req[2] != GradReq::kNull) {  // db = Σ_rows dy, summed in float32
    float* sum = Scratch(static_cast<size_t>(h), 1);
    std::fill_n(sum, h, 0.0f);
    for (int64_t r = 0; r < rows; ++r) AddWidened(dtype, dy + r * h, h, sum);
    T* db = grad[2].data<T>();
    for (int64_t j = 0; j < h; ++j) db[j] = Store(sum[j], db + j, req[2] == GradReq::kAdd);
  }
}

class FullyConnected : public Operator {
 public:
  explicit FullyConnected(const Attrs& attrs) : p_(FullyConnectedParam::Parse(attrs)) {}

  std::vector<std::string> ListArguments() const override {
    if (p_.no_bias) return {"data", "weight"};
    return {"data", "weight", "bias"};
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    Shape& d = in[0];
    if (d.ndim() == 0) return false;
    // A partly known input (MXNet's infer_shape_partial): an RNN cell's begin state is (0, hidden)
    // until the output, known from the op it is added to, gives the batch (as MXNet's
    // FullyConnectedShape takes it).
    int64_t k = 1;
    Shape o;
    if (p_.flatten) {
      for (int i = 1; i < d.ndim(); ++i) k = DimKnown(d[i]) && DimKnown(k) ? k * d[i] : 0;
      o = Shape({d[0], p_.num_hidden});
    } else {
      k = d[d.ndim() - 1];
      o = d;
      o[d.ndim() - 1] = p_.num_hidden;
    }
    if (DimKnown(k)) AssignShape(in[1], Shape({p_.num_hidden, k}), "FullyConnected", "weight");
    if (!p_.no_bias) AssignShape(in[2], Shape({p_.num_hidden}), "FullyConnected", "bias");
    AssignShape(out[0], o, "FullyConnected", "output");
    if (ShapeKnown(d)) return true;
    const Shape& known = out[0];  // the batch dims back from the output
    Shape back = d;
    if (p_.flatten) {
      back[0] = known[0];
    } else {
      for (int i = 0; i + 1 < d.ndim(); ++i) back[i] = known[i];
    }
    AssignShape(d, back, "FullyConnected", "data");
    return ShapeKnown(d);
  }

  // Rows of the batch in parallel chunks (Note [Kernel threads]).
  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const int64_t k = in[1].shape()[1];
    const int64_t rows = in[0].size() / k;
    COHORT_GPU_DISPATCH(
        ctx, FullyConnectedForwardGpu(ctx, in[0], in[1], p_.no_bias ? nullptr : &in[2], out[0],
                                      rows, k, p_.num_hidden));
    if (in[0].dtype() != DType::kFloat32) {
      DispatchLowPrecision(in[0].dtype(), [&](auto tag) {
        ForwardLowPrecision<decltype(tag)>(ctx, in[0], in[1], p_.no_bias ? nullptr : &in[2], out[0],
                                           rows, k, p_.num_hidden);
      });
      return;
    }
    const float* x = F(in[0]);
    const float* w = F(in[1]);
    const float* b = p_.no_bias ? nullptr : F(in[2]);
    float* y = F(out[0]);
    const int64_t h = p_.num_hidden;
    ParallelChunks(
        rows, ChunksFor(ctx, rows),
        [&](int64_t, int64_t begin, int64_t end) {
          Gemm(false, true, end - begin, h, k, 1.0f, x + begin * k, w, 0.0f, y + begin * h);
          if (!b) return;
          for (int64_t r = begin; r < end; ++r) {
            for (int64_t j = 0; j < h; ++j) y[r * h + j] += b[j];
          }
        },
        ctx.arena);
  }

  // ddata by row chunks; dW by chunks of its rows (hidden units), so no partial sums.
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const int64_t k = in[1].shape()[1];
    const int64_t rows = in[0].size() / k;
    const int64_t h = p_.num_hidden;
    COHORT_GPU_DISPATCH(
        ctx, FullyConnectedBackwardGpu(ctx, out_grad[0], in[0], in[1], req, in_grad, rows, k, h));
    if (in[0].dtype() != DType::kFloat32) {
      DispatchLowPrecision(in[0].dtype(), [&](auto tag) {
        BackwardLowPrecision<decltype(tag)>(ctx, out_grad[0], in[0], in[1], req, in_grad, rows, k,
                                            h);
      });
      return;
    }
    const float* dy = F(out_grad[0]);
    if (req[0] != GradReq::kNull) {  // ddata = dy · W
      const float* w = F(in[1]);
      float* dx = F(in_grad[0]);
      ParallelChunks(
          rows, ChunksFor(ctx, rows),
          [&](int64_t, int64_t begin, int64_t end) {
            Gemm(false, false, end - begin, k, h, 1.0f, dy + begin * h, w, BetaFor(req[0]),
                 dx + begin * k);
          },
          ctx.arena);
    }
    if (req[1] != GradReq::kNull) {  // dW = dyᵀ · data
      const float* x = F(in[0]);
      float* dw = F(in_grad[1]);
      ParallelChunks(
          h, ChunksFor(ctx, h),
          [&](int64_t, int64_t begin, int64_t end) {
            Gemm(true, false, end - begin, k, rows, 1.0f, dy + begin, h, x, k, BetaFor(req[1]),
                 dw + begin * k, k);
          },
          ctx.arena);
    }
    if (!p_.no_bias && req[2] != GradReq::kNull) {  // db = Σ_rows dy
      FullyConnectedBiasGradRows(dy, rows, h, F(in_grad[2]), req[2] == GradReq::kAdd);
    }
  }

  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  // Mixed precision's layers (issue 37): float16 and bfloat16 sum their products in float32.
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  }

 private:
  // fn(T{}) for float16 or bfloat16.
  template <typename Fn>
  static void DispatchLowPrecision(DType dtype, const Fn& fn) {
    if (dtype == DType::kFloat16) return fn(float16{});
    COHORT_CHECK(dtype == DType::kBFloat16) << "FullyConnected: " << dtype << " arrays";
    fn(bfloat16{});
  }

  FullyConnectedParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"FullyConnected",
       "Applies a linear transformation: :math:`Y = XW^T + b`.",
       {"data", "weight", "bias"},
       "",
       {{"num_hidden", "int", kRequired, "Number of hidden nodes of the output."},
        {"no_bias", "boolean", "0", "Whether to disable bias parameter."},
        {"flatten", "boolean", "1",
         "Whether to collapse all but the first axis of the input data tensor."}}},
  };
}

}  // namespace

void RegisterFullyConnected(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("FullyConnected", [](const Attrs& a) { return std::make_unique<FullyConnected>(a); });
}

}  // namespace cohort::op
