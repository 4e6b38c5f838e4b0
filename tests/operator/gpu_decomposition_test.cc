// The GPU kernels' decompositions run on the CPU: where a CUDA kernel splits work otherwise than
// the CPU kernel (Note [Column sums in chunks]), the same header functions called in the GPU's
// split here give the CPU kernel's results, so a CPU test executes the logic the GPU runs.
#include <gtest/gtest.h>

#include "operator/convolution.h"
#include "operator/layer_norm.h"
#include "tests/operator/op_harness.h"

namespace cohort::testing {
namespace {

// LayerNorm's gamma and beta gradients: the op on the CPU against layer_norm.cu's two passes
// (a thread per (chunk, position) into partial sums, then one per position), for rows that fill
// several chunks with a partial last one, the axis last and in the middle, grad_req write and add.
TEST(GpuDecomposition, LayerNormParamGradsInChunks) {
  for (const auto& [shape, axis] : {std::pair{Shape{40, 130, 24}, -1},  // 5200 rows, inner 1
                                    std::pair{Shape{70, 24, 75}, 1},    // 5250 rows, inner 75
                                    std::pair{Shape{3, 5}, -1}}) {      // one chunk
    for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
      SCOPED_TRACE(::testing::Message() << shape << " axis " << axis << " req "
                                        << static_cast<int>(req));
      OpInstance inst = MakeOp("LayerNorm", {{"axis", std::to_string(axis)}}, {shape});
      std::mt19937 rng(3);
      for (const NDArray& a : inst.in) FillUniform(a, rng);
      inst.Forward(true);
      NDArray head = NDArray::Zeros(shape);
      FillUniform(head, rng);
      std::vector<NDArray> grads;
      for (const NDArray& a : inst.in) grads.push_back(NDArray::Full(a.shape(), 0.5));
      inst.Backward(true, {head}, {GradReq::kNull, req, req}, grads);

      const int a = axis < 0 ? static_cast<int>(shape.ndim()) - 1 : axis;
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < a; ++d) outer *= shape[d];
      for (int d = a + 1; d < static_cast<int>(shape.ndim()); ++d) inner *= shape[d];
      NDArray dgamma = NDArray::Full({shape[a]}, 0.5), dbeta = NDArray::Full({shape[a]}, 0.5);
      const op::LayerNormParamGrads p{inst.in[0].data<float>(), head.data<float>(),
                                      inst.out[1].data<float>(), inst.out[2].data<float>(),
                                      dgamma.data<float>(), dbeta.data<float>(), req, req,
                                      outer, shape[a], inner};
      const int64_t cells = p.chunks() * p.size;
      std::vector<float> partial_gx(cells), partial_g(cells);
      for (int64_t t = 0; t < cells; ++t) {
        p.ChunkSums(t % p.size, t / p.size, &partial_gx[t], &partial_g[t]);
      }
      for (int64_t c = 0; c < p.size; ++c) p.FromChunks(c, partial_gx.data(), partial_g.data());
      ExpectClose(dgamma, grads[1], 1e-5, 1e-5, "gamma");
      ExpectClose(dbeta, grads[2], 1e-5, 1e-5, "beta");
      EXPECT_GT(p.chunks(), shape.Size() > 1000 ? 1 : 0);
    }
  }
}

// Depthwise convolution's weight gradient: the op on the CPU (all samples in one sum per tap)
// against convolution.cu's two passes (a thread per sample, channel and tap, then the samples'
// sums in order), strided and padded, grad_req write and add.
TEST(GpuDecomposition, DepthwiseWeightGradBySample) {
  const Shape shape{5, 8, 9, 10};
  for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
    SCOPED_TRACE(static_cast<int>(req));
    OpInstance inst = MakeOp("Convolution",
                             {{"kernel", "(3,3)"}, {"num_filter", "8"}, {"num_group", "8"},
                              {"pad", "(1,1)"}, {"stride", "(2,2)"}, {"no_bias", "true"}},
                             {shape});
    std::mt19937 rng(5);
    for (const NDArray& a : inst.in) FillUniform(a, rng);
    inst.Forward(true);
    NDArray head = NDArray::Zeros(inst.out[0].shape());
    FillUniform(head, rng);
    std::vector<NDArray> grads;
    for (const NDArray& a : inst.in) grads.push_back(NDArray::Full(a.shape(), 0.5));
    inst.Backward(true, {head}, {GradReq::kNull, req}, grads);

    const Shape& out = inst.out[0].shape();
    const op::DepthwiseGeometry g{shape[2], shape[3], out[2], out[3], 3, 3, 2, 2, 1, 1, 1, 1};
    const int64_t batch = shape[0], channels = shape[1], taps = 9, cells = channels * taps;
    std::vector<float> per_sample(batch * cells);
    for (int64_t k = 0; k < batch * cells; ++k) {
      const int64_t n = k / cells, t = k % cells;
      per_sample[k] = op::DepthwiseWeightGrad(g, head.data<float>(), inst.in[0].data<float>(),
                                              t / taps, t % taps / g.kw, t % g.kw, n, n + 1,
                                              channels);
    }
    NDArray dw = NDArray::Full({channels, 1, 3, 3}, 0.5);
    for (int64_t t = 0; t < cells; ++t) {
      op::AssignReq(req, dw.data<float>(), t,
                    op::SumInOrder(per_sample.data() + t, batch, cells));
    }
    ExpectClose(dw, grads[1], 1e-5, 1e-5, "weight");
  }
}

}  // namespace
}  // namespace cohort::testing
