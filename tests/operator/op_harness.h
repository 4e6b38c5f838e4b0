// Runs one operator directly (no executor): shape inference, arrays, forward, backward; and the
// finite-difference gradient check every operator test uses.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "operator/common/operator.h"
#include "tests/test_util.h"

namespace cohort::testing {

struct OpInstance {
  std::unique_ptr<op::Operator> op;
  std::vector<NDArray> in, out, aux;

  int visible() const { return op->NumVisibleOutputs(); }

  void Forward(bool is_train, uint64_t seed = 7) {
    op::OpContext ctx{.is_train = is_train, .seed = seed};
    std::vector<GradReq> req(out.size(), GradReq::kWrite);
    op->Forward(ctx, in, req, out, aux);
  }

  // Gradients of every input for the given head gradients (one per visible output).
  void Backward(bool is_train, const std::vector<NDArray>& heads, const std::vector<GradReq>& req,
                const std::vector<NDArray>& grads) {
    op::OpContext ctx{.is_train = is_train};
    op->Backward(ctx, heads, in, out, req, grads, aux);
  }
};

// Makes the operator and zeroed arrays of the shapes it infers from the given input shapes.
inline OpInstance MakeOp(const std::string& name, const op::Attrs& attrs,
                         const std::vector<Shape>& given) {
  OpInstance inst;
  inst.op = op::OpRegistry::Get().Create(name, attrs);
  std::vector<Shape> in(inst.op->ListArguments().size());
  std::vector<Shape> out(inst.op->NumOutputs());
  std::vector<Shape> aux(inst.op->ListAuxiliaryStates().size());
  for (size_t i = 0; i < given.size() && i < in.size(); ++i) in[i] = given[i];
  EXPECT_TRUE(inst.op->InferShape(in, out, aux)) << name << ": shapes not inferred";
  // float32 inputs; outputs of the type the op infers (shape_array's int64).
  op::TypeSlots in_types(in.size(), DType::kFloat32), out_types(out.size());
  op::TypeSlots aux_types(aux.size(), DType::kFloat32);
  inst.op->InferType(in_types, out_types, aux_types);
  for (const Shape& s : in) inst.in.push_back(NDArray::Zeros(s));
  for (size_t k = 0; k < out.size(); ++k) {
    inst.out.push_back(NDArray::Zeros(out[k], out_types[k].value_or(DType::kFloat32)));
  }
  for (const Shape& s : aux) inst.aux.push_back(NDArray::Zeros(s));
  return inst;
}

inline void FillUniform(const NDArray& a, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> u(lo, hi);
  float* p = static_cast<float*>(a.raw_data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = u(rng);
}

// Checks the analytic gradient of L = Σ_k Σ out_k · head_k against central differences for
// the inputs listed in `check`. `init` fills the inputs (default: uniform in [-1, 1]).
inline void CheckGradient(const std::string& name, const op::Attrs& attrs,
                          const std::vector<Shape>& shapes, const std::vector<int>& check,
                          const std::function<void(OpInstance&, std::mt19937&)>& init = nullptr,
                          bool is_train = true, double eps = 1e-2, double rtol = 2e-2,
                          double atol = 2e-3) {
  std::mt19937 rng(1234);
  OpInstance inst = MakeOp(name, attrs, shapes);
  if (init) {
    init(inst, rng);
  } else {
    for (auto& a : inst.in) FillUniform(a, rng);
  }
  for (auto& a : inst.aux) FillUniform(a, rng, 0.5f, 1.5f);
  const std::vector<NDArray> aux0 = [&] {
    std::vector<NDArray> copy;
    for (auto& a : inst.aux) copy.push_back(a.CopyTo(Context::CPU()));
    return copy;
  }();
  std::vector<NDArray> heads;
  for (int k = 0; k < inst.visible(); ++k) {
    heads.push_back(NDArray::Zeros(inst.out[k].shape()));
    FillUniform(heads.back(), rng);
  }
  auto loss = [&]() {
    for (size_t i = 0; i < aux0.size(); ++i) aux0[i].CopyTo(inst.aux[i]);
    inst.Forward(is_train);
    double sum = 0;
    for (int k = 0; k < inst.visible(); ++k) {
      std::vector<float> o = inst.out[k].ToVector<float>(), h = heads[k].ToVector<float>();
      for (size_t i = 0; i < o.size(); ++i) sum += static_cast<double>(o[i]) * h[i];
    }
    return sum;
  };
  loss();
  std::vector<NDArray> grads;
  std::vector<GradReq> req;
  for (size_t i = 0; i < inst.in.size(); ++i) {
    grads.push_back(NDArray::Full(inst.in[i].shape(), 99.0));
    const bool wanted = std::find(check.begin(), check.end(), static_cast<int>(i)) != check.end();
    req.push_back(wanted ? GradReq::kWrite : GradReq::kNull);
  }
  inst.Backward(is_train, heads, req, grads);
  for (int i : check) {
    float* x = static_cast<float*>(inst.in[i].raw_data());
    std::vector<float> analytic = grads[i].ToVector<float>();
    int reported = 0;
    for (int64_t j = 0; j < inst.in[i].size(); ++j) {
      const float saved = x[j];
      x[j] = static_cast<float>(saved + eps);
      const double up = loss();
      x[j] = static_cast<float>(saved - eps);
      const double down = loss();
      x[j] = saved;
      const double numeric = (up - down) / (2 * eps);
      if (std::fabs(analytic[j] - numeric) > atol + rtol * std::fabs(numeric) && reported++ < 5) {
        ADD_FAILURE() << name << " input " << i << "[" << j << "]: analytic " << analytic[j]
                      << " vs numeric " << numeric;
      }
    }
  }
}

// grad_req add accumulates onto what the buffer held; null leaves it untouched.
inline void CheckGradReqs(const std::string& name, const op::Attrs& attrs,
                          const std::vector<Shape>& shapes, int input,
                          const std::function<void(OpInstance&, std::mt19937&)>& init = nullptr) {
  std::mt19937 rng(99);
  OpInstance inst = MakeOp(name, attrs, shapes);
  if (init) {
    init(inst, rng);
  } else {
    for (auto& a : inst.in) FillUniform(a, rng);
  }
  for (auto& a : inst.aux) FillUniform(a, rng, 0.5f, 1.5f);
  inst.Forward(true);
  std::vector<NDArray> heads;
  for (int k = 0; k < inst.visible(); ++k) {
    heads.push_back(NDArray::Zeros(inst.out[k].shape()));
    FillUniform(heads.back(), rng);
  }
  auto run = [&](GradReq req, float start) {
    std::vector<NDArray> grads;
    std::vector<GradReq> reqs;
    for (size_t i = 0; i < inst.in.size(); ++i) {
      grads.push_back(NDArray::Full(inst.in[i].shape(), start));
      reqs.push_back(static_cast<int>(i) == input ? req : GradReq::kNull);
    }
    inst.Backward(true, heads, reqs, grads);
    return grads[input].ToVector<float>();
  };
  std::vector<float> written = run(GradReq::kWrite, 0.0f);
  std::vector<float> added = run(GradReq::kAdd, 3.0f);
  std::vector<float> untouched = run(GradReq::kNull, 5.0f);
  for (size_t j = 0; j < written.size(); ++j) {
    ASSERT_NEAR(added[j], written[j] + 3.0f, 1e-4) << name << " add, element " << j;
    ASSERT_EQ(untouched[j], 5.0f) << name << " null, element " << j;
  }
}

}  // namespace cohort::testing
