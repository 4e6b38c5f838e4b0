// Runs under mpirun -np 2: two workers with kvstore=mpi, one device each, batch 8 each, train
// to the same parameters and metrics as one process with two devices and the global batch of 16
// made of the same samples (the workers' batches side by side).
#include <gtest/gtest.h>

#include <random>

#include "io/ndarray_iter.h"
#include "symbol/ops.h"
#include "trainer/trainer.h"

namespace cohort {
namespace {

Symbol SmallMlp() {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
  return sym::SoftmaxOutput(sym::FullyConnected(x, {.num_hidden = 4}, "fc2"), "softmax");
}

// 96 samples, 8 features, 4 classes.
void Blobs(std::vector<float>* x, std::vector<float>* y) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0, 0.3f);
  for (int i = 0; i < 96; ++i) {
    for (int f = 0; f < 8; ++f) x->push_back((f % 4 == i % 4 ? 1.5f : 0.0f) + noise(rng));
    y->push_back(static_cast<float>(i % 4));
  }
}

FitConfig Config() {
  FitConfig c;
  c.epochs = 2;
  c.optimizer_options = {.lr = 0.5, .wd = 1e-4, .momentum = 0.9};
  c.seed = 11;
  c.log_every = 0;
  return c;
}

TEST(MpiTrainer, TwoWorkersEqualOneProcessWithTwoDevices) {
  std::vector<float> x, y;
  Blobs(&x, &y);
  std::shared_ptr<KVStore> kv = KVStore::Create("mpi");
  ASSERT_EQ(kv->num_workers(), 2);
  const int rank = kv->rank();
  NDArrayIter mine({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                   {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                   {.batch_size = 8, .num_parts = 2, .part_index = rank});
  Trainer distributed(SmallMlp(), {Context::CPU(0)}, {}, kv);
  auto dist_results = distributed.Fit(mine, nullptr, Config());

  // The same samples per step in one process: batch k = worker 0's batch k, then worker 1's.
  std::vector<float> xs, ys;
  for (int k = 0; k < 6; ++k) {
    for (int part = 0; part < 2; ++part) {
      for (int i = 0; i < 8; ++i) {
        const int s = part * 48 + k * 8 + i;
        xs.insert(xs.end(), x.begin() + s * 8, x.begin() + s * 8 + 8);
        ys.push_back(y[s]);
      }
    }
  }
  NDArrayIter all({{"data", NDArray::FromVector<float>({96, 8}, xs)}},
                  {{"softmax_label", NDArray::FromVector<float>({96}, ys)}}, {.batch_size = 16});
  Trainer local(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
  auto local_results = local.Fit(all, nullptr, Config());

  std::map<std::string, NDArray> a, b, aux;
  distributed.GetParams(&a, &aux);
  local.GetParams(&b, &aux);
  for (const auto& [name, array] : a) {
    std::vector<float> u = array.ToVector<float>(), v = b.at(name).ToVector<float>();
    for (size_t i = 0; i < u.size(); ++i) ASSERT_NEAR(u[i], v[i], 1e-5) << name << "[" << i << "]";
  }
  // Metrics are summed over the workers: both report accuracy over all 96 samples.
  EXPECT_DOUBLE_EQ(dist_results.back().train[0].second, local_results.back().train[0].second);
}

}  // namespace
}  // namespace cohort
