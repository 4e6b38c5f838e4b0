// Runs under mpirun -np 2: two workers with kvstore=mpi, one device each, batch 8 each, train
// to the same parameters and metrics as one process with two devices and the global batch of 16
// made of the same samples (the workers' batches side by side), gradients reduced in buckets
// while backward runs.
#include <gtest/gtest.h>

#include <random>

#include "io/ndarray_iter.h"
#include "symbol/ops.h"
#include "kvstore/gradient_bucketer.h"
#include "trainer/trainer.h"

namespace cohort {
namespace {

Symbol Mlp(int64_t hidden) {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = hidden}, "fc1"), "relu", "relu1");
  return sym::SoftmaxOutput(sym::FullyConnected(x, {.num_hidden = 4}, "fc2"), "softmax");
}

// 96 samples, `features` features, 4 classes.
void Blobs(int64_t features, std::vector<float>* x, std::vector<float>* y) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0, 0.3f);
  for (int i = 0; i < 96; ++i) {
    for (int64_t f = 0; f < features; ++f) {
      x->push_back((f % 4 == i % 4 ? 1.5f : 0.0f) + noise(rng));
    }
    y->push_back(static_cast<float>(i % 4));
  }
}

FitConfig Config(bool update_on_kvstore) {
  FitConfig c;
  c.epochs = 2;
  c.optimizer_options = {.lr = 0.5, .wd = 1e-4, .momentum = 0.9};
  c.seed = 11;
  c.log_every = 0;
  c.update_on_kvstore = update_on_kvstore;
  return c;
}

std::map<std::string, NDArray> Params(const Trainer& t) {
  std::map<std::string, NDArray> args, aux;
  t.GetParams(&args, &aux);
  return args;
}

void ExpectParamsNear(const Trainer& a, const Trainer& b, double tolerance) {
  const std::map<std::string, NDArray> pa = Params(a), pb = Params(b);
  for (const auto& [name, array] : pa) {
    std::vector<float> u = array.ToVector<float>(), v = pb.at(name).ToVector<float>();
    for (size_t i = 0; i < u.size(); ++i) {
      ASSERT_NEAR(u[i], v[i], tolerance) << name << "[" << i << "]";
    }
  }
}

// Every worker holds what rank 0 holds: twice each value is the sum over the 2 workers.
void ExpectAlikeOnEveryWorker(KVStore& kv, const std::map<std::string, NDArray>& params) {
  for (const auto& [name, array] : params) {
    const std::vector<float> mine = array.ToVector<float>();
    std::vector<double> sum(mine.begin(), mine.end());
    kv.SumAcrossWorkers(sum);
    for (size_t i = 0; i < mine.size(); ++i) {
      ASSERT_EQ(sum[i], 2.0 * static_cast<double>(mine[i])) << name << "[" << i << "]";
    }
  }
}

// Two workers with one device each and batch 8 train like one process with two devices and
// batch 16: parameters within 1e-5, equal metrics. Sliced global batches (Note [Sharding]) are
// the one process's batches as they are; MXNet's parts are its batches side by side.
void ExpectTwoWorkersEqualOneProcess(int64_t features, int64_t hidden, bool update_on_kvstore,
                                     BatchOptions::Sharding sharding) {
  std::vector<float> x, y;
  Blobs(features, &x, &y);
  std::shared_ptr<KVStore> kv = KVStore::Create("mpi");
  ASSERT_EQ(kv->num_workers(), 2);
  ASSERT_TRUE(OverlapsBackward(*kv)) << "CTest sets COHORT_KVSTORE_OVERLAP=1, and the test main "
                                 "initialises MPI for a communication thread";
  const int rank = kv->rank();
  NDArrayIter mine({{"data", NDArray::FromVector<float>({96, features}, x)}},
                   {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                   {.batch_size = 8, .num_parts = 2, .part_index = rank, .sharding = sharding});
  Trainer distributed(Mlp(hidden), {Context::CPU(0)}, {}, kv);
  auto dist_results = distributed.Fit(mine, nullptr, Config(update_on_kvstore));

  // The same samples per step in one process: batch k = worker 0's batch k, then worker 1's.
  std::vector<float> xs, ys;
  for (int k = 0; k < 6 && sharding == BatchOptions::Sharding::kParts; ++k) {
    for (int part = 0; part < 2; ++part) {
      for (int i = 0; i < 8; ++i) {
        const int s = part * 48 + k * 8 + i;
        xs.insert(xs.end(), x.begin() + s * features, x.begin() + (s + 1) * features);
        ys.push_back(y[s]);
      }
    }
  }
  if (sharding == BatchOptions::Sharding::kGlobalBatch) xs = x, ys = y;
  NDArrayIter all({{"data", NDArray::FromVector<float>({96, features}, xs)}},
                  {{"softmax_label", NDArray::FromVector<float>({96}, ys)}}, {.batch_size = 16});
  Trainer local(Mlp(hidden), {Context::CPU(0), Context::CPU(1)});
  auto local_results = local.Fit(all, nullptr, Config(update_on_kvstore));

  ExpectParamsNear(distributed, local, 1e-5);
  // Metrics are summed over the workers: both report accuracy over all 96 samples.
  EXPECT_DOUBLE_EQ(dist_results.back().train[0].second, local_results.back().train[0].second);
}

TEST(MpiTrainer, TwoWorkersEqualOneProcessWithTwoDevices) {
  ExpectTwoWorkersEqualOneProcess(8, 16, true, BatchOptions::Sharding::kGlobalBatch);
  ExpectTwoWorkersEqualOneProcess(8, 16, true, BatchOptions::Sharding::kParts);
}

// CTest runs this binary with COHORT_KVSTORE_OVERLAP=1 and COHORT_KVSTORE_BUCKET_MB=1: fc1_weight
// (1024 x 300 floats, 1.2 MB) is a bucket of its own after one with the other three parameters, so
// the first bucket is reduced while fc1's backward still runs (Note [Overlapped push]).
TEST(MpiTrainer, BucketsReducedDuringBackwardEqualOneProcess) {
  for (bool update_on_kvstore : {true, false}) {
    ExpectTwoWorkersEqualOneProcess(1024, 300, update_on_kvstore,
                                    BatchOptions::Sharding::kGlobalBatch);
  }
}

// Note [Multi-precision weights] under MPI: float16 weights, whose float16 gradients are widened
// before the workers sum them, train on two workers as on one process's two devices (within a
// float16 rounding), and every worker holds the same weights bit for bit.
TEST(MpiTrainer, Float16WeightsTrainAsOneProcess) {
  auto network = [] {
    auto cast = [](const Symbol& x, const char* dtype) {
      return Symbol::Create("Cast", {x}, {{"dtype", dtype}});
    };
    Symbol x = cast(sym::Variable("data"), "float16");
    x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
    x = sym::FullyConnected(x, {.num_hidden = 4}, "fc2");
    return sym::SoftmaxOutput(cast(x, "float32"), "softmax");
  };
  std::vector<float> x, y;
  Blobs(8, &x, &y);
  FitConfig c = Config(true);
  c.optimizer_options.lr = 0.1;
  c.optimizer_options.multi_precision = true;
  std::shared_ptr<KVStore> kv = KVStore::Create("mpi");
  NDArrayIter mine({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                   {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                   {.batch_size = 8, .num_parts = 2, .part_index = kv->rank()});
  Trainer distributed(network(), {Context::CPU(0)}, {}, kv);
  distributed.Fit(mine, nullptr, c);
  NDArrayIter all({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                  {{"softmax_label", NDArray::FromVector<float>({96}, y)}}, {.batch_size = 16});
  Trainer local(network(), {Context::CPU(0), Context::CPU(1)});
  local.Fit(all, nullptr, c);
  EXPECT_EQ(Params(distributed).at("fc1_weight").dtype(), DType::kFloat16);
  ExpectParamsNear(distributed, local, 2e-3);
  ExpectAlikeOnEveryWorker(*kv, Params(distributed));
}

// Frozen parameters have no kvstore key: rank 0's values reach every worker, so a worker that
// started from other values (another file, another draw) still trains the same network.
TEST(MpiTrainer, FrozenParametersStartFromRankZeros) {
  std::vector<float> x, y;
  Blobs(8, &x, &y);
  std::shared_ptr<KVStore> kv = KVStore::Create("mpi");
  const int rank = kv->rank();
  NDArrayIter data({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                   {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                   {.batch_size = 8, .num_parts = 2, .part_index = rank});
  FitConfig c = Config(true);
  c.epochs = 1;
  c.fixed_params = {"fc1_.*"};
  c.arg_params["fc1_bias"] = NDArray::Full({16}, rank == 0 ? 0.5 : -0.5);
  c.allow_missing = true;  // the rest from the initializer
  Trainer t(Mlp(16), {Context::CPU(0)}, {}, kv);
  t.Fit(data, nullptr, c);
  const std::map<std::string, NDArray> args = Params(t);
  for (float v : args.at("fc1_bias").ToVector<float>()) EXPECT_EQ(v, 0.5f);
  ExpectAlikeOnEveryWorker(*kv, args);
}

// Note [Gradient compression]: gradients crossing as bfloat16 (fc1's 1.2 MB through the ring)
// train like float32 ones within bfloat16's rounding, and the workers stay alike bit for bit.
TEST(MpiTrainer, BFloat16GradientsTrainAsFloat32WithinTheirRounding) {
  std::vector<float> x, y;
  Blobs(1024, &x, &y);
  std::map<std::string, NDArray> params[2];
  for (bool compressed : {false, true}) {
    std::shared_ptr<KVStore> kv = KVStore::Create("mpi");
    if (compressed) {
      ASSERT_TRUE(kv->SetGradientCompression(DType::kBFloat16));
    }
    NDArrayIter mine({{"data", NDArray::FromVector<float>({96, 1024}, x)}},
                     {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                     {.batch_size = 8, .num_parts = 2, .part_index = kv->rank()});
    Trainer t(Mlp(300), {Context::CPU(0)}, {}, kv);
    FitConfig c = Config(false);
    c.optimizer_options.lr = 0.05;
    t.Fit(mine, nullptr, c);
    params[compressed] = Params(t);
    ExpectAlikeOnEveryWorker(*kv, params[compressed]);
  }
  int64_t differ = 0;
  for (const auto& [name, array] : params[0]) {
    const std::vector<float> a = array.ToVector<float>(), b = params[1].at(name).ToVector<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_NEAR(a[i], b[i], 2e-3) << name << "[" << i << "]";
      differ += a[i] != b[i];
    }
  }
  EXPECT_GT(differ, 0) << "no gradient was narrowed";
}

// Note [Loss scaling]: a sample whose scaled gradient overflows sits in rank 1's rows of the third
// global batch; the summed gradient overflows on both workers, so both skip that step and halve
// the scale, and they end where one process on two devices ends with the same data.
TEST(MpiTrainer, AnOverflowOnOneWorkerSkipsTheStepOnEvery) {
  std::vector<float> x, y;
  Blobs(8, &x, &y);
  x[44 * 8 + 3] = 1e37f;  // global batch 3 is samples 32..47; rank 1 reads 40..47
  std::shared_ptr<KVStore> kv = KVStore::Create("mpi");
  FitConfig c = Config(false);
  c.epochs = 1;
  c.loss_scaling = "dynamic";
  NDArrayIter mine({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                   {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                   {.batch_size = 8, .num_parts = 2, .part_index = kv->rank()});
  Trainer distributed(Mlp(16), {Context::CPU(0)}, {}, kv);
  const auto results = distributed.Fit(mine, nullptr, c);
  EXPECT_EQ(results.back().overflow_skips, 1) << "rank " << kv->rank();
  EXPECT_EQ(results.back().loss_scale, 32768.0) << "rank " << kv->rank();
  NDArrayIter all({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                  {{"softmax_label", NDArray::FromVector<float>({96}, y)}}, {.batch_size = 16});
  Trainer local(Mlp(16), {Context::CPU(0), Context::CPU(1)});
  local.Fit(all, nullptr, c);
  ExpectParamsNear(distributed, local, 1e-5);
}

}  // namespace
}  // namespace cohort
