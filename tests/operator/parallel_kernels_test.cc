// Kernels split over threads (Note [Kernel threads]) equal the same kernels run serially, for
// grad_req write and add, with uneven chunks.
#include <gtest/gtest.h>

#include "base/thread_arena.h"
#include "tests/operator/op_harness.h"

namespace cohort::testing {
namespace {

struct Run {
  std::vector<NDArray> out, grads;
};

// Forward and backward of the op on fixed inputs; gradients start at 0.5 so that kAdd shows.
Run Execute(const std::string& name, const op::Attrs& attrs, const std::vector<Shape>& shapes,
            GradReq req, ThreadArena* arena) {
  OpInstance inst = MakeOp(name, attrs, shapes);
  std::mt19937 rng(42);
  for (auto& a : inst.in) FillUniform(a, rng);
  const op::OpContext ctx{.is_train = true, .arena = arena};
  std::vector<GradReq> write(inst.out.size(), GradReq::kWrite);
  inst.op->Forward(ctx, inst.in, write, inst.out, inst.aux);
  std::vector<NDArray> heads, grads;
  for (int k = 0; k < inst.visible(); ++k) {
    heads.push_back(NDArray::Zeros(inst.out[k].shape()));
    FillUniform(heads.back(), rng);
  }
  for (const NDArray& a : inst.in) {
    grads.push_back(NDArray::Zeros(a.shape()));
    grads.back().Fill(0.5);
  }
  std::vector<GradReq> reqs(inst.in.size(), req);
  inst.op->Backward(ctx, heads, inst.in, inst.out, reqs, grads, inst.aux);
  return {inst.out, grads};
}

void ExpectParallelEqualsSerial(const std::string& name, const op::Attrs& attrs,
                                const std::vector<Shape>& shapes) {
  ThreadArena arena(3);
  for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
    const Run serial = Execute(name, attrs, shapes, req, nullptr);
    const Run parallel = Execute(name, attrs, shapes, req, &arena);
    const std::string what = name + " " + GradReqName(req);
    for (size_t k = 0; k < serial.out.size(); ++k) {
      ExpectClose(parallel.out[k], serial.out[k], 1e-5, 1e-6, what + " output");
    }
    for (size_t i = 0; i < serial.grads.size(); ++i) {
      ExpectClose(parallel.grads[i], serial.grads[i], 1e-5, 1e-6,
                  what + " gradient " + std::to_string(i));
    }
  }
}

TEST(ParallelKernels, ConvolutionEqualsSerial) {
  ExpectParallelEqualsSerial(
      "Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"pad", "(1,1)"}}, {{7, 3, 6, 5}});
  ExpectParallelEqualsSerial("Convolution",
                             {{"kernel", "(1,1)"}, {"num_filter", "6"}, {"num_group", "2"}},
                             {{5, 4, 3, 3}});
}

TEST(ParallelKernels, FullyConnectedEqualsSerial) {
  ExpectParallelEqualsSerial("FullyConnected", {{"num_hidden", "7"}}, {{10, 9}});
}

TEST(ParallelKernels, BatchNormEqualsSerial) {
  ExpectParallelEqualsSerial("BatchNorm", {{"fix_gamma", "False"}}, {{4, 7, 5, 5}});
}

TEST(ParallelKernels, ActivationAndPoolingEqualSerial) {
  ExpectParallelEqualsSerial("Activation", {{"act_type", "tanh"}}, {{5, 70000}});
  ExpectParallelEqualsSerial("Pooling", {{"kernel", "(2,2)"}, {"stride", "(2,2)"}},
                             {{7, 5, 64, 64}});
}

}  // namespace
}  // namespace cohort::testing
