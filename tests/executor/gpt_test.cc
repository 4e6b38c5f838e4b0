// models::Gpt bound and run: its parameters, that no position sees a later token, that its
// gradients equal finite differences of the mean cross-entropy, and that it learns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "executor/executor.h"
#include "ndarray/params_io.h"
#include "symbol/models/models.h"
#include "tests/operator/op_harness.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

constexpr models::GptOptions kTiny = {
    .n_layer = 2, .n_head = 2, .d_model = 8, .seq_len = 6, .vocab = 11, .dropout = 0.0};

// An executor for `batch` windows with random parameters (LayerNorm gamma near 1) and tokens.
std::unique_ptr<Executor> Bind(const models::GptOptions& o, int64_t batch, uint64_t seed) {
  auto exec = Executor::SimpleBind(
      models::Gpt(o), Context::CPU(),
      {{"data", {batch, o.seq_len}}, {"softmax_label", {batch, o.seq_len}}}, GradReq::kWrite,
      {{"data", GradReq::kNull}, {"softmax_label", GradReq::kNull}});
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (const auto& [name, array] : exec->arg_dict()) {
    if (name == "data" || name == "softmax_label") {
      std::uniform_int_distribution<int> token(0, static_cast<int>(o.vocab) - 1);
      float* p = static_cast<float*>(array.raw_data());
      for (int64_t i = 0; i < array.size(); ++i) p[i] = static_cast<float>(token(rng));
    } else if (name.ends_with("_gamma")) {
      testing::FillUniform(array, rng, -0.2f, 0.2f);
      float* p = static_cast<float*>(array.raw_data());
      for (int64_t i = 0; i < array.size(); ++i) p[i] += 1;
    } else {
      testing::FillUniform(array, rng, -0.5f, 0.5f);
    }
  }
  return exec;
}

TEST(Gpt, ParametersAreNamedAndSizedAsTheConstructionSays) {
  const models::GptOptions o = kTiny;
  auto exec = Bind(o, 2, 1);
  const int64_t d = o.d_model, v = o.vocab, t = o.seq_len;
  const int64_t per_layer =
      2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
  int64_t count = 0;
  for (const auto& [name, array] : exec->arg_dict()) {
    if (name != "data" && name != "softmax_label") count += array.size();
  }
  EXPECT_EQ(count, v * d + t * d + o.n_layer * per_layer + 2 * d);
  EXPECT_EQ(exec->arg_dict().at("tok_embed_weight").shape(), Shape({v, d}));
  EXPECT_EQ(exec->arg_dict().at("pos_embed_weight").shape(), Shape({t, d}));
  EXPECT_EQ(exec->arg_dict().at("h1_attn_qkv_weight").shape(), Shape({3 * d, d}));
  EXPECT_EQ(exec->arg_dict().at("h1_mlp_fc_weight").shape(), Shape({4 * d, d}));
  EXPECT_EQ(exec->arg_dict().count("lm_head_weight"), 0u);  // tied to tok_embed_weight
  EXPECT_EQ(exec->outputs()[0].shape(), Shape({2, t, v}));

  models::GptOptions untied = o;
  untied.tie_weights = false;
  auto separate = Bind(untied, 2, 1);
  EXPECT_EQ(separate->arg_dict().at("lm_head_weight").shape(), Shape({v, d}));
  EXPECT_EQ(separate->arg_dict().at("lm_head_bias").shape(), Shape({v}));
}

// Changing token k changes the predictions at positions k and later, never before.
TEST(Gpt, NoPositionSeesALaterToken) {
  auto exec = Bind(kTiny, 2, 2);
  exec->Forward(false);
  const std::vector<float> before = exec->outputs()[0].ToVector<float>();
  const int64_t t = kTiny.seq_len, v = kTiny.vocab, k = 3;
  float* data = static_cast<float*>(exec->arg_dict().at("data").raw_data());
  data[t + k] = std::fmod(data[t + k] + 1, static_cast<float>(v));  // sample 1, position k
  exec->Forward(false);
  const std::vector<float> after = exec->outputs()[0].ToVector<float>();
  for (int64_t pos = 0; pos < t; ++pos) {
    double sample0 = 0, sample1 = 0;
    for (int64_t c = 0; c < v; ++c) {
      sample0 += std::fabs(after[pos * v + c] - before[pos * v + c]);
      sample1 += std::fabs(after[(t + pos) * v + c] - before[(t + pos) * v + c]);
    }
    EXPECT_EQ(sample0, 0.0) << "sample 0 changed at position " << pos;
    if (pos < k) {
      EXPECT_EQ(sample1, 0.0) << "position " << pos << " saw token " << k;
    } else {
      EXPECT_GT(sample1, 1e-6) << "position " << pos << " did not see token " << k;
    }
  }
}

// The mean cross-entropy over every position of every window, in double.
double MeanCrossEntropy(Executor& exec) {
  exec.Forward(true);
  const std::vector<float> p = exec.outputs()[0].ToVector<float>();
  const std::vector<float> label = exec.arg_dict().at("softmax_label").ToVector<float>();
  const int64_t v = exec.outputs()[0].shape()[2];
  double sum = 0;
  for (size_t i = 0; i < label.size(); ++i) {
    sum -= std::log(static_cast<double>(p[i * v + static_cast<int64_t>(label[i])]));
  }
  return sum / static_cast<double>(label.size());
}

// Backward gives the gradient of Σ over positions of the cross-entropy / seq_len (the
// SoftmaxOutput's grad_scale), i.e. batch × the mean's: checked against central differences of the
// mean.
// Bucketing's premise (Note [Text buckets]): with ignore_label, lines padded to a short bucket
// and to the longest one give the same outputs at the lines' positions and the same gradients,
// so a bucket computes what the unbucketed model computes on the same lines.
TEST(Gpt, PaddingToALongerBucketChangesNothing) {
  models::GptOptions o = kTiny;
  o.seq_len = 12;  // positions embedded: the longest bucket
  o.ignore_label = -1.0f;
  const int64_t batch = 3, lengths[batch] = {4, 2, 5};
  auto run = [&](int64_t t) {
    auto exec = Executor::SimpleBind(
        models::Gpt(o), Context::CPU(), {{"data", {batch, t}}, {"softmax_label", {batch, t}}},
        GradReq::kWrite, {{"data", GradReq::kNull}, {"softmax_label", GradReq::kNull}});
    auto params = Bind(o, 1, 7);  // the same parameters for both bucket lengths
    for (const auto& [name, array] : params->arg_dict()) {
      if (name != "data" && name != "softmax_label") array.CopyTo(exec->arg_dict().at(name));
    }
    float* data = static_cast<float*>(exec->arg_dict().at("data").raw_data());
    float* label = static_cast<float*>(exec->arg_dict().at("softmax_label").raw_data());
    for (int64_t r = 0; r < batch; ++r) {
      for (int64_t k = 0; k < t; ++k) {
        const bool in_line = k < lengths[r];
        data[r * t + k] = in_line ? static_cast<float>((r * 5 + k * 3) % o.vocab) : 0.0f;
        label[r * t + k] = in_line ? static_cast<float>((r * 5 + k * 3 + 3) % o.vocab) : -1.0f;
      }
    }
    exec->Forward(true);
    exec->Backward();
    return exec;
  };
  auto short_bucket = run(5), long_bucket = run(12);
  const std::vector<float> a = short_bucket->outputs()[0].ToVector<float>();
  const std::vector<float> b = long_bucket->outputs()[0].ToVector<float>();
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t k = 0; k < lengths[r]; ++k) {
      for (int64_t v = 0; v < o.vocab; ++v) {
        ASSERT_NEAR(a[(r * 5 + k) * o.vocab + v], b[(r * 12 + k) * o.vocab + v], 1e-6)
            << "line " << r << " position " << k;
      }
    }
  }
  for (const auto& [name, grad] : short_bucket->grad_dict()) {
    testing::ExpectClose(grad.ToVector<float>(), [&] {
      const std::vector<float> w = long_bucket->grad_dict().at(name).ToVector<float>();
      return std::vector<double>(w.begin(), w.end());
    }(), 1e-4, 1e-7, name);
  }
  // Some gradient is not zero (the lines do train the model).
  const std::vector<float> g = short_bucket->grad_dict().at("tok_embed_weight").ToVector<float>();
  EXPECT_TRUE(std::any_of(g.begin(), g.end(), [](float x) { return std::fabs(x) > 1e-4f; }));
}

TEST(Gpt, GradientsAreThoseOfTheMeanCrossEntropy) {
  const int64_t batch = 2;
  auto exec = Bind(kTiny, batch, 3);
  exec->Forward(true);
  exec->Backward();
  std::mt19937 rng(9);
  int checked = 0;
  for (const auto& [name, grad] : exec->grad_dict()) {
    if (grad.is_none()) continue;
    const std::vector<float> analytic = grad.ToVector<float>();
    float* x = static_cast<float*>(exec->arg_dict().at(name).raw_data());
    for (int trial = 0; trial < 3; ++trial) {
      const int64_t j = std::uniform_int_distribution<int64_t>(0, grad.size() - 1)(rng);
      const float saved = x[j];
      const float eps = 1e-2f;
      x[j] = saved + eps;
      const double up = MeanCrossEntropy(*exec);
      x[j] = saved - eps;
      const double down = MeanCrossEntropy(*exec);
      x[j] = saved;
      const double numeric = (up - down) / (2.0 * eps) * batch;
      EXPECT_NEAR(analytic[j], numeric, 3e-3 + 3e-2 * std::fabs(numeric))
          << name << "[" << j << "]";
      ++checked;
    }
  }
  EXPECT_GE(checked, 3 * 20);
}

// The fixture's size (scripts/make_mxnet_gpt_fixture.py).
constexpr models::GptOptions kFixture = {
    .n_layer = 2, .n_head = 2, .d_model = 8, .seq_len = 6, .vocab = 11, .dropout = 0.0};

std::string Fixture(const std::string& name) {
  return std::string(COHORT_TEST_DATA_DIR) + "/symbols/" + name;
}

// The zoo's GPT is the graph MXNet 1.9.1 builds from the same construction: the same ops in the
// same order with the same names, arguments and shapes, and every attribute MXNet wrote.
TEST(Gpt, GraphEqualsTheOneMXNetBuilds) {
  const Symbol ours = models::Gpt(kFixture);
  const Symbol theirs = Symbol::Load(Fixture("gpt-symbol.json"));
  EXPECT_EQ(ours.ListArguments(), theirs.ListArguments());
  const Shape batch = {2, kFixture.seq_len};
  const Symbol::Shapes a = ours.InferShape({{"data", batch}, {"softmax_label", batch}});
  const Symbol::Shapes b = theirs.InferShape({{"data", batch}, {"softmax_label", batch}});
  EXPECT_EQ(a.arguments, b.arguments);
  EXPECT_EQ(a.outputs, b.outputs);
  const auto ours_order = ours.TopoOrder(), theirs_order = theirs.TopoOrder();
  ASSERT_EQ(ours_order.size(), theirs_order.size());
  for (size_t i = 0; i < ours_order.size(); ++i) {
    EXPECT_EQ(ours_order[i]->name, theirs_order[i]->name) << "node " << i;
    if (ours_order[i]->is_variable() || theirs_order[i]->is_variable()) continue;
    EXPECT_EQ(ours_order[i]->impl->type(), theirs_order[i]->impl->type()) << "node " << i;
    const auto& ours_attrs = ours_order[i]->impl->attrs();
    for (const auto& [key, value] : theirs_order[i]->impl->attrs()) {
      auto it = ours_attrs.find(key);
      ASSERT_NE(it, ours_attrs.end()) << theirs_order[i]->name << " has no " << key;
      EXPECT_EQ(it->second, value) << theirs_order[i]->name << "." << key;
    }
  }
}

// One training step from MXNet's parameters and batch gives MXNet's output and gradients.
TEST(Gpt, TrainingStepMatchesMXNet) {
  const auto fixture = LoadParams(Fixture("gpt-step.params"));
  const Shape batch = fixture.at("in:data").shape();
  auto exec = Executor::SimpleBind(models::Gpt(kFixture), Context::CPU(),
                                   {{"data", batch}, {"softmax_label", batch}}, GradReq::kWrite,
                                   {{"data", GradReq::kNull}, {"softmax_label", GradReq::kNull}});
  int params = 0;
  for (const auto& [key, value] : fixture) {
    if (key.starts_with("arg:")) {
      value.CopyTo(exec->arg_dict().at(key.substr(4)));
      ++params;
    } else if (key.starts_with("in:")) {
      value.CopyTo(exec->arg_dict().at(key.substr(3)));
    }
  }
  EXPECT_EQ(params, static_cast<int>(exec->arg_dict().size()) - 2);
  exec->Forward(true);
  exec->Backward();
  testing::ExpectClose(exec->outputs()[0], fixture.at("out:0"), 1e-3, 1e-5, "output");
  int grads = 0;
  for (const auto& [key, value] : fixture) {
    if (!key.starts_with("grad:")) continue;
    testing::ExpectClose(exec->grad_dict().at(key.substr(5)), value, 1e-3, 1e-5, key);
    ++grads;
  }
  EXPECT_EQ(grads, params);
}

}  // namespace
}  // namespace cohort
