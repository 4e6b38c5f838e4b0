// The device/nccl kvstores (Note [NCCL kvstore]): sums over the GPUs in place and out of place,
// over several steps and keys; clear errors for CPU values. GPU cases skip without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "kvstore/collective_watchdog.h"
#include "kvstore/gradient_bucketer.h"
#include "kvstore/kvstore.h"
#include "ndarray/device_api.h"
#include "operator/common/gpu_resources.h"
#include "operator/common/operator.h"

namespace cohort {
namespace {

#if COHORT_NCCL

TEST(NcclKVStore, RefusesValuesOnTheCpu) {
  auto kv = KVStore::Create("device");
  EXPECT_FALSE(kv->SupportsUpdateOnKVStore());
  kv->Init({0}, {NDArray::Zeros({4})});
  const std::vector<std::vector<NDArray>> values = {{NDArray::Zeros({4})}};
  try {
    kv->PushPull({0}, values, values);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reduces on GPUs but a value is on cpu:0"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclKVStore, SumsOverEveryGpu) {
  const int gpus = device::Count();
  if (gpus == 0) GTEST_SKIP() << "no GPU visible";
  auto kv = KVStore::Create("device");
  const std::vector<int> keys = {3, 7};
  const std::vector<Shape> shapes = {Shape({1000}), Shape({3, 5000})};
  kv->Init(keys, {NDArray::Zeros(shapes[0]), NDArray::Zeros(shapes[1])});
  std::vector<std::vector<NDArray>> values(2), outs(2);
  for (int k = 0; k < 2; ++k) {
    for (int d = 0; d < gpus; ++d) {
      values[k].push_back(NDArray::Empty(shapes[k], DType::kFloat32, Context::GPU(d)));
      outs[k].push_back(NDArray::Zeros(shapes[k], DType::kFloat32, Context::GPU(d)));
    }
  }
  const float n = static_cast<float>(gpus);
  for (int step = 1; step <= 3; ++step) {
    for (int k = 0; k < 2; ++k) {
      for (int d = 0; d < gpus; ++d) values[k][d].Fill(step * (d + 1) + k);
    }
    kv->PushPull(keys, values, outs);  // out of place: values stay
    for (int k = 0; k < 2; ++k) {
      const float want = step * n * (n + 1) / 2 + k * n;
      for (int d = 0; d < gpus; ++d) {
        EXPECT_EQ(outs[k][d].ToVector<float>(), std::vector<float>(outs[k][d].size(), want))
            << "step " << step << " key " << keys[k] << " gpu " << d;
        EXPECT_EQ(values[k][d].ToVector<float>()[0], step * (d + 1) + k);
      }
    }
    kv->PushPull(keys, values, values);  // in place, as the trainer reduces gradients
    for (int k = 0; k < 2; ++k) {
      const float want = step * n * (n + 1) / 2 + k * n;
      for (int d = 0; d < gpus; ++d) EXPECT_EQ(values[k][d].ToVector<float>().back(), want);
    }
  }
}

// Note [Gradient compression]: with bfloat16 or float16 every GPU ends with the sum of the
// values rounded to that type, summed there and widened back (over one GPU: each value rounded).
// Values of 1 + 2^-10 lose their last bits in bfloat16 but not in float16; 2^-12 in either.
TEST(NcclKVStore, CompressedGradientsCrossInTheHalfType) {
  const int gpus = device::Count();
  if (gpus == 0) GTEST_SKIP() << "no GPU visible";
  for (DType wire : {DType::kBFloat16, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(wire));
    auto kv = KVStore::Create("device");
    ASSERT_TRUE(kv->SetGradientCompression(wire));
    const std::vector<int> keys = {0, 1};
    const std::vector<Shape> shapes = {Shape({5}), Shape({2, 3000})};
    kv->Init(keys, {NDArray::Zeros(shapes[0]), NDArray::Zeros(shapes[1])});
    for (const double fraction : {1.0 / 1024, 1.0 / 4096}) {
      std::vector<std::vector<NDArray>> values(2);
      for (int k = 0; k < 2; ++k) {
        for (int d = 0; d < gpus; ++d) {
          values[k].push_back(
              NDArray::Full(shapes[k], 1.0 + fraction, DType::kFloat32, Context::GPU(d)));
        }
      }
      kv->PushPull(keys, values, values);
      // Each GPU's 1 + fraction rounded to the wire type, times the GPUs (exact for a few).
      const double one = NDArray::Full({1}, 1.0 + fraction).AsType(wire).ToVector<double>()[0];
      const float want = NDArray::Full({1}, one * gpus).AsType(wire).ToVector<float>()[0];
      for (int k = 0; k < 2; ++k) {
        for (int d = 0; d < gpus; ++d) {
          EXPECT_EQ(values[k][d].ToVector<float>(), std::vector<float>(shapes[k].Size(), want))
              << "key " << k << " gpu " << d << " fraction " << fraction;
        }
      }
      if (fraction == 1.0 / 1024) {  // the types differ here, so the cast is seen to happen
        EXPECT_EQ(want == 1.0f * gpus, wire == DType::kBFloat16);
      }
    }
  }
}

// The trainer's path on GPUs (Note [Overlapped push]): buckets launched from the communication
// thread as their keys become ready, on NCCL's streams after the fence on the devices' work, and
// waited for in Finish. One GPU (as the GPU machines lent have) still runs every stream, event
// and launch of it: NCCL's sum over one rank copies each value into its output (a no-op in
// place). The values are written as backward writes gradients: by kernels still queued on an
// executor's blocking stream when their key is reported ready, so a bucket that skipped the
// fence would read the previous step's values.
TEST(NcclKVStore, OverlappedBucketsOnEveryGpu) {
  const int gpus = device::Count();
  if (gpus == 0) GTEST_SKIP() << "no GPU visible";
  auto kv = KVStore::Create("device");
  GradientBucketer bucketer(*kv);
  ASSERT_TRUE(bucketer.overlaps());
  // 6 MB a key, over the default 4 MB bucket: a bucket each, launched one after another.
  const std::vector<int> keys = {0, 1, 2};
  const Shape shape({3, 1 << 19});
  kv->Init(keys, {NDArray::Zeros(shape), NDArray::Zeros(shape), NDArray::Zeros(shape)});
  std::vector<std::vector<NDArray>> values(3), outs(3);
  for (int k = 0; k < 3; ++k) {
    for (int d = 0; d < gpus; ++d) {
      values[k].push_back(NDArray::Empty(shape, DType::kFloat32, Context::GPU(d)));
      outs[k].push_back(NDArray::Zeros(shape, DType::kFloat32, Context::GPU(d)));
    }
  }
  std::vector<std::unique_ptr<op::GpuResources>> executors;  // a blocking stream a device
  std::vector<NDArray> ones;
  for (int d = 0; d < gpus; ++d) {
    executors.push_back(op::GpuResources::Create(d));
    ones.push_back(NDArray::Full(shape, 1.0, DType::kFloat32, Context::GPU(d)));
  }
  for (int step = 1; step <= 3; ++step) {
    const bool in_place = step == 3;  // as the trainer reduces gradients
    bucketer.Start(keys, values, in_place ? values : outs, {0, 1, 2});
    for (int k = 2; k >= 0; --k) {  // backward makes the last layer's gradient first
      for (int d = 0; d < gpus; ++d) {
        const auto scale = op::OpRegistry::Get().Create(
            "_mul_scalar", {{"scalar", std::to_string(step * 10 + k + d)}});
        const op::OpContext ctx{.ctx = Context::GPU(d), .gpu = executors[d].get()};
        executors[d]->MakeCurrent();
        for (int rewrite = 0; rewrite < 20; ++rewrite) {  // keeps the stream busy a while
          scale->Forward(ctx, {ones[d]}, {GradReq::kWrite}, {values[k][d]}, {});
        }
      }
      bucketer.KeyReady(k);
    }
    bucketer.Finish();
    for (int k = 0; k < 3; ++k) {
      const float want = static_cast<float>(gpus * (step * 10.0 + k) + gpus * (gpus - 1) / 2);
      for (int d = 0; d < gpus; ++d) {
        const std::vector<float> got = (in_place ? values : outs)[k][d].ToVector<float>();
        EXPECT_EQ(got.front(), want) << "step " << step << " key " << k << " gpu " << d;
        EXPECT_EQ(got.back(), want) << "step " << step << " key " << k << " gpu " << d;
      }
    }
  }
}

// Note [No hang]: the abort hooks a failing job runs before MPI_Abort (or a collective past its
// deadline before its exit) abort the live communicators with ncclCommAbort. That call must
// return, promptly, on communicators that have reduced, so the process can end. One GPU gives
// one communicator whose collectives never wait on a peer; the watchdog's own path up to the
// hooks is tested without a GPU (CollectiveWatchdogDeathTest).
TEST(NcclKVStoreDeathTest, AbortHooksAbortTheCommunicatorsAndReturn) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  // A fresh process: CUDA does not survive a fork of a process that used it.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // "device": the same communicators and hook as "nccl", without MPI (which the GPU
        // machine cannot start: mpirun and Open MPI's plugins are not carried there).
        auto kv = KVStore::Create("device");
        kv->Init({0}, {NDArray::Zeros({1024})});
        std::vector<std::vector<NDArray>> values = {
            {NDArray::Zeros({1024}, DType::kFloat32, Context::GPU(0))}};
        values[0][0].Fill(2.0);
        kv->PushPull({0}, values, values);  // connects: the communicator is live
        if (values[0][0].ToVector<float>()[5] != 2.0f) std::_Exit(4);
        if (RunAbortHooks() != 1) std::_Exit(5);  // the kvstore's hook: its communicator
        std::fputs("communicators aborted\n", stderr);
        std::_Exit(3);  // the kvstore's destructor would destroy the aborted communicators
      },
      ::testing::ExitedWithCode(3), "communicators aborted");
}

#else

TEST(NcclKVStore, AbsentFromThisBuildSaysSo) {
  EXPECT_THROW(KVStore::Create("nccl"), Error);
  EXPECT_THROW(KVStore::Create("device"), Error);
}

#endif

}  // namespace
}  // namespace cohort
