// Elementwise arithmetic on the CPU: elemwise_add/_sub/_mul/_div on equal shapes, and the scalar
// forms (_plus_scalar, _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar),
// with elemwise.h's functions, in every numeric dtype (gradients: the floating types).
#include "operator/elemwise.h"

#include <type_traits>

#include "base/cpu_clones.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// elemwise.cu (Note [GPU kernels]); `in` is null unless backward reads the input.
void BinaryForwardGpu(const OpContext& ctx, BinaryKind kind, const NDArray& lhs, const NDArray& rhs,
                      const NDArray& out);
void BinaryBackwardGpu(const OpContext& ctx, BinaryKind kind, const NDArray& out_grad,
                       const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                       const std::vector<NDArray>& in_grad);
void ScalarForwardGpu(const OpContext& ctx, ScalarKind kind, double scalar, const NDArray& in,
                      const NDArray& out);
void ScalarBackwardGpu(const OpContext& ctx, ScalarKind kind, double scalar, GradReq req,
                       const NDArray& out_grad, const NDArray* in, const NDArray& in_grad);

namespace {

// One loop per kind and type, the kind a constant inside it (vectorized, no dispatch per
// element); half types compute in float (for float32 the conversions are no-ops).
template <typename T, BinaryKind kKind>
[[gnu::always_inline]] inline void BinaryLoop(int64_t n, const T* a, const T* b, T* y) {
  using C = ComputeType<T>;
  COHORT_ELEMENTWISE
  for (int64_t i = 0; i < n; ++i) {
    y[i] = ConvertValue<T>(BinaryValue<C>(kKind, ConvertValue<C>(a[i]), ConvertValue<C>(b[i])));
  }
}
template <typename T, ScalarKind kKind>
[[gnu::always_inline]] inline void ScalarLoop(int64_t n, const T* x, T scalar, T* y) {
  using C = ComputeType<T>;
  const C s = ConvertValue<C>(scalar);
  COHORT_ELEMENTWISE
  for (int64_t i = 0; i < n; ++i)
    y[i] = ConvertValue<T>(ScalarValue<C>(kKind, ConvertValue<C>(x[i]), s));
}
template <typename T>
[[gnu::always_inline]] inline void BinaryForwardTyped(BinaryKind kind, int64_t n, const T* a,
                                                      const T* b, T* y) {
  switch (kind) {
    case BinaryKind::kAdd: return BinaryLoop<T, BinaryKind::kAdd>(n, a, b, y);
    case BinaryKind::kSub: return BinaryLoop<T, BinaryKind::kSub>(n, a, b, y);
    case BinaryKind::kMul: return BinaryLoop<T, BinaryKind::kMul>(n, a, b, y);
    case BinaryKind::kDiv: return BinaryLoop<T, BinaryKind::kDiv>(n, a, b, y);
  }
}
template <typename T>
[[gnu::always_inline]] inline void ScalarForwardTyped(ScalarKind kind, int64_t n, const T* x, T s,
                                                      T* y) {
  switch (kind) {
    case ScalarKind::kPlus: return ScalarLoop<T, ScalarKind::kPlus>(n, x, s, y);
    case ScalarKind::kMinus: return ScalarLoop<T, ScalarKind::kMinus>(n, x, s, y);
    case ScalarKind::kRMinus: return ScalarLoop<T, ScalarKind::kRMinus>(n, x, s, y);
    case ScalarKind::kMul: return ScalarLoop<T, ScalarKind::kMul>(n, x, s, y);
    case ScalarKind::kDiv: return ScalarLoop<T, ScalarKind::kDiv>(n, x, s, y);
    case ScalarKind::kRDiv: return ScalarLoop<T, ScalarKind::kRDiv>(n, x, s, y);
    case ScalarKind::kMaximum: return ScalarLoop<T, ScalarKind::kMaximum>(n, x, s, y);
    case ScalarKind::kMinimum: return ScalarLoop<T, ScalarKind::kMinimum>(n, x, s, y);
    case ScalarKind::kEqual: return ScalarLoop<T, ScalarKind::kEqual>(n, x, s, y);
    case ScalarKind::kNotEqual: return ScalarLoop<T, ScalarKind::kNotEqual>(n, x, s, y);
    case ScalarKind::kGreater: return ScalarLoop<T, ScalarKind::kGreater>(n, x, s, y);
    case ScalarKind::kGreaterEqual: return ScalarLoop<T, ScalarKind::kGreaterEqual>(n, x, s, y);
    case ScalarKind::kLesser: return ScalarLoop<T, ScalarKind::kLesser>(n, x, s, y);
    case ScalarKind::kLesserEqual: return ScalarLoop<T, ScalarKind::kLesserEqual>(n, x, s, y);
  }
}

// The gradients likewise, the kind (and the side, the request) fixed outside the loop.
template <typename T, BinaryKind kKind>
[[gnu::always_inline]] inline void BinaryGradLoop(GradReq req, int side, int64_t n, const T* dy,
                                                  const T* a, const T* b, T* dx) {
  using C = ComputeType<T>;
  if (side == 0) {
    WriteGrad(req, n, dx, [&](int64_t i) { return BinaryGrad<T>(kKind, 0, C(dy[i]), a, b, i); });
  } else {
    WriteGrad(req, n, dx, [&](int64_t i) { return BinaryGrad<T>(kKind, 1, C(dy[i]), a, b, i); });
  }
}
template <typename T>
[[gnu::always_inline]] inline void BinaryGradTyped(BinaryKind kind, GradReq req, int side,
                                                   int64_t n, const T* dy, const T* a, const T* b,
                                                   T* dx) {
  switch (kind) {
    case BinaryKind::kAdd: return BinaryGradLoop<T, BinaryKind::kAdd>(req, side, n, dy, a, b, dx);
    case BinaryKind::kSub: return BinaryGradLoop<T, BinaryKind::kSub>(req, side, n, dy, a, b, dx);
    case BinaryKind::kMul: return BinaryGradLoop<T, BinaryKind::kMul>(req, side, n, dy, a, b, dx);
    case BinaryKind::kDiv: return BinaryGradLoop<T, BinaryKind::kDiv>(req, side, n, dy, a, b, dx);
  }
}
template <typename T, ScalarKind kKind>
[[gnu::always_inline]] inline void ScalarGradLoop(GradReq req, int64_t n, const T* dy, const T* x,
                                                  T s, T* dx) {
  using C = ComputeType<T>;
  const C sc = ConvertValue<C>(s);
  WriteGrad(req, n, dx, [&](int64_t i) { return ScalarGrad<T>(kKind, C(dy[i]), x, sc, i); });
}
template <typename T>
[[gnu::always_inline]] inline void ScalarGradTyped(ScalarKind kind, GradReq r, int64_t n,
                                                   const T* dy, const T* x, T s, T* dx) {
  switch (kind) {
    case ScalarKind::kPlus: return ScalarGradLoop<T, ScalarKind::kPlus>(r, n, dy, x, s, dx);
    case ScalarKind::kMinus: return ScalarGradLoop<T, ScalarKind::kMinus>(r, n, dy, x, s, dx);
    case ScalarKind::kRMinus: return ScalarGradLoop<T, ScalarKind::kRMinus>(r, n, dy, x, s, dx);
    case ScalarKind::kMul: return ScalarGradLoop<T, ScalarKind::kMul>(r, n, dy, x, s, dx);
    case ScalarKind::kDiv: return ScalarGradLoop<T, ScalarKind::kDiv>(r, n, dy, x, s, dx);
    case ScalarKind::kRDiv: return ScalarGradLoop<T, ScalarKind::kRDiv>(r, n, dy, x, s, dx);
    case ScalarKind::kMaximum: return ScalarGradLoop<T, ScalarKind::kMaximum>(r, n, dy, x, s, dx);
    case ScalarKind::kMinimum: return ScalarGradLoop<T, ScalarKind::kMinimum>(r, n, dy, x, s, dx);
    default:  // the comparisons: no gradient
      return ScalarGradLoop<T, ScalarKind::kEqual>(r, n, dy, x, s, dx);
  }
}

// Note [Half-type elementwise clones]
// float16 and bfloat16 loops compute each element in float and convert it both ways; compiled
// for the baseline ISA alone (SSE2) they ran elemwise_add of 1M bfloat16 values in 0.82-1.01 ms
// against float32's 0.53 on the Intel Xeon. The half types' loops are therefore compiled for
// AVX-512 and AVX2 too (base/cpu_clones.h), through a plain function per type and dispatcher
// (function templates take no target_clones): bfloat16 0.46-0.49 ms, float16 7.3-7.7 -> 1.9-2.1
// (op_bench, 3 alternating runs). The other types keep the one build, whose float32 loops are
// bound by memory.
#define COHORT_ELEMWISE_HALF_CLONES(T)                                                          \
  COHORT_CPU_CLONES void BinaryForwardHalf(BinaryKind kind, int64_t n, const T* a, const T* b,  \
                                           T* y) {                                              \
    BinaryForwardTyped<T>(kind, n, a, b, y);                                                    \
  }                                                                                             \
  COHORT_CPU_CLONES void ScalarForwardHalf(ScalarKind kind, int64_t n, const T* x, T s, T* y) { \
    ScalarForwardTyped<T>(kind, n, x, s, y);                                                    \
  }                                                                                             \
  COHORT_CPU_CLONES void BinaryGradHalf(BinaryKind kind, GradReq req, int side, int64_t n,      \
                                        const T* dy, const T* a, const T* b, T* dx) {           \
    BinaryGradTyped<T>(kind, req, side, n, dy, a, b, dx);                                       \
  }                                                                                             \
  COHORT_CPU_CLONES void ScalarGradHalf(ScalarKind kind, GradReq r, int64_t n, const T* dy,     \
                                        const T* x, T s, T* dx) {                               \
    ScalarGradTyped<T>(kind, r, n, dy, x, s, dx);                                               \
  }
COHORT_ELEMWISE_HALF_CLONES(float16)
COHORT_ELEMWISE_HALF_CLONES(bfloat16)
#undef COHORT_ELEMWISE_HALF_CLONES

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <typename T>
void BinaryForwardCpu(BinaryKind kind, int64_t n, const T* a, const T* b, T* y) {
  if constexpr (kIsHalf<T>) {
    BinaryForwardHalf(kind, n, a, b, y);
  } else {
    BinaryForwardTyped<T>(kind, n, a, b, y);
  }
}
template <typename T>
void ScalarForwardCpu(ScalarKind kind, int64_t n, const T* x, T s, T* y) {
  if constexpr (kIsHalf<T>) {
    ScalarForwardHalf(kind, n, x, s, y);
  } else {
    ScalarForwardTyped<T>(kind, n, x, s, y);
  }
}
template <typename T>
void BinaryGradCpu(BinaryKind kind, GradReq req, int side, int64_t n, const T* dy, const T* a,
                   const T* b, T* dx) {
  if constexpr (kIsHalf<T>) {
    BinaryGradHalf(kind, req, side, n, dy, a, b, dx);
  } else {
    BinaryGradTyped<T>(kind, req, side, n, dy, a, b, dx);
  }
}
template <typename T>
void ScalarGradCpu(ScalarKind kind, GradReq r, int64_t n, const T* dy, const T* x, T s, T* dx) {
  if constexpr (kIsHalf<T>) {
    ScalarGradHalf(kind, r, n, dy, x, s, dx);
  } else {
    ScalarGradTyped<T>(kind, r, n, dy, x, s, dx);
  }
}

class Binary : public Operator {
 public:
  Binary(BinaryKind kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader(name, attrs).Finish();
  }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    for (int pass = 0; pass < 2; ++pass) {  // any known shape determines the other two
      AssignShape(out[0], in[0], type(), "output");
      AssignShape(out[0], in[1], type(), "output");
      AssignShape(in[0], out[0], type(), "lhs");
      AssignShape(in[1], out[0], type(), "rhs");
    }
    return ShapeKnown(out[0]);
  }
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, BinaryForwardGpu(ctx, kind_, in[0], in[1], out[0]));
    DispatchArithmetic(type(), out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      BinaryForwardCpu<T>(kind_, out[0].size(), in[0].data<T>(), in[1].data<T>(), out[0].data<T>());
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, BinaryBackwardGpu(ctx, kind_, out_grad[0], in, req, in_grad));
    DispatchGradient(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dy = out_grad[0].data<T>();
      const int64_t n = out_grad[0].size();
      const T* a = BackwardNeedsInputs() ? in[0].data<T>() : nullptr;
      const T* b = BackwardNeedsInputs() ? in[1].data<T>() : nullptr;
      for (int side = 0; side < 2; ++side) {
        if (req[side] == GradReq::kNull) continue;
        BinaryGradCpu<T>(kind_, req[side], side, n, dy, a, b, in_grad[side].data<T>());
      }
    });
  }

  bool BackwardNeedsInputs() const override { return BinaryGradReadsInputs(kind_); }
  bool BackwardNeedsOutputs() const override { return false; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}, {1, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  BinaryKind kind_;
};

// add_n / ElementWiseSum: the sum of num_args arrays of one shape, as running elemwise_add
// (the same per-element BinaryValue on CPU and GPU); each input's gradient is the output's.
class AddN : public Operator {
 public:
  explicit AddN(const Attrs& attrs) {
    ParamReader r("add_n", attrs);
    num_args_ = static_cast<int>(r.Int("num_args"));
    r.Finish();
    COHORT_CHECK(num_args_ >= 1 && num_args_ <= 4096)
        << "add_n: num_args " << num_args_ << ", expected 1 to 4096";
  }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names;
    for (int i = 0; i < num_args_; ++i) names.push_back("arg" + std::to_string(i));
    return names;
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    for (int pass = 0; pass < 2; ++pass) {  // any known shape determines the others
      for (size_t i = 0; i < in.size(); ++i) {
        AssignShape(out[0], in[i], type(), "output");
        AssignShape(in[i], out[0], type(), "arg" + std::to_string(i));
      }
    }
    return ShapeKnown(out[0]);
  }
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const NDArray& y = out[0];
    if (in.size() == 1) {  // a copy: + 0
      COHORT_GPU_DISPATCH(ctx, ScalarForwardGpu(ctx, ScalarKind::kPlus, 0.0, in[0], y));
    } else {
      COHORT_GPU_DISPATCH(ctx, [&] {
        BinaryForwardGpu(ctx, BinaryKind::kAdd, in[0], in[1], y);
        for (size_t k = 2; k < in.size(); ++k) {
          BinaryForwardGpu(ctx, BinaryKind::kAdd, y, in[k], y);
        }
      }());
    }
    DispatchArithmetic(type(), y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if (in.size() == 1) {
        ScalarForwardCpu<T>(ScalarKind::kPlus, y.size(), in[0].data<T>(), T(0), y.data<T>());
        return;
      }
      BinaryForwardCpu<T>(BinaryKind::kAdd, y.size(), in[0].data<T>(), in[1].data<T>(),
                          y.data<T>());
      for (size_t k = 2; k < in.size(); ++k) {
        BinaryForwardCpu<T>(BinaryKind::kAdd, y.size(), y.data<T>(), in[k].data<T>(), y.data<T>());
      }
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, [&] {
      for (size_t k = 0; k < req.size(); ++k) {
        if (req[k] == GradReq::kNull) continue;
        BinaryBackwardGpu(ctx, BinaryKind::kAdd, out_grad[0], {NDArray(), NDArray()},
                          {req[k], GradReq::kNull}, {in_grad[k], NDArray()});
      }
    }());
    DispatchGradient(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (size_t k = 0; k < req.size(); ++k) {
        if (req[k] == GradReq::kNull) continue;
        BinaryGradCpu<T>(BinaryKind::kAdd, req[k], 0, out_grad[0].size(), out_grad[0].data<T>(),
                         nullptr, nullptr, in_grad[k].data<T>());
      }
    });
  }

  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  int num_args_ = 0;
};

class Scalar : public Operator {
 public:
  Scalar(ScalarKind kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader r(name, attrs);
    scalar_ = r.Float("scalar");
    r.Bool("is_int");  // MXNet 1.9 records whether the scalar was an integer
    r.Finish();
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ScalarForwardGpu(ctx, kind_, scalar_, in[0], out[0]));
    DispatchArithmetic(type(), out[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      ScalarForwardCpu<T>(kind_, out[0].size(), in[0].data<T>(), ConvertValue<T>(scalar_),
                          out[0].data<T>());
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(ctx,
                        ScalarBackwardGpu(ctx, kind_, scalar_, req[0], out_grad[0],
                                          BackwardNeedsInputs() ? &in[0] : nullptr, in_grad[0]));
    DispatchGradient(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      ScalarGradCpu<T>(kind_, req[0], out_grad[0].size(), out_grad[0].data<T>(),
                       BackwardNeedsInputs() ? in[0].data<T>() : nullptr, ConvertValue<T>(scalar_),
                       in_grad[0].data<T>());
    });
  }

  bool BackwardNeedsInputs() const override { return ScalarGradReadsInput(kind_); }
  bool BackwardNeedsOutputs() const override { return false; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  ScalarKind kind_;
  double scalar_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const std::vector<ParamSpec> scalar = {
      {"scalar", "double", "1", "Scalar input value"},
      {"is_int", "boolean", "1", "Indicate whether scalar input is int type"}};
  return {
      {"_div_scalar", "Divide an array with a scalar.", {"data"}, "", scalar},
      {"_equal_scalar", "1 where the input equals the scalar, else 0.", {"data"}, "", scalar},
      {"_greater_equal_scalar",
       "1 where the input is >= the scalar, else 0.",
       {"data"},
       "",
       scalar},
      {"_greater_scalar", "1 where the input is > the scalar, else 0.", {"data"}, "", scalar},
      {"_lesser_equal_scalar", "1 where the input is <= the scalar, else 0.", {"data"}, "", scalar},
      {"_lesser_scalar", "1 where the input is < the scalar, else 0.", {"data"}, "", scalar},
      {"_not_equal_scalar",
       "1 where the input differs from the scalar, else 0.",
       {"data"},
       "",
       scalar},
      {"_maximum_scalar", "Element-wise maximum of the input and a scalar.", {"data"}, "", scalar},
      {"_minimum_scalar", "Element-wise minimum of the input and a scalar.", {"data"}, "", scalar},
      {"_minus_scalar", "Subtracts a scalar from each element of the input.", {"data"}, "", scalar},
      {"_mul_scalar", "Multiply an array with a scalar.", {"data"}, "", scalar},
      {"_plus_scalar", "Adds a scalar to each element of the input.", {"data"}, "", scalar},
      {"_rdiv_scalar", "Divides a scalar by each element of the input.", {"data"}, "", scalar},
      {"_rminus_scalar",
       "Subtracts each element of the input from a scalar.",
       {"data"},
       "",
       scalar},
      {"add_n",
       "Adds all input arguments element-wise.",
       {"args"},
       "num_args",
       {{"num_args", "int", kRequired, "Number of inputs to be summed."}}},
      {"elemwise_add", "Adds arguments element-wise.", {"lhs", "rhs"}, "", {}},
      {"elemwise_div", "Divides arguments element-wise.", {"lhs", "rhs"}, "", {}},
      {"elemwise_mul", "Multiplies arguments element-wise.", {"lhs", "rhs"}, "", {}},
      {"elemwise_sub", "Subtracts arguments element-wise.", {"lhs", "rhs"}, "", {}},
  };
}

}  // namespace

void RegisterElemwise(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  const std::pair<const char*, BinaryKind> binary[] = {{"elemwise_add", BinaryKind::kAdd},
                                                       {"elemwise_sub", BinaryKind::kSub},
                                                       {"elemwise_mul", BinaryKind::kMul},
                                                       {"elemwise_div", BinaryKind::kDiv}};
  for (auto [name, kind] : binary) {
    std::string n = name;
    r.Register(n, [k = kind, n](const Attrs& a) { return std::make_unique<Binary>(k, n, a); });
  }
  for (auto [alias, name] : {std::pair{"_Plus", "elemwise_add"},
                             {"_plus", "elemwise_add"},
                             {"_add", "elemwise_add"},
                             {"_Minus", "elemwise_sub"},
                             {"_minus", "elemwise_sub"},
                             {"_sub", "elemwise_sub"},
                             {"_Mul", "elemwise_mul"},
                             {"_mul", "elemwise_mul"},
                             {"_Div", "elemwise_div"},
                             {"_div", "elemwise_div"}}) {
    r.Alias(alias, name);
  }
  r.Register("add_n", [](const Attrs& a) { return std::make_unique<AddN>(a); });
  r.Alias("ElementWiseSum", "add_n");
  const std::pair<const char*, ScalarKind> scalar[] = {
      {"_plus_scalar", ScalarKind::kPlus},
      {"_minus_scalar", ScalarKind::kMinus},
      {"_rminus_scalar", ScalarKind::kRMinus},
      {"_mul_scalar", ScalarKind::kMul},
      {"_div_scalar", ScalarKind::kDiv},
      {"_rdiv_scalar", ScalarKind::kRDiv},
      {"_maximum_scalar", ScalarKind::kMaximum},
      {"_minimum_scalar", ScalarKind::kMinimum},
      {"_equal_scalar", ScalarKind::kEqual},
      {"_not_equal_scalar", ScalarKind::kNotEqual},
      {"_greater_scalar", ScalarKind::kGreater},
      {"_greater_equal_scalar", ScalarKind::kGreaterEqual},
      {"_lesser_scalar", ScalarKind::kLesser},
      {"_lesser_equal_scalar", ScalarKind::kLesserEqual}};
  for (auto [name, kind] : scalar) {
    std::string n = name;
    r.Register(n, [k = kind, n](const Attrs& a) { return std::make_unique<Scalar>(k, n, a); });
  }
  for (auto [alias, name] : {std::pair{"_PlusScalar", "_plus_scalar"},
                             {"_MinusScalar", "_minus_scalar"},
                             {"_RMinusScalar", "_rminus_scalar"},
                             {"_MulScalar", "_mul_scalar"},
                             {"_DivScalar", "_div_scalar"},
                             {"_MaximumScalar", "_maximum_scalar"},
                             {"_MinimumScalar", "_minimum_scalar"},
                             {"_RDivScalar", "_rdiv_scalar"},
                             {"_EqualScalar", "_equal_scalar"},
                             {"_NotEqualScalar", "_not_equal_scalar"},
                             {"_GreaterScalar", "_greater_scalar"},
                             {"_GreaterEqualScalar", "_greater_equal_scalar"},
                             {"_LesserScalar", "_lesser_scalar"},
                             {"_LesserEqualScalar", "_lesser_equal_scalar"}}) {
    r.Alias(alias, name);
  }
}

}  // namespace cohort::op
