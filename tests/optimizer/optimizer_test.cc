// Each optimizer against a step computed by hand, schedules, initializers and state files.
#include "optimizer/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "ndarray/device_api.h"
#include "ndarray/params_io.h"
#include "optimizer/initializer.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ExpectNear;

NDArray V(std::vector<float> v) {
  return NDArray::FromVector<float>({static_cast<int64_t>(v.size())}, v);
}

// MXNet 1.9.1's optimizers, three steps each (scripts/make_mxnet_optimizer_fixtures.py: lr 0.1,
// wd 0.01 on "fc_weight", rescale_grad 0.5): cohort-train's optimizers run the same rules.
TEST(Optimizer, EachOptimizerEqualsMXNets) {
  struct Case {
    const char* fixture;
    const char* name;
    OptimizerOptions options;
    float tolerance;  // 0: bit for bit
  };
  auto with = [](const std::string& name, auto&& edit) {
    OptimizerOptions o = OptimizerOptions::DefaultsFor(name);
    o.lr = 0.1;
    o.wd = 0.01;
    o.rescale_grad = 0.5;
    edit(o);
    return o;
  };
  auto none = [](OptimizerOptions&) {};
  const Case cases[] = {
      {"sgd", "sgd", with("sgd", none), 0},
      {"sgd_mom_clip", "sgd", with("sgd", [](auto& o) { o.momentum = 0.9, o.clip_gradient = 0.3; }),
       0},
      {"nag", "nag", with("nag", [](auto& o) { o.momentum = 0.9; }), 0},
      {"signum", "signum", with("signum", [](auto& o) { o.wd_lh = 0.01; }), 0},
      {"signsgd", "signum", with("signum", [](auto& o) { o.momentum = 0; }), 0},
      {"ftml", "ftml", with("ftml", [](auto& o) { o.clip_gradient = 0.3; }), 0},
      {"adam", "adam", with("adam", none), 0},
      {"rmsprop", "rmsprop", with("rmsprop", none), 0},
      {"rmsprop_centered", "rmsprop",
       with("rmsprop", [](auto& o) { o.centered = true, o.clip_weights = 0.8; }), 0},
      {"ftrl", "ftrl", with("ftrl", none), 0},
      {"adagrad", "adagrad", with("adagrad", [](auto& o) { o.clip_gradient = 0.3; }), 0},
      {"adadelta", "adadelta", with("adadelta", [](auto& o) { o.rho = 0.8; }), 0},
      {"adamax", "adamax", with("adamax", none), 0},
      // MXNet's norm is a scaled nrm2; Cohort sums the squares in double.
      {"lamb", "lamb", with("lamb", none), 1e-6f},
      {"lamb_bounds_clip", "lamb",
       with("lamb",
            [](auto& o) {
              o.lower_bound = 0.5, o.upper_bound = 0.9, o.clip_gradient = 0.3;
              o.bias_correction = false;
            }),
       1e-6f},
  };
  const ParamsFile file =
      LoadParamsFile(std::string(COHORT_TEST_DATA_DIR) + "/mxnet/optimizers.params");
  auto array = [&](const std::string& name) {
    for (size_t i = 0; i < file.names.size(); ++i) {
      if (file.names[i] == name) return file.arrays[i].CopyTo(Context::CPU());
    }
    ADD_FAILURE() << "no " << name << " in optimizers.params";
    return NDArray();
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fixture);
    auto optimizer = Optimizer::Create(c.name, c.options);
    optimizer->set_param_names({{0, "fc_weight"}});
    NDArray w = array(std::string(c.fixture) + ":w0");
    for (int step = 1; step <= 3; ++step) {
      optimizer->Update(0, w, array(std::string(c.fixture) + ":g" + std::to_string(step)));
      const std::vector<float> want =
          array(std::string(c.fixture) + ":w" + std::to_string(step)).ToVector<float>();
      const std::vector<float> got = w.ToVector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (c.tolerance == 0) {
          ASSERT_EQ(got[i], want[i]) << "step " << step << ", element " << i;
        } else {
          ASSERT_NEAR(got[i], want[i], c.tolerance * (1 + std::fabs(want[i])))
              << "step " << step << ", element " << i;
        }
      }
    }
  }
}

// Every optimizer's update on a GPU (optimizer_gpu.cu) equals its CPU update bit for bit: one
// rule, no fused multiply-adds on either side. Runs where a GPU is visible (gpu-check.sh).
TEST(Optimizer, GpuUpdatesEqualCpuUpdates) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  for (const char* name : {"sgd", "nag", "adam", "adamw", "rmsprop", "signum", "ftml", "ftrl",
                           "adagrad", "adadelta", "adamax", "lamb", "sgld"}) {
    for (bool variant : {false, true}) {  // momentum / centered / clipping on the second pass
      SCOPED_TRACE(std::string(name) + (variant ? " (variant)" : ""));
      OptimizerOptions o = OptimizerOptions::DefaultsFor(name);
      o.lr = 0.05, o.wd = 0.01, o.rescale_grad = 0.5;
      if (variant) o.momentum = 0.8, o.centered = true, o.clip_gradient = 0.7;
      auto cpu = Optimizer::Create(name, o), gpu = Optimizer::Create(name, o);
      cpu->set_param_names({{0, "fc_weight"}});
      gpu->set_param_names({{0, "fc_weight"}});
      std::vector<float> w0(1000), grads(1000);
      for (size_t i = 0; i < w0.size(); ++i) {
        w0[i] = std::sin(0.37f * static_cast<float>(i));
        grads[i] = std::cos(0.11f * static_cast<float>(i)) * 1.5f;
      }
      NDArray wc = NDArray::FromVector<float>({1000}, w0);
      NDArray wg = wc.CopyTo(Context::GPU(0));
      const NDArray gc = NDArray::FromVector<float>({1000}, grads);
      const NDArray gg = gc.CopyTo(Context::GPU(0));
      for (int step = 0; step < 3; ++step) {
        cpu->Update(0, wc, gc);
        gpu->Update(0, wg, gg);
      }
      const std::vector<float> on_gpu = wg.CopyTo(Context::CPU()).ToVector<float>();
      const std::vector<float> on_cpu = wc.ToVector<float>();
      // LAMB's norms are summed in another order on the GPU; SGLD's noise takes log and cos,
      // which CUDA's libm may round otherwise than glibc's.
      for (size_t i = 0; i < on_cpu.size(); ++i) {
        if (std::string(name) == "lamb" || std::string(name) == "sgld") {
          ASSERT_NEAR(on_gpu[i], on_cpu[i], 1e-6 * (1 + std::fabs(on_cpu[i]))) << i;
        } else {
          ASSERT_EQ(on_gpu[i], on_cpu[i]) << i;
        }
      }
    }
  }
}

// Note [Multi-precision weights] on a GPU (optimizer_gpu.cu's casts): the float16 and bfloat16
// weights, and the master copies, equal the CPU's bit for bit, from half-precision gradients.
TEST(Optimizer, GpuMultiPrecisionEqualsCpu) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  for (DType type : {DType::kFloat16, DType::kBFloat16}) {
    for (const char* name : {"sgd", "adam"}) {
      SCOPED_TRACE(std::string(name) + ", " + std::string(DTypeName(type)));
      const OptimizerOptions o{.lr = 0.05, .momentum = 0.9, .multi_precision = true};
      auto cpu = Optimizer::Create(name, o), gpu = Optimizer::Create(name, o);
      std::vector<float> w0(1000), grads(1000);
      for (size_t i = 0; i < w0.size(); ++i) {
        w0[i] = std::sin(0.37f * static_cast<float>(i));
        grads[i] = std::cos(0.11f * static_cast<float>(i)) * 1e-2f;
      }
      NDArray wc = NDArray::FromVector<float>({1000}, w0).AsType(type);
      NDArray wg = wc.CopyTo(Context::GPU(0));
      const NDArray gc = NDArray::FromVector<float>({1000}, grads).AsType(type);
      const NDArray gg = gc.CopyTo(Context::GPU(0));
      for (int step = 0; step < 3; ++step) {
        cpu->Update(0, wc, gc);
        gpu->Update(0, wg, gg);
      }
      const std::vector<float> on_gpu = wg.CopyTo(Context::CPU()).ToVector<float>();
      EXPECT_EQ(on_gpu, wc.ToVector<float>());
    }
  }
}

// SGLD (MXNet's rule; its own noise): half a step down the rescaled gradient plus Gaussian noise
// of variance lr, drawn alike for a key and step wherever it is computed, and anew each step.
TEST(Optimizer, SgldStepsDownAndAddsNoiseOfVarianceLr) {
  OptimizerOptions o;
  o.lr = 0.04, o.wd = 0.0, o.rescale_grad = 0.5, o.seed = 7;
  auto sgld = Optimizer::Create("sgld", o), again = Optimizer::Create("sgld", o);
  const int64_t n = 200000;
  NDArray w = NDArray::Zeros({n}), w2 = NDArray::Zeros({n});
  const NDArray g = NDArray::Full({n}, 2.0f);
  sgld->Update(0, w, g);
  again->Update(0, w2, g);
  EXPECT_EQ(w.ToVector<float>(), w2.ToVector<float>()) << "the same key and step, the same draw";
  // w = -lr/2 · (0.5 · 2) + noise: mean -0.02, standard deviation sqrt(0.04) = 0.2.
  const std::vector<float> v = w.ToVector<float>();
  double sum = 0, squares = 0;
  for (float x : v) sum += x;
  const double mean = sum / n;
  for (float x : v) squares += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, -0.02, 0.002);
  EXPECT_NEAR(std::sqrt(squares / n), 0.2, 0.002);
  sgld->Update(0, w, NDArray::Zeros({n}));  // a second step draws other noise
  const std::vector<float> second = w.ToVector<float>();
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i) same += second[i] - v[i] == 0.0f;
  EXPECT_LT(same, 10);
}

TEST(Optimizer, SgdWithMomentumWeightDecayRescaleAndClip) {
  OptimizerOptions o{
      .lr = 0.1, .wd = 0.01, .rescale_grad = 0.5, .clip_gradient = 1.0, .momentum = 0.9};
  auto sgd = Optimizer::Create("sgd", o);
  sgd->set_param_names({{0, "fc_weight"}});
  NDArray w = V({1.0f, -2.0f}), g = V({4.0f, 0.2f});
  // g' = clip(0.5 g) = [1, 0.1]; grad = g' + 0.01 w = [1.01, 0.08]
  sgd->Update(0, w, g);  // mom = -0.1 grad; w += mom
  ExpectNear(w, {1 - 0.101, -2 - 0.008});
  sgd->Update(0, w, g);  // mom = 0.9 mom - 0.1 (g' + 0.01 w)
  const double m0 = 0.9 * -0.101 - 0.1 * (1 + 0.01 * 0.899);
  const double m1 = 0.9 * -0.008 - 0.1 * (0.1 + 0.01 * -2.008);
  ExpectNear(w, {0.899 + m0, -2.008 + m1});
}

TEST(Optimizer, NoWeightDecayOnBiases) {
  auto sgd = Optimizer::Create("sgd", {.lr = 1.0, .wd = 0.5});
  sgd->set_param_names({{0, "fc_bias"}, {1, "fc_weight"}});
  NDArray b = V({2.0f}), w = V({2.0f});
  sgd->Update(0, b, V({0.0f}));
  sgd->Update(1, w, V({0.0f}));
  ExpectNear(b, {2.0});
  ExpectNear(w, {1.0});
}

// Per-key multipliers (a variable's __lr_mult__ and __wd_mult__): lr_mult scales the step,
// wd_mult replaces the by-name rule (here decaying a bias, and not a weight).
TEST(Optimizer, LrMultAndWdMultPerKey) {
  auto sgd = Optimizer::Create("sgd", {.lr = 1.0, .wd = 0.5});
  sgd->set_param_names({{0, "fc_bias"}, {1, "fc_weight"}, {2, "fc2_weight"}});
  sgd->set_lr_mult({{1, 0.0}, {2, 0.25}});
  sgd->set_wd_mult({{0, 2.0}, {2, 0.0}});
  auto clone = sgd->Clone();
  NDArray b = V({2.0f}), w = V({2.0f}), w2 = V({2.0f});
  clone->Update(0, b, V({1.0f}));   // 2 - 1 * (1 + 2 * 0.5 * 2)
  clone->Update(1, w, V({1.0f}));   // lr 0: unchanged
  clone->Update(2, w2, V({1.0f}));  // 2 - 0.25 * 1, no decay
  ExpectNear(b, {-1.0});
  ExpectNear(w, {2.0});
  ExpectNear(w2, {1.75});
}

TEST(Optimizer, Nag) {
  auto nag = Optimizer::Create("nag", {.lr = 0.1, .momentum = 0.9});
  NDArray w = V({1.0f});
  nag->Update(0, w, V({2.0f}));  // m = 0; w += 1.9 (0 - 0.2); mom = -0.2
  ExpectNear(w, {1 - 0.38});
  nag->Update(0, w, V({2.0f}));  // m = -0.18; w += 0.18 + 1.9 (-0.18 - 0.2)
  ExpectNear(w, {0.62 + 0.18 - 1.9 * 0.38});
  // With weight decay, MXNet 1.9.1's NAG(learning_rate=0.1, momentum=0.9, wd=0.1) on a weight
  // of 1 and gradients 2, -1, 0.5, 3 (its momentum takes the decay of the new weight).
  auto mx = Optimizer::Create("nag", {.lr = 0.1, .wd = 0.1, .momentum = 0.9});
  mx->set_param_names({{0, "fc_weight"}});
  NDArray x = V({1.0f});
  std::vector<float> after;
  for (float g : {2.0f, -1.0f, 0.5f, 3.0f}) {
    mx->Update(0, x, V({g}));
    after.push_back(x.ToVector<float>()[0]);
  }
  testing::ExpectClose(after, {0.601, 0.6127129, 0.43192706, -0.25700802}, 0, 1e-6, "mxnet");
}

TEST(Optimizer, AdamAndAdamW) {
  OptimizerOptions o{.lr = 0.01, .wd = 0.1, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-8};
  auto adam = Optimizer::Create("adam", o);
  adam->set_param_names({{0, "w_weight"}});
  NDArray w = V({1.0f});
  adam->Update(0, w, V({0.5f}));
  // grad = 0.5 + 0.1 = 0.6; m = 0.06; v = 0.00036; lr_t = 0.01 sqrt(0.001)/0.1
  const double lr_t = 0.01 * std::sqrt(1 - 0.999) / (1 - 0.9);
  ExpectNear(w, {1 - lr_t * 0.06 / (std::sqrt(0.00036) + 1e-8)}, 1e-6);
  auto adamw = Optimizer::Create("adamw", o);
  adamw->set_param_names({{0, "w_weight"}});
  NDArray u = V({1.0f});
  adamw->Update(0, u, V({0.5f}));
  // decoupled: w -= lr wd w, then the Adam step on g = 0.5 (m = 0.05, v = 0.00025)
  ExpectNear(u, {1 - 0.01 * 0.1 - lr_t * 0.05 / (std::sqrt(0.00025) + 1e-8)}, 1e-6);
}

TEST(Optimizer, RMSProp) {
  auto rms = Optimizer::Create("rmsprop", {.lr = 0.01, .epsilon = 1e-8, .gamma1 = 0.9});
  NDArray w = V({1.0f});
  rms->Update(0, w, V({2.0f}));  // n = 0.1 * 4 = 0.4; w -= 0.01 * 2 / sqrt(0.4)
  ExpectNear(w, {1 - 0.02 / std::sqrt(0.4 + 1e-8)});
}

TEST(Optimizer, UnknownNamesAndBadOptions) {
  EXPECT_THROW(Optimizer::Create("lambda", {}), Error);
  EXPECT_THROW(Optimizer::Create("adadelta", {.rho = 1.0}), Error);
  EXPECT_THROW(Optimizer::Create("sgd", {.momentum = 1.5}), Error);
}

TEST(LRScheduler, FactorMultiFactorCosinePolyAndWarmup) {
  auto factor = LRScheduler::Create("factor", {.base_lr = 1.0, .step = 10, .factor = 0.5});
  // MXNet 1.9.1's FactorScheduler(step=10, factor=0.5) at updates 9, 10, 11, 20, 21, 25:
  // 1, 1, 0.5, 0.5, 0.25, 0.25 (the first decay after `step` updates, not at the step-th).
  EXPECT_DOUBLE_EQ((*factor)(9), 1.0);
  EXPECT_DOUBLE_EQ((*factor)(10), 1.0);
  EXPECT_DOUBLE_EQ((*factor)(11), 0.5);
  EXPECT_DOUBLE_EQ((*factor)(20), 0.5);
  EXPECT_DOUBLE_EQ((*factor)(21), 0.25);
  EXPECT_DOUBLE_EQ((*factor)(25), 0.25);
  auto multi = LRScheduler::Create("multifactor", {.base_lr = 1.0, .factor = 0.1, .steps = {5, 8}});
  EXPECT_DOUBLE_EQ((*multi)(5), 1.0);
  EXPECT_NEAR((*multi)(6), 0.1, 1e-12);
  EXPECT_NEAR((*multi)(9), 0.01, 1e-12);
  auto cosine = LRScheduler::Create("cosine", {.base_lr = 1.0, .max_update = 100, .final_lr = 0.0});
  EXPECT_NEAR((*cosine)(50), 0.5, 1e-12);
  EXPECT_NEAR((*cosine)(100), 0.0, 1e-12);
  auto poly = LRScheduler::Create("poly", {.base_lr = 1.0, .max_update = 10, .pwr = 2});
  EXPECT_NEAR((*poly)(5), 0.25, 1e-12);
  auto warm =
      LRScheduler::Create("constant", {.base_lr = 1.0, .warmup_steps = 4, .warmup_begin_lr = 0});
  EXPECT_DOUBLE_EQ((*warm)(1), 0.25);
  EXPECT_DOUBLE_EQ((*warm)(4), 1.0);
  EXPECT_THROW(LRScheduler::Create("exp", {}), Error);
}

TEST(Optimizer, SchedulerDrivesTheRate) {
  auto sgd = Optimizer::Create("sgd", {.lr = 1.0});
  sgd->set_scheduler(LRScheduler::Create("factor", {.base_lr = 1.0, .step = 1, .factor = 0.5}));
  NDArray w = V({0.0f});
  sgd->Update(0, w, V({1.0f}));  // num_update 1: lr 1 (MXNet's FactorScheduler(step=1))
  sgd->Update(0, w, V({1.0f}));  // lr 0.5
  ExpectNear(w, {-1.5});
}

TEST(Optimizer, StatesSaveAndLoadResumeExactly) {
  const std::string path = (std::filesystem::temp_directory_path() / "cohort_opt.states").string();
  auto a = Optimizer::Create("adam", {.lr = 0.1});
  NDArray w1 = V({1.0f, 2.0f});
  a->Update(3, w1, V({0.5f, -1.0f}));
  a->SaveStates(path);
  NDArray w2 = w1.CopyTo(Context::CPU());
  auto b = Optimizer::Create("adam", {.lr = 0.1});
  b->LoadStates(path, {{3, Shape{2}}});
  a->Update(3, w1, V({0.25f, 0.5f}));
  b->Update(3, w2, V({0.25f, 0.5f}));
  EXPECT_EQ(w1.ToVector<float>(), w2.ToVector<float>());
  EXPECT_EQ(b->num_update(), 2);
  auto sgd = Optimizer::Create("sgd", {});
  EXPECT_THROW(sgd->LoadStates(path, {{3, Shape{2}}}), DataError);  // adam states are not sgd's
  std::filesystem::remove(path);
}

// The bits of a float16 array's elements.
std::vector<uint16_t> HalfBits(const NDArray& a) {
  std::vector<uint16_t> bits;
  for (float16 h : a.ToVector<float16>()) bits.push_back(h.bits);
  return bits;
}

// Note [Multi-precision weights]: a float16 weight updates through a float32 master copy, so
// each update is the float32 rule's on the master copy (gradients given in float16 or float32),
// and the weight is the master copy rounded; the master copy is saved with the states.
TEST(Optimizer, MultiPrecisionUpdatesAFloat32MasterCopy) {
  const OptimizerOptions o{.lr = 0.01, .momentum = 0.9, .multi_precision = true};
  const std::vector<float> start = {1.0f, -0.5f, 0.25f, 3.0f};
  const std::vector<std::vector<float>> grads = {
      {0.1f, 0.2f, -0.3f, 0.4f}, {1e-3f, -2e-3f, 3e-3f, 0.5f}, {0.25f, 0.5f, 0.75f, -1.0f}};
  for (const char* kind : {"sgd", "adam", "lamb"}) {
    for (DType grad_type : {DType::kFloat16, DType::kFloat32}) {
      SCOPED_TRACE(std::string(kind) + ", " + std::string(DTypeName(grad_type)) + " gradients");
      auto mixed = Optimizer::Create(kind, o), plain = Optimizer::Create(kind, o);
      NDArray half = V(start).AsType(DType::kFloat16);
      NDArray master = half.AsType(DType::kFloat32);  // what the master copy starts from
      for (const std::vector<float>& g : grads) {
        const NDArray g16 = V(g).AsType(DType::kFloat16);
        mixed->Update(7, half, g16.AsType(grad_type));
        plain->Update(7, master, g16.AsType(DType::kFloat32));
        EXPECT_EQ(HalfBits(half), HalfBits(master.AsType(DType::kFloat16)));
      }
      // The small steps stay in the master copy (saved last); float16 alone would lose them.
      const std::string path =
          (std::filesystem::temp_directory_path() / "cohort_mp.states").string();
      mixed->SaveStates(path);
      const ParamsFile saved = LoadParamsFile(path);
      const int master_index = std::string(kind) == "sgd" ? 1 : 2;
      const std::string entry = "state:7:" + std::to_string(master_index);
      bool found = false;
      for (size_t i = 0; i < saved.names.size(); ++i) {
        if (saved.names[i] != entry) continue;
        found = true;
        EXPECT_EQ(saved.arrays[i].ToVector<float>(), master.ToVector<float>());
      }
      EXPECT_TRUE(found) << entry;
      // Resumed from the file, the next update equals the uninterrupted one.
      auto resumed = Optimizer::Create(kind, o);
      resumed->LoadStates(path, {{7, StateTarget(Shape{4}, DType::kFloat16)}});
      NDArray half2 = half.CopyTo(Context::CPU());
      const NDArray g = V({0.5f, 0.5f, -0.5f, 2e-4f}).AsType(grad_type);
      mixed->Update(7, half, g);
      resumed->Update(7, half2, g);
      EXPECT_EQ(HalfBits(half), HalfBits(half2));
      // A float32 weight's states have no master copy: the file does not fit one.
      EXPECT_THROW(Optimizer::Create(kind, o)->LoadStates(path, {{7, Shape{4}}}), DataError);
      std::filesystem::remove(path);
    }
  }
}

TEST(Optimizer, AHalfPrecisionWeightNeedsMultiPrecision) {
  auto sgd = Optimizer::Create("sgd", {.lr = 0.1});
  sgd->set_param_names({{0, "fc1_weight"}});
  NDArray w = V({1.0f}).AsType(DType::kBFloat16);
  try {
    sgd->Update(0, w, V({1.0f}));
    ADD_FAILURE() << "a bfloat16 weight updated without multi_precision";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("key 0 (fc1_weight) is a bfloat16 weight: set multi_precision"),
              std::string::npos)
        << e.message();
  }
  EXPECT_EQ(w.ToVector<bfloat16>()[0].bits, bfloat16(1.0f).bits);  // untouched
  // Another dtype is refused whatever the setting.
  NDArray ints = NDArray::Zeros(Shape{1}, DType::kInt32);
  EXPECT_THROW(Optimizer::Create("sgd", {.multi_precision = true})->Update(0, ints, V({1.0f})),
               Error);
  // A float16 weight's states without its master copy are refused naming the missing entry.
  ParamsFile f;
  f.names = {"state:0:0", "count:0", "optimizer:sgd"};
  f.arrays = {V({0.5f}), NDArray::FromVector<int64_t>({1}, {1}),
              NDArray::FromVector<int64_t>({1}, {1})};
  auto mp = Optimizer::Create("sgd", {.momentum = 0.9, .multi_precision = true});
  try {
    mp->LoadStates(f, "h.states", {{0, StateTarget(Shape{1}, DType::kFloat16)}});
    ADD_FAILURE() << "states without a master copy accepted";
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("has no 'state:0:1' beside its other states"), std::string::npos)
        << e.message();
  }
}

// What Adam saves after one update of key 0 (weight of shape (2,)): two states and a count.
ParamsFile AdamStates() {
  ParamsFile f;
  f.names = {"state:0:0", "state:0:1", "count:0", "optimizer:adam"};
  f.arrays = {V({0.1f, 0.2f}), V({0.3f, 0.4f}), NDArray::FromVector<int64_t>({1}, {1}),
              NDArray::FromVector<int64_t>({1}, {1})};
  return f;
}

// Loads `file` into a fresh Adam for key 0 (fc1_weight, shape (2,)); "" when accepted, else the
// error's message. A refused file leaves the optimizer's earlier state alone.
std::string AdamLoadError(const ParamsFile& file) {
  auto adam = Optimizer::Create("adam", {});
  adam->set_param_names({{0, "fc1_weight"}});
  try {
    adam->LoadStates(file, "x.states", {{0, Shape{2}}});
  } catch (const DataError& e) {
    EXPECT_EQ(adam->num_update(), 0);
    return e.message();
  }
  return "";
}

ParamsFile With(ParamsFile f, const std::string& name, NDArray array) {
  for (size_t i = 0; i < f.names.size(); ++i) {
    if (f.names[i] == name) {
      if (array.is_none() && array.shape().ndim() == 0) {  // NDArray(): drop the entry
        f.names.erase(f.names.begin() + static_cast<std::ptrdiff_t>(i));
        f.arrays.erase(f.arrays.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        f.arrays[i] = array;
      }
      return f;
    }
  }
  f.names.push_back(name);
  f.arrays.push_back(array);
  return f;
}

// Each of these crashed Optimizer::Update (a smaller or non-float32 state, an empty count or
// optimizer entry), was accepted (a larger or float64 state, a key the network lacks), or threw a
// bare "stoi" (a malformed name). Each is now refused up front naming the file and the entry.
TEST(Optimizer, StatesFilesAreCheckedAgainstTheNetworkBeforeUse) {
  EXPECT_EQ(AdamLoadError(AdamStates()), "");
  const auto expect_refused = [](const ParamsFile& f, const std::string& says) {
    const std::string error = AdamLoadError(f);
    EXPECT_NE(error.find("optimizer states 'x.states': "), std::string::npos) << error;
    EXPECT_NE(error.find(says), std::string::npos) << "expected \"" << says << "\" in: " << error;
  };
  const ParamsFile ok = AdamStates();
  expect_refused(With(ok, "state:0:0", V({0.1f})),
                 "'state:0:0', a state of key 0 (fc1_weight), must be float32 of shape (2,), not "
                 "float32 of shape (1,)");
  expect_refused(With(ok, "state:0:1", V({1, 2, 3})), "not float32 of shape (3,)");
  expect_refused(With(ok, "state:0:0", NDArray::FromVector<int8_t>({2}, {1, 2})),
                 "not int8 of shape (2,)");
  expect_refused(With(ok, "state:0:0", NDArray::Zeros({2}, DType::kFloat16)), "not float16");
  expect_refused(With(ok, "state:0:0", NDArray::FromVector<double>({2}, {1, 2})), "not float64");
  expect_refused(With(ok, "count:0", NDArray::Zeros({0}, DType::kInt64)),
                 "'count:0' must hold one int64, not int64 of shape (0,)");
  expect_refused(With(ok, "optimizer:adam", NDArray::Zeros({0}, DType::kInt64)),
                 "'optimizer:adam' must hold one int64");
  expect_refused(With(ok, "count:0", NDArray::FromVector<int64_t>({1}, {-1})),
                 "'count:0' counts -1 updates");
  expect_refused(With(ok, "count:0", NDArray::FromVector<int64_t>({1}, {5})),
                 "'count:0' is 5, more than the optimizer's 1 updates");
  expect_refused(
      With(ok, "state:7:0", V({0, 0})),
      "'state:7:0' is the state of key 7, but the network's 1 parameters have keys 0 to 0");
  expect_refused(With(ok, "count:x", NDArray::FromVector<int64_t>({1}, {1})),
                 "'count:x': 'x' is not a key number");
  expect_refused(With(ok, "state:0", V({0, 0})), "'state:0' is not state:KEY:INDEX");
  expect_refused(With(ok, "state::0", V({0, 0})), "'' is not a key number");
  expect_refused(With(ok, "state:99999999999999999999:0", V({0, 0})), "is not a key number");
  expect_refused(With(ok, "state:0:2", V({0, 0})),
                 "adam keeps 2 state(s) a weight, indexed 0 to 1");
  expect_refused(With(ok, "state:0:-1", V({0, 0})), "adam keeps 2 state(s) a weight");
  expect_refused(With(ok, "weights", V({0, 0})),
                 "'weights' is not state:KEY:INDEX, count:KEY, optimizer:NAME or checkpoint:");
  expect_refused(With(ok, "state:0:1", NDArray()), "key 0 (fc1_weight) has no 'state:0:1'");
  expect_refused(With(ok, "count:0", NDArray()), "has states but no 'count:0'");
  expect_refused(
      With(With(With(ok, "state:0:0", NDArray()), "state:0:1", NDArray()), "count:0",
           NDArray::FromVector<int64_t>({1}, {1})),
      "key 0 (fc1_weight) was updated 1 times but has none of the 2 state(s) adam keeps");
  expect_refused(With(ok, "optimizer:adam", NDArray()), "holds no optimizer:adam entry");
  expect_refused(With(ok, "optimizer:sgd", NDArray::FromVector<int64_t>({1}, {1})),
                 "a second optimizer entry");
  // Entries of the checkpoint's own are its to check (CheckpointGlobalBatch).
  EXPECT_EQ(AdamLoadError(With(ok, "checkpoint:global_batch", NDArray::Zeros({1}, DType::kInt64))),
            "");
}

TEST(Optimizer, SgdWithoutMomentumKeepsNoStates) {
  ParamsFile f;
  f.names = {"count:0", "optimizer:sgd"};
  f.arrays = {NDArray::FromVector<int64_t>({1}, {3}), NDArray::FromVector<int64_t>({1}, {3})};
  auto sgd = Optimizer::Create("sgd", {});
  sgd->LoadStates(f, "s.states", {{0, Shape{2}}});
  EXPECT_EQ(sgd->num_update(), 3);
  f.names.push_back("state:0:0");
  f.arrays.push_back(V({0, 0}));
  try {
    sgd->LoadStates(f, "s.states", {{0, Shape{2}}});
    FAIL() << "a momentum state was taken by sgd without momentum";
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("sgd keeps 0 state(s) a weight (were the states saved with other "
                               "optimizer settings?)"),
              std::string::npos)
        << e.message();
  }
}

TEST(Initializer, ByNameAndXavierScale) {
  Initializer init({.kind = "xavier", .magnitude = 3});
  SeedStream rng(1);
  NDArray w = NDArray::Zeros({50, 20, 5, 5}), b = NDArray::Full({50}, 9), g = NDArray::Zeros({3});
  init("conv_weight", w, rng);
  init("conv_bias", b, rng);
  init("bn_gamma", g, rng);
  EXPECT_EQ(b.ToVector<float>(), std::vector<float>(50, 0.0f));
  EXPECT_EQ(g.ToVector<float>(), std::vector<float>(3, 1.0f));
  // fan_in = 500, fan_out = 1250: scale = sqrt(3 / 875)
  const double scale = std::sqrt(3.0 / 875.0);
  std::vector<float> v = w.ToVector<float>();
  double sq = 0;
  for (float x : v) {
    ASSERT_LE(std::fabs(x), scale + 1e-7);
    sq += x * x;
  }
  EXPECT_NEAR(std::sqrt(sq / v.size()), scale / std::sqrt(3.0), 0.01 * scale);  // uniform's std
  EXPECT_THROW(init("data", w, rng), Error);
  EXPECT_THROW(Initializer({.kind = "orthogonal"}), Error);
}

// A variable's "__init__" (the text MXNet 1.9.1's Initializer.dumps() writes) fills it whatever
// its name, as MXNet's Module does; what Cohort lacks is an error naming the variable.
TEST(Initializer, InitAttributeOverridesTheRulesByName) {
  Initializer init({.kind = "xavier"});
  SeedStream rng(1);
  NDArray b = NDArray::Zeros({4}), w = NDArray::Zeros({50, 20}), x = NDArray::Zeros({3});
  init("fc_bias", b, rng, R"(["constant", {"value": 0.5}])");
  init("data", x, rng, R"(["one", {}])");
  init("fc_weight", w, rng, R"(["uniform", {"scale": 0.1}])");
  EXPECT_EQ(b.ToVector<float>(), std::vector<float>(4, 0.5f));
  EXPECT_EQ(x.ToVector<float>(), std::vector<float>(3, 1.0f));
  float largest = 0;
  for (float v : w.ToVector<float>()) largest = std::max(largest, std::fabs(v));
  EXPECT_LE(largest, 0.1f);
  EXPECT_GT(largest, 0.09f);
  const InitializerOptions xavier = Initializer::FromInitAttr(
      "w", R"(["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}])");
  EXPECT_EQ(xavier.kind, "xavier");
  EXPECT_EQ(xavier.magnitude, 2);
  const InitializerOptions msra =
      Initializer::FromInitAttr("w", R"(["msraprelu", {"factor_type": "in", "slope": 0.1}])");
  EXPECT_EQ(msra.kind, "msra");
  EXPECT_EQ(msra.factor_type, "in");
  EXPECT_DOUBLE_EQ(msra.slope, 0.1);
  // PReLU's gamma as MXNet's LeakyReLU names it (symbol composition sets it: SymbolTest).
  init("prelu_gamma", x, rng, R"(["Constant", {"value": 0.25}])");
  EXPECT_EQ(x.ToVector<float>(), std::vector<float>(3, 0.25f));
  for (const char* bad : {R"(["orthogonal", {"scale": 1.414, "rand_type": "uniform"}])",
                          R"(["constant", {"value": [1, 2]}])", R"(["xavier", {"gain": 2}])",
                          "constant", R"(["constant"])"}) {
    try {
      init("fc_bias", b, rng, bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'fc_bias': __init__ '"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace cohort
