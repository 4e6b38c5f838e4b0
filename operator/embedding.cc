// Embedding and take on the CPU: rows of a table looked up by integer indices (embedding.h).
#include <cstring>

#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"
#include "operator/embedding.h"

namespace cohort::op {

// embedding.cu (Note [GPU kernels]): clamps out-of-range indices where the CPU throws.
void EmbeddingForwardGpu(const OpContext& ctx, const NDArray& data, const NDArray& weight,
                         const NDArray& out, int64_t input_dim, int64_t output_dim, bool wrap);
void EmbeddingBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& data,
                          GradReq index_req, const NDArray& index_grad, GradReq table_req,
                          const NDArray& table_grad, int64_t input_dim, int64_t output_dim,
                          bool wrap);

EmbeddingParam EmbeddingParam::Parse(const Attrs& attrs) {
  ParamReader r("Embedding", attrs);
  EmbeddingParam p;
  p.input_dim = r.Int("input_dim");
  p.output_dim = r.Int("output_dim");
  r.Enum("dtype");
  r.Bool("sparse_grad");  // the gradient is dense either way: equal values
  r.Finish();
  return p;
}

TakeParam TakeParam::Parse(const Attrs& attrs) {
  ParamReader r("take", attrs);
  TakeParam p;
  const std::string mode = r.Enum("mode");
  p.mode = mode == "clip" ? TakeMode::kClip : mode == "wrap" ? TakeMode::kWrap : TakeMode::kRaise;
  COHORT_CHECK_EQ(r.Int("axis"), 0) << "take: only axis=0 is supported";
  r.Finish();
  return p;
}

namespace {

// Looks up rows of `table` (argument table_arg) by `indices` (the other argument): output
// element (i, j) = table[row(indices[i]), j], rows of `row_size` floats.
class Lookup : public Operator {
 public:
  // Embedding: (data, weight), a table of input_dim × output_dim, out-of-range indices refused.
  explicit Lookup(const EmbeddingParam& p)
      : embedding_(p), table_arg_(1), mode_(TakeMode::kRaise) {}
  // take: (a, indices), a table of any shape, its rows along axis 0.
  explicit Lookup(const TakeParam& p) : table_arg_(0), mode_(p.mode) {}

  std::vector<std::string> ListArguments() const override {
    return table_arg_ == 1 ? std::vector<std::string>{"data", "weight"}
                           : std::vector<std::string>{"a", "indices"};
  }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  // The indices keep their own dtype; the table and the output share one: float32 for
  // Embedding, any numeric dtype for take (its rows are copied, its gradient scattered in it).
  bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots&) const override {
    AssignType(out[0], in[table_arg_], type(), "output");
    AssignType(in[table_arg_], out[0], type(), ListArguments()[table_arg_]);
    return in[1 - table_arg_].has_value() && out[0].has_value();
  }
  bool TakesDType(DType dtype) const override {
    if (!embedding_) return ArithmeticTakes(dtype);  // take: the indices are checked when run
    return dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64;
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    Shape& table = in[table_arg_];
    const Shape& indices = in[1 - table_arg_];
    if (embedding_) {
      AssignShape(table, Shape({embedding_->input_dim, embedding_->output_dim}), type(), "weight");
    }
    if (!ShapeKnown(indices) || !ShapeKnown(table)) return false;
    COHORT_CHECK(table.ndim() >= 1 && table[0] > 0)
        << type() << ": the table " << table << " has no rows";
    std::vector<int64_t> dims(indices.begin(), indices.end());
    for (int d = 1; d < table.ndim(); ++d) dims.push_back(table[d]);
    COHORT_CHECK(dims.size() <= Shape::kMaxNdim)
        << type() << ": output of " << indices << " and " << table << " has too many axes";
    AssignShape(out[0], Shape(std::span<const int64_t>(dims)), type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const NDArray& table = in[table_arg_];
    const NDArray& indices = in[1 - table_arg_];
    const int64_t rows = table.shape()[0], d = table.size() / rows;
    COHORT_GPU_DISPATCH(ctx, EmbeddingForwardGpu(ctx, indices, table, out[0], rows, d, Wraps()));
    const size_t row_bytes = static_cast<size_t>(d) * DTypeSize(table.dtype());  // any dtype
    const char* w = static_cast<const char*>(table.raw_data());
    char* y = static_cast<char*>(out[0].raw_data());
    DispatchIndex(indices.dtype(), [&](auto tag) {
      const auto* idx = static_cast<const decltype(tag)*>(indices.raw_data());
      for (int64_t i = 0; i < indices.size(); ++i) {
        std::memcpy(y + i * row_bytes, w + Row(idx[i], i, rows) * row_bytes, row_bytes);
      }
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const int ti = table_arg_, ii = 1 - table_arg_;
    const int64_t rows = in[ti].shape()[0], d = in[ti].size() / rows;
    COHORT_GPU_DISPATCH(ctx, EmbeddingBackwardGpu(ctx, out_grad[0], in[ii], req[ii], in_grad[ii],
                                                  req[ti], in_grad[ti], rows, d, Wraps()));
    if (req[ii] == GradReq::kWrite) in_grad[ii].Fill(0);  // indices get no gradient
    if (req[ti] == GradReq::kNull) return;
    if (req[ti] == GradReq::kWrite) in_grad[ti].Fill(0);
    DispatchArithmetic(type(), out_grad[0].dtype(), [&](auto value) {
      using T = decltype(value);
      const T* dy = out_grad[0].data<T>();
      T* dw = in_grad[ti].data<T>();
      DispatchIndex(in[ii].dtype(), [&](auto tag) {
        const auto* idx = static_cast<const decltype(tag)*>(in[ii].raw_data());
        for (int64_t i = 0; i < in[ii].size(); ++i) {
          T* dst = dw + Row(idx[i], i, rows) * d;
          const T* src = dy + i * d;
          for (int64_t j = 0; j < d; ++j) AddInto(&dst[j], src[j]);
        }
      });
    });
  }

 private:
  bool Wraps() const { return mode_ == TakeMode::kWrap; }

  template <typename I>
  int64_t Row(I index, int64_t position, int64_t rows) const {
    if (mode_ == TakeMode::kRaise) {
      COHORT_CHECK(EmbeddingIndexValid(index, rows))
          << type() << ": index " << +index << " at position " << position << " is outside [0, "
          << rows << ")";
    }
    return EmbeddingRow(index, rows, Wraps());
  }

  std::optional<EmbeddingParam> embedding_;
  int table_arg_;
  TakeMode mode_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Embedding",
       "Maps integer indices to vector representations (embeddings).",
       {"data", "weight"},
       "",
       {{"input_dim", "int", kRequired, "Vocabulary size of the input indices."},
        {"output_dim", "int", kRequired, "Dimension of the embedding vectors."},
        {"dtype", "{'float32'}", "float32", "Data type of weight."},
        {"sparse_grad", "boolean", "0",
         "Compute row sparse gradient in the backward calculation. If set to True, the grad's "
         "storage type is row_sparse."}}},
      {"take",
       "Takes elements from an input array along the given axis.",
       {"a", "indices"},
       "",
       {{"axis", "int", "0",
         "The axis of input array to be taken.For input tensor of rank r, it could be in the range "
         "of [-r, r-1]"},
        {"mode", "{'clip', 'raise', 'wrap'}", "clip",
         "Specify how out-of-bound indices bahave. Default is \"clip\". \"clip\" means clip to the "
         "range. So, if all indices mentioned are too large, they are replaced by the index that "
         "addresses the last element along an axis. \"wrap\" means to wrap around. \"raise\" means "
         "to raise an error when index out of range."}}},
  };
}

}  // namespace

void RegisterEmbedding(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Embedding",
             [](const Attrs& a) { return std::make_unique<Lookup>(EmbeddingParam::Parse(a)); });
  r.Register("take", [](const Attrs& a) { return std::make_unique<Lookup>(TakeParam::Parse(a)); });
}

}  // namespace cohort::op
