// Training on GPUs equals training on CPU devices: one GPU, two GPUs (where visible), with the
// kvstore updating or every device updating itself. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "base/logging.h"
#include "io/ndarray_iter.h"
#include "ndarray/device_api.h"
#include "symbol/models/models.h"
#include "symbol/ops.h"
#include "tests/test_util.h"
#include "trainer/trainer.h"

namespace cohort {
namespace {

const bool kQuiet = (SetLogLevel("warn"), true);
#if COHORT_NCCL
constexpr bool kNccl = true;
#else
constexpr bool kNccl = false;
#endif

// A small LeNet-like net: convolution, pooling, batch norm, fully connected, softmax.
Symbol SmallConvNet() {
  Symbol x = sym::Variable("data");
  x = sym::Convolution(x, {.kernel = {3, 3}, .num_filter = 8, .pad = {1, 1}}, "conv1");
  x = sym::BatchNorm(x, {.fix_gamma = false}, "bn1");
  x = sym::Activation(x, "relu", "relu1");
  x = sym::Pooling(x, {.kernel = {2, 2}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                   "pool1");
  x = sym::Flatten(x, "flat");
  x = sym::FullyConnected(x, {.num_hidden = 4}, "fc1");
  return sym::SoftmaxOutput(x, "softmax");
}

std::unique_ptr<NDArrayIter> Images() {
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0, 0.5f);
  std::vector<float> x, y;
  for (int i = 0; i < 64; ++i) {
    const int c = i % 4;
    for (int p = 0; p < 8 * 8; ++p) x.push_back((p % 4 == c ? 1.0f : 0.0f) + noise(rng));
    y.push_back(static_cast<float>(c));
  }
  return std::make_unique<NDArrayIter>(
      NDArrayIter::NamedArrays{{"data", NDArray::FromVector<float>({64, 1, 8, 8}, x)}},
      NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({64}, y)}},
      BatchOptions{.batch_size = 16, .shuffle = true, .seed = 3});
}

std::map<std::string, NDArray> Train(const std::vector<Context>& devices, bool update_on_kvstore,
                                     const std::string& kvstore = "local") {
  Trainer t(SmallConvNet(), devices, {}, std::shared_ptr<KVStore>(KVStore::Create(kvstore)));
  FitConfig c;
  c.epochs = 2;
  c.optimizer_options = {.lr = 0.1, .wd = 1e-4, .momentum = 0.9};
  c.update_on_kvstore = update_on_kvstore;
  c.seed = 11;
  c.log_every = 0;
  auto data = Images();
  t.Fit(*data, nullptr, c);
  std::map<std::string, NDArray> args, aux;
  t.GetParams(&args, &aux);
  for (auto& [name, a] : aux) args["aux:" + name] = a;
  return args;
}

TEST(GpuTrainer, OneGpuEqualsCpu) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  for (bool on_kvstore : {true, false}) {
    testing::ExpectClose(Train({Context::GPU(0)}, on_kvstore), Train({Context::CPU(0)}, on_kvstore),
                         1e-3, 1e-3, on_kvstore ? "update_on_kvstore" : "update on device");
  }
}

TEST(GpuTrainer, DeviceKVStoreEqualsLocal) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  if (!kNccl) GTEST_SKIP() << "built without NCCL";
  testing::ExpectClose(Train({Context::GPU(0)}, true, "device"), Train({Context::CPU(0)}, true),
                       1e-3, 1e-3, "device");
}

TEST(GpuTrainer, TwoGpusEqualTwoCpuDevices) {
  if (device::Count() < 2) GTEST_SKIP() << "fewer than 2 GPUs visible";
  const std::map<std::string, NDArray> cpu = Train({Context::CPU(0), Context::CPU(1)}, false);
  testing::ExpectClose(Train({Context::GPU(0), Context::GPU(1)}, false), cpu, 1e-3, 1e-3,
                       "2 GPUs, local");
  if (kNccl) {
    testing::ExpectClose(Train({Context::GPU(0), Context::GPU(1)}, true, "device"), cpu, 1e-3, 1e-3,
                         "2 GPUs, device");
  }
}

// Note [Non-finite gradients] on a GPU: the check runs on the device (FindNonFinite) and stops
// at the same step naming the same parameter as on the CPU, with the kvstore updating and with
// the device updating itself. The CPU half runs everywhere.
TEST(GpuTrainer, NonFiniteGradientStopsAsOnTheCpu) {
  auto stop_message = [](Context ctx, bool update_on_kvstore) {
    std::vector<float> x(64 * 8 * 8, 0.5f), y(64, 1.0f);
    x[40 * 64 + 9] = std::numeric_limits<float>::quiet_NaN();  // sample 40: the third batch
    NDArrayIter data(
        NDArrayIter::NamedArrays{{"data", NDArray::FromVector<float>({64, 1, 8, 8}, x)}},
        NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({64}, y)}},
        BatchOptions{.batch_size = 16, .shuffle = false});
    Trainer t(SmallConvNet(), {ctx});
    FitConfig c;
    c.update_on_kvstore = update_on_kvstore;
    c.log_every = 0;
    return testing::ErrorOf([&] { t.Fit(data, nullptr, c); });
  };
  for (bool on_kvstore : {true, false}) {
    const std::string cpu = stop_message(Context::CPU(0), on_kvstore);
    EXPECT_NE(cpu.find("epoch 0, batch 3: the summed gradient of 'conv1_weight' holds NaN"),
              std::string::npos)
        << cpu;
    if (device::Count() > 0) {
      EXPECT_EQ(stop_message(Context::GPU(0), on_kvstore), cpu);
    }
  }
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible (the CPU half passed)";
}

}  // namespace
}  // namespace cohort
