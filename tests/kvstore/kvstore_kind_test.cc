// The kvstore's kind rules (which devices a kind takes, whether it keeps weights) live in
// kvstore/, not in the apps.
#include <gtest/gtest.h>

#include "kvstore/kvstore.h"

namespace cohort {
namespace {

TEST(KVStoreKind, KindsAndTheirRules) {
  EXPECT_FALSE(DescribeKVStore("local").spans_processes);
  EXPECT_TRUE(DescribeKVStore("local").keeps_weights);
  EXPECT_TRUE(DescribeKVStore("dist_sync").spans_processes);
  EXPECT_TRUE(DescribeKVStore("nccl").reduces_on_gpus);
  EXPECT_TRUE(DescribeKVStore("nccl").spans_processes);
  EXPECT_FALSE(DescribeKVStore("device").spans_processes);
  EXPECT_FALSE(DescribeKVStore("device").keeps_weights);
  EXPECT_THROW(DescribeKVStore("horovod"), Error);
  EXPECT_NO_THROW(CheckKVStoreDevices("mpi", {Context::CPU(0), Context::CPU(1)}));
  try {
    CheckKVStoreDevices("nccl", {Context::CPU(0)});
    FAIL() << "nccl took a CPU device";
  } catch (const Error& e) {
    // Without NCCL in the build the kind is refused first, naming the build.
    const std::string what = e.message();
    EXPECT_TRUE(what.find("nccl reduces on GPUs but 'devices' lists cpu:0") != std::string::npos ||
                what.find("this build of Cohort does not have") != std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace cohort
