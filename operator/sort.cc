// sort, argsort and topk on the CPU: each row's positions sorted by sort.h's order (rows split
// over the arena), then the first `kept` written as values, positions or a mask.
#include "operator/sort.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

SortParam SortParam::Parse(const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  SortParam p;
  const bool topk = op == "topk";
  p.ascend = !topk;
  if (auto axis = r.OptionalInt("axis")) {
    p.axis = static_cast<int>(*axis);
  } else {
    p.axis.reset();  // the flattened array
  }
  p.ascend = r.Bool("is_ascend");
  if (topk) {
    p.k = r.Int("k");
    static const char* const kNames[] = {"value", "indices", "mask", "both"};
    p.ret = r.EnumValue<SortOutput>("ret_typ", kNames);
  } else {
    p.ret = op == "sort" ? SortOutput::kValue : SortOutput::kIndices;
  }
  if (op != "sort") {
    p.position_dtype = ParseDType(r.Enum("dtype"));
  }
  r.Finish();
  return p;
}

void SortParam::Rows(const Shape& in, int64_t* outer, int64_t* size, int64_t* inner) const {
  if (!axis) {
    *outer = *inner = 1;
    *size = in.Size();
    return;
  }
  const int a = NormalizeAxis(*axis, in, "sort");
  *outer = *inner = 1;
  for (int d = 0; d < a; ++d) *outer *= in[d];
  for (int d = a + 1; d < in.ndim(); ++d) *inner *= in[d];
  *size = in[a];
}

Shape SortParam::OutShape(const Shape& in) const {
  if (!axis) return Shape({Kept(in.Size())});
  Shape out = in;
  const int a = NormalizeAxis(*axis, in, "sort");
  out[a] = Kept(in[a]);
  return out;
}

namespace {

class Sort : public Operator {
 public:
  Sort(const std::string& name, const Attrs& attrs) : p_(SortParam::Parse(name, attrs)) {}

  // Value outputs keep their positions (hidden unless ret_typ is both) for the gradient.
  std::vector<std::string> ListOutputs() const override {
    if (p_.ret == SortOutput::kValue || p_.ret == SortOutput::kBoth) return {"output", "indices"};
    return {"output"};
  }
  int NumVisibleOutputs() const override { return p_.ret == SortOutput::kBoth ? 2 : 1; }
  bool PassesGradient() const override {
    return p_.ret == SortOutput::kValue || p_.ret == SortOutput::kBoth;
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType dtype) const override { return ArithmeticTakes(dtype); }
  // Values and the mask in the data's dtype, positions in `dtype`.
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    const bool positions_first = p_.ret == SortOutput::kIndices;
    if (!positions_first) AssignType(in[0], out[0], type(), "data");
    AssignType(out[0], positions_first ? std::optional(p_.position_dtype) : in[0], type(),
               "output");
    if (out.size() > 1) AssignType(out[1], p_.position_dtype, type(), "indices");
    return in[0].has_value();
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    if (p_.axis) NormalizeAxis(*p_.axis, in[0], type());  // names a bad axis
    const Shape kept = p_.OutShape(in[0]);
    AssignShape(out[0], p_.ret == SortOutput::kMask ? in[0] : kept, type(), "output");
    if (out.size() > 1) AssignShape(out[1], kept, type(), "indices");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const bool values = p_.ret == SortOutput::kValue || p_.ret == SortOutput::kBoth;
    const NDArray none;
    const NDArray& value_out = values ? out[0] : none;
    const NDArray& position_out = values ? out[1] : p_.ret == SortOutput::kIndices ? out[0] : none;
    const NDArray& mask_out = p_.ret == SortOutput::kMask ? out[0] : none;
    COHORT_GPU_DISPATCH(ctx, SortForwardGpu(ctx, p_, in[0], value_out, position_out, mask_out));
    int64_t outer, size, inner;
    p_.Rows(in[0].shape(), &outer, &size, &inner);
    const int64_t kept = p_.Kept(size);
    void* pos = position_out.is_none() ? nullptr : position_out.raw_data();
    const DType pos_dtype = p_.position_dtype;
    const bool ascend = p_.ascend;
    DispatchArithmetic(type(), in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const T* x = in[0].data<T>();
      T* v = value_out.is_none() ? nullptr : value_out.data<T>();
      T* mask = mask_out.is_none() ? nullptr : mask_out.data<T>();
      ParallelChunks(
          outer * inner, ChunksFor(ctx, outer * inner * size / (1 << 14)),
          [&](int64_t, int64_t first, int64_t last) {
            thread_local std::vector<int64_t> order;  // reused: no allocation once grown
            order.resize(static_cast<size_t>(size));
            for (int64_t r = first; r < last; ++r) {
              const int64_t o = r / inner, i = r % inner;
              const T* row = x + o * size * inner + i;
              std::iota(order.begin(), order.end(), int64_t{0});
              std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
                return SortsBefore<C>(static_cast<C>(row[a * inner]), a,
                                      static_cast<C>(row[b * inner]), b, ascend);
              });
              const int64_t out_row = o * kept * inner + i;
              for (int64_t j = 0; j < kept; ++j) {
                if (v) v[out_row + j * inner] = row[order[j] * inner];
                if (pos) StorePosition(pos, pos_dtype, out_row + j * inner, order[j]);
              }
              if (mask) {
                T* m = mask + o * size * inner + i;
                for (int64_t j = 0; j < size; ++j) m[order[j] * inner] = T(j < kept ? 1 : 0);
              }
            }
          },
          ctx.arena);
    });
  }

  // The values' gradient goes to the positions they came from; the rest of dx is zero.
  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    // Positions and masks have no gradient: a written one is zero.
    const NDArray none;
    const NDArray& positions = PassesGradient() ? out[1] : none;
    COHORT_GPU_DISPATCH(ctx, SortBackwardGpu(ctx, p_, req[0], out_grad[0], positions, in_grad[0]));
    if (req[0] == GradReq::kWrite) in_grad[0].Fill(0);
    if (positions.is_none()) return;
    int64_t outer, size, inner;
    p_.Rows(in_grad[0].shape(), &outer, &size, &inner);
    const int64_t kept = p_.Kept(size);
    const void* pos = positions.raw_data();
    const DType pos_dtype = positions.dtype();
    // In the values' dtype, as MXNet's topk backward (an int32 array has an int32 gradient).
    DispatchArithmetic(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* dy = out_grad[0].data<T>();
      T* dx = in_grad[0].data<T>();
      for (int64_t r = 0; r < outer * inner; ++r) {
        const int64_t o = r / inner, i = r % inner;
        for (int64_t j = 0; j < kept; ++j) {
          const int64_t from = o * kept * inner + j * inner + i;
          AddInto(&dx[o * size * inner + LoadPosition(pos, pos_dtype, from) * inner + i], dy[from]);
        }
      }
    });
  }

 private:
  SortParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const ParamSpec is_ascend{"is_ascend", "boolean", "1",
                            "Whether to sort in ascending or descending order."};
  return {
      {"argsort",
       "Returns the indices that would sort an input array along the given axis.",
       {"data"},
       "",
       {{"axis", "int or None", "-1",
         "Axis along which to sort the input tensor. If not given, the flattened array is used. "
         "Default is -1."},
        is_ascend,
        {"dtype", "{'float16', 'float32', 'float64', 'int32', 'int64', 'uint8'}", "float32",
         "DType of the output indices. It is only valid when ret_typ is \"indices\" or \"both\". "
         "An error will be raised if the selected data type cannot precisely represent the "
         "indices."}}},
      {"sort",
       "Returns a sorted copy of an input array along the given axis.",
       {"data"},
       "",
       {{"axis", "int or None", "-1",
         "Axis along which to choose sort the input tensor. If not given, the flattened array is "
         "used. Default is -1."},
        is_ascend}},
      {"topk",
       "Returns the indices of the top *k* elements in an input array along the given axis (by "
       "default). If ret_typ is 'value' it returns the values, 'mask' a 0/1 mask of the top k "
       "elements, 'both' the values and the indices.",
       {"data"},
       "",
       {{"axis", "int or None", "-1",
         "Axis along which to choose the top k indices. If not given, the flattened array is used. "
         "Default is -1."},
        {"k", "int", "1",
         "Number of top elements to select, should be always smaller than or equal to the element "
         "number in the given axis. A global sort is performed if set k < 1."},
        {"ret_typ", "{'both', 'indices', 'mask', 'value'}", "indices",
         "The return type. \"value\" means to return the top k values, \"indices\" means to return "
         "the indices of the top k values, \"mask\" means to return a mask array containing 0 and "
         "1. 1 means the top k values. \"both\" means to return a list of both values and indices "
         "of top k elements."},
        {"is_ascend", "boolean", "0",
         "Whether to choose k largest or k smallest elements. Top K largest elements will be "
         "chosen if set to false."},
        {"dtype", "{'float16', 'float32', 'float64', 'int32', 'int64', 'uint8'}", "float32",
         "DType of the output indices when ret_typ is \"indices\" or \"both\". An error will be "
         "raised if the selected data type cannot precisely represent the indices."}}},
  };
}

}  // namespace

void RegisterSort(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  for (const char* name : {"sort", "argsort", "topk"}) {
    std::string n = name;
    r.Register(n, [n](const Attrs& a) { return std::make_unique<Sort>(n, a); });
  }
}

}  // namespace cohort::op
