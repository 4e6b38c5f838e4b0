// Embedding on the CPU: rows of a weight table looked up by integer indices (embedding.h).
#include <cstring>

#include "operator/common/kernel_util.h"
#include "operator/embedding.h"

namespace cohort::op {

// embedding.cu (Note [GPU kernels]): clamps out-of-range indices where the CPU throws.
void EmbeddingForwardGpu(const OpContext& ctx, const NDArray& data, const NDArray& weight,
                         const NDArray& out, int64_t input_dim, int64_t output_dim);
void EmbeddingBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& data,
                          const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                          int64_t input_dim, int64_t output_dim);

EmbeddingParam EmbeddingParam::Parse(const Attrs& attrs) {
  ParamReader r("Embedding", attrs);
  EmbeddingParam p;
  p.input_dim = r.Int("input_dim");
  p.output_dim = r.Int("output_dim");
  r.Enum("dtype", {"float32"}, "float32");
  r.Bool("sparse_grad", false);
  r.Finish();
  return p;
}

namespace {

class Embedding : public Operator {
 public:
  explicit Embedding(const Attrs& attrs) : p_(EmbeddingParam::Parse(attrs)) {}
  std::vector<std::string> ListArguments() const override { return {"data", "weight"}; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(in[1], Shape({p_.input_dim, p_.output_dim}), "Embedding", "weight");
    if (!ShapeKnown(in[0])) return false;
    std::vector<int64_t> dims(in[0].begin(), in[0].end());
    dims.push_back(p_.output_dim);
    AssignShape(out[0], Shape(std::span<const int64_t>(dims)), "Embedding", "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(
        ctx, EmbeddingForwardGpu(ctx, in[0], in[1], out[0], p_.input_dim, p_.output_dim));
    const float* idx = F(in[0]);
    const float* w = F(in[1]);
    float* y = F(out[0]);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const int64_t row = Row(idx[i], i);
      std::memcpy(y + i * p_.output_dim, w + row * p_.output_dim, p_.output_dim * sizeof(float));
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, EmbeddingBackwardGpu(ctx, out_grad[0], in[0], req, in_grad,
                                                  p_.input_dim, p_.output_dim));
    if (req[0] == GradReq::kWrite) in_grad[0].Fill(0);  // indices get no gradient
    if (req[1] == GradReq::kNull) return;
    if (req[1] == GradReq::kWrite) in_grad[1].Fill(0);
    const float* idx = F(in[0]);
    const float* dy = F(out_grad[0]);
    float* dw = F(in_grad[1]);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      float* dst = dw + Row(idx[i], i) * p_.output_dim;
      const float* src = dy + i * p_.output_dim;
      for (int64_t j = 0; j < p_.output_dim; ++j) dst[j] += src[j];
    }
  }

 private:
  int64_t Row(float index, int64_t position) const {
    COHORT_CHECK(EmbeddingIndexValid(index, p_.input_dim))
        << "Embedding: index " << index << " at position " << position << " is outside [0, "
        << p_.input_dim << ")";
    return EmbeddingRow(index, p_.input_dim);
  }

  EmbeddingParam p_;
};

}  // namespace

void RegisterEmbedding(OpRegistry& r) {
  r.Register("Embedding", [](const Attrs& a) { return std::make_unique<Embedding>(a); });
}

}  // namespace cohort::op
