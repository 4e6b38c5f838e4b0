// Cast on the CPU: cast.h's conversion over the elements, split over the arena's threads.
#include "operator/cast.h"

#include <algorithm>

#include "ndarray/convert.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

CastParam CastParam::Parse(const Attrs& attrs, const std::string& op) {
  ParamReader r(op, attrs);
  CastParam p;
  p.dtype = ParseDType(r.Enum("dtype"));
  r.Finish();
  return p;
}

namespace {

// dst (=|+=) src converted, over the arena's threads.
void CastCpu(const OpContext& ctx, const NDArray& src, const NDArray& dst, bool add) {
  const int64_t n = src.size();
  const DType from = src.dtype(), to = dst.dtype();
  auto half = [](DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; };
  if (!add && ((from == DType::kFloat32 && half(to)) || (half(from) && to == DType::kFloat32))) {
    // Mixed precision's casts: the vectorised loops (operator/common/convert.h), same values.
    const size_t in_size = DTypeSize(from), out_size = DTypeSize(to);
    const char* x = static_cast<const char*>(src.raw_data());
    char* y = static_cast<char*>(dst.raw_data());
    ParallelChunks(
        n, ChunksFor(ctx, n / (1 << 14)),
        [&](int64_t, int64_t begin, int64_t end) {
          if (from == DType::kFloat32) {
            NarrowFromFloat(reinterpret_cast<const float*>(x) + begin, end - begin, to,
                            y + begin * out_size);
          } else {
            WidenToFloat(from, x + begin * in_size, end - begin,
                         reinterpret_cast<float*>(y) + begin);
          }
        },
        ctx.arena);
    return;
  }
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

// dst (=|+=) src converted, on the side the context names.
void CastOnContext(const OpContext& ctx, const NDArray& src, const NDArray& dst, bool add) {
  COHORT_GPU_DISPATCH(ctx, CastGpu(ctx, src, dst, add));
  CastCpu(ctx, src, dst, add);
}

class Cast : public Operator {
 public:
  explicit Cast(const Attrs& attrs, const std::string& op = "Cast")
      : p_(CastParam::Parse(attrs, op)) {}

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
    CastOnContext(ctx, in[0], out[0], false);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    CastOnContext(ctx, out_grad[0], in_grad[0], req[0] == GradReq::kAdd);
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 protected:
  CastParam p_;
};

// Note [AMP casts]
// amp_cast and amp_multicast are the casts mixed precision inserts (MXNet's AMP): they convert
// only between the floating types AMP works in (float32, float16, bfloat16) and pass any other
// dtype through unchanged (int32 indices, float64). amp_multicast makes its floating inputs one
// type by MXNet 1.9.1's rule: float32 if any input is, else the first input's type; with
// cast_narrow, the last float16 or bfloat16 input's type, else float32. Gradients go back to
// each input's dtype.
bool IsAmpFloat(std::optional<DType> t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

// Cast's kernels and gradient; its output type only where the input is one of AMP's floats.
class AmpCast : public Cast {
 public:
  explicit AmpCast(const Attrs& attrs) : Cast(attrs, "amp_cast") {}

  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    if (!in[0]) return false;
    AssignType(out[0], IsAmpFloat(in[0]) ? p_.dtype : *in[0], type(), "output");
    return true;
  }
};

class AmpMultiCast : public Operator {
 public:
  explicit AmpMultiCast(const Attrs& attrs) {
    ParamReader r("amp_multicast", attrs);
    num_ = static_cast<int>(r.Int("num_outputs"));
    cast_narrow_ = r.OptionalBool("cast_narrow").value_or(false);
    r.Finish();
    COHORT_CHECK_GE(num_, 1) << "amp_multicast: num_outputs";
  }

  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names;
    for (int i = 0; i < num_; ++i) names.push_back("data_" + std::to_string(i));
    return names;
  }
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names;
    for (int i = 0; i < num_; ++i) names.push_back("output" + std::to_string(i));
    return names;
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    bool known = true;
    for (int i = 0; i < num_; ++i) {
      AssignShape(out[i], in[i], type(), "output " + std::to_string(i));
      AssignShape(in[i], out[i], type(), "input " + std::to_string(i));
      known = known && ShapeKnown(in[i]);
    }
    return known;
  }
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    // MXNet 1.9.1's AMPMultiCastType (Note [AMP casts]), its order of tests kept.
    std::optional<DType> common = cast_narrow_ ? DType::kFloat32 : in[0];
    for (int i = 0; i < num_; ++i) {
      auto has = [&](DType t) { return in[i] == t || out[i] == t; };
      if (!cast_narrow_ && has(DType::kFloat32)) {
        common = DType::kFloat32;
      } else if (cast_narrow_ && has(DType::kFloat16)) {
        common = DType::kFloat16;
      } else if (cast_narrow_ && has(DType::kBFloat16)) {
        common = DType::kBFloat16;
      }
    }
    bool known = true;
    for (int i = 0; i < num_; ++i) {
      if (in[i]) AssignType(out[i], IsAmpFloat(in[i]) ? common : in[i], type(), "output");
      known = known && in[i].has_value();
    }
    return known;
  }
  bool TakesDType(DType) const override { return true; }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    for (int i = 0; i < num_; ++i) CastOnContext(ctx, in[i], out[i], false);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    for (int i = 0; i < num_; ++i) {
      if (req[i] != GradReq::kNull) {
        CastOnContext(ctx, out_grad[i], in_grad[i], req[i] == GradReq::kAdd);
      }
    }
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  int num_ = 1;
  bool cast_narrow_ = false;
};

// Note [Widening add fusion]
// Under mixed precision a transformer's residual adds read a float32 stream and a layer's
// bfloat16 output, which the AMP pass widens by an amp_cast of its own (MXNet's widest-type
// rule): a pass that writes the float32 copy the add reads back, and in backward one that
// narrows the add's float32 gradient. Binding (Executor, unless COHORT_FUSE_OPS=0) replaces an
// elemwise_add whose inputs include amp_casts to float32 of float16/bfloat16 arrays, each read
// by the add alone and no graph output, with one _widening_add of the casts' inputs (named as
// the add): out = float(a) + float(b) in float32, each input's gradient the output gradient
// converted to its type as the cast's backward does (written or added). The values are the same
// bit for bit (a widening is exact and a float32 sum does not depend on the order of its two
// terms).
class WideningAdd : public Operator {
 public:
  explicit WideningAdd(const Attrs& attrs) { ParamReader("_widening_add", attrs).Finish(); }

  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], DType::kFloat32, type(), "output");
    return in[0].has_value() && in[1].has_value();
  }
  bool TakesDType(DType dtype) const override { return IsAmpFloat(dtype); }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, WideningAddGpu(ctx, in[0], in[1], out[0]));
    const NDArray& a = in[0].dtype() == DType::kFloat32 ? in[1] : in[0];  // widened first
    const NDArray& b = in[0].dtype() == DType::kFloat32 ? in[0] : in[1];
    float* y = out[0].data<float>();
    const int64_t n = out[0].size();
    ParallelChunks(
        n, ChunksFor(ctx, n / (1 << 14)),
        [&](int64_t, int64_t chunk_begin, int64_t chunk_end) {
          constexpr int64_t kTile = 4096;  // y's tile stays in L1 between its two passes
          for (int64_t begin = chunk_begin; begin < chunk_end; begin += kTile) {
            const int64_t end = std::min(chunk_end, begin + kTile);
            if (a.dtype() == DType::kFloat32) {  // both float32
              std::copy(a.data<float>() + begin, a.data<float>() + end, y + begin);
            } else {
              WidenToFloat(a.dtype(), static_cast<const char*>(a.raw_data()) + begin * 2,
                           end - begin, y + begin);
            }
            if (b.dtype() == DType::kFloat32) {
              const float* x = b.data<float>();
              for (int64_t i = begin; i < end; ++i) y[i] += x[i];
            } else {
              AddWidened(b.dtype(), static_cast<const char*>(b.raw_data()) + begin * 2,
                         end - begin, y + begin);
            }
          }
        },
        ctx.arena);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    for (int i = 0; i < 2; ++i) {
      if (req[i] != GradReq::kNull) {
        CastOnContext(ctx, out_grad[0], in_grad[i], req[i] == GradReq::kAdd);
      }
    }
  }
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
      {"amp_cast",
       "Cast function between low precision float/FP32 used by AMP.\n\nIt casts only between "
       "low precision float/FP32 and does not do anything for other types.",
       {"data"},
       "",
       {{"dtype",
         "{'bfloat16', 'bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}",
         kRequired, "Output data type."}}},
      {"amp_multicast",
       "Cast function used by AMP, that casts its inputs to the common widest type.\n\nIt casts "
       "only between low precision float/FP32 and does not do anything for other types.",
       {"data"},
       "num_outputs",
       {{"num_outputs", "int", kRequired,
         "Number of input/output pairs to be casted to the widest type."},
        {"cast_narrow", "boolean", "False", "Whether to cast to the narrowest type"}}},
      {"_widening_add",
       "lhs + rhs in float32, each a float32, float16 or bfloat16 array widened as it is read: "
       "the executor's fusion of elemwise_add and the amp_casts of its inputs (Note [Widening "
       "add fusion]).",
       {"lhs", "rhs"},
       "",
       {}},
  };
}

}  // namespace

void RegisterCast(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Cast", [](const Attrs& a) { return std::make_unique<Cast>(a); });
  r.Alias("cast", "Cast");
  r.Register("amp_cast", [](const Attrs& a) { return std::make_unique<AmpCast>(a); });
  r.Register("amp_multicast", [](const Attrs& a) { return std::make_unique<AmpMultiCast>(a); });
  r.Register("_widening_add", [](const Attrs& a) { return std::make_unique<WideningAdd>(a); });
}

}  // namespace cohort::op
