// The cost model of cohort-plan (Note [Scaling model]) against hand-computed schedules.
#include "apps/scaling_plan.h"

#include "apps/link_units.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "symbol/ops.h"

namespace cohort::plan {
namespace {

// Two layers of 1 s forward, 2 s backward; layer 0 reads key 0 (8 MB), layer 1 reads key 1
// (8 MB): backward makes key 1's gradient at 1+1+2 = 4 s and key 0's at 6 s.
ModelCost TwoLayers() {
  ModelCost m;
  m.layers = {{.name = "a", .op = "FullyConnected", .forward_s = 1, .backward_s = 2, .keys = {0}},
              {.name = "b", .op = "FullyConnected", .forward_s = 1, .backward_s = 2, .keys = {1}}};
  m.key_names = {"a_weight", "b_weight"};
  m.key_bytes = {8 << 20, 8 << 20};
  m.batch = 1;
  return m;
}

TEST(ScalingPlan, RingTreeAndHierarchicalCosts) {
  const Topology one_host{.devices_per_host = 4, .intra = {1e-3, 1e9}, .inter = {1e-2, 1e8}};
  // Ring over 4 devices of one host: 2*3 alpha + 2*3/4 b/beta.
  EXPECT_DOUBLE_EQ(AllReduceSeconds(1e9, 4, one_host, Algorithm::kRing), 6e-3 + 1.5);
  // Tree: 2 log2(4) (alpha + b/beta).
  EXPECT_DOUBLE_EQ(AllReduceSeconds(1e9, 4, one_host, Algorithm::kTree), 4 * (1e-3 + 1));
  // A small message: the tree's 4 alphas beat the ring's 6.
  EXPECT_DOUBLE_EQ(AllReduceSeconds(0, 4, one_host, Algorithm::kAuto), 4e-3);
  EXPECT_EQ(AllReduceSeconds(1e9, 1, one_host, Algorithm::kRing), 0);
  // 8 devices on 2 hosts: flat runs at the inter-host link; hierarchical reduces inside (3
  // alpha + 3/4 b/beta, twice) and rings between the 2 hosts.
  Topology two_hosts = one_host;
  EXPECT_DOUBLE_EQ(AllReduceSeconds(1e9, 8, two_hosts, Algorithm::kRing), 14e-2 + 17.5);
  two_hosts.hierarchical = true;
  EXPECT_DOUBLE_EQ(AllReduceSeconds(1e9, 8, two_hosts, Algorithm::kRing),
                   2 * (3e-3 + 0.75) + (2e-2 + 10));
}

TEST(ScalingPlan, BucketsOverlapBackwardOrWaitForIt) {
  const ModelCost m = TwoLayers();
  // 2 devices, no latency, 8 MB/s: each 8 MB key takes 1 s (2 * 1/2 * b / beta).
  const Topology t{.devices_per_host = 2, .intra = {0, 8 << 20}, .inter = {0, 8 << 20}};
  PlanOptions o{.bucket_bytes = 8 << 20, .overlap = true, .algorithm = Algorithm::kRing};
  // Key 1 is reduced over [4, 5] while layer 0's backward runs; key 0 over [6, 7].
  StepPrediction p = PredictStep(m, 2, t, o);
  EXPECT_DOUBLE_EQ(p.step_s, 7);
  EXPECT_DOUBLE_EQ(p.compute_s, 6);
  EXPECT_DOUBLE_EQ(p.exposed_comm_s, 1);
  EXPECT_DOUBLE_EQ(p.efficiency, 6.0 / 7);
  // Without overlap both wait for backward: [6, 8].
  o.overlap = false;
  EXPECT_DOUBLE_EQ(PredictStep(m, 2, t, o).step_s, 8);
  // One bucket of both keys: reduced once key 0 is ready, over [6, 8].
  o = {.bucket_bytes = 16 << 20, .overlap = true, .algorithm = Algorithm::kRing};
  EXPECT_DOUBLE_EQ(PredictStep(m, 2, t, o).step_s, 8);
  // One device: no communication at all.
  EXPECT_DOUBLE_EQ(PredictStep(m, 1, t, o).step_s, 6);
  // Gradients sent in 16 bits (Note [Gradient compression]): the bucket of both keys takes 1 s,
  // [6, 7].
  o.wire_fraction = 0.5;
  EXPECT_DOUBLE_EQ(PredictStep(m, 2, t, o).step_s, 7);
}

TEST(ScalingPlan, FitLinkRecoversAlphaAndBeta) {
  // 2 participants: time = 2 alpha + b / beta with alpha 5 us, beta 2 GB/s.
  std::vector<std::pair<double, double>> rows;
  for (double b : {1e5, 1e6, 1e7}) rows.push_back({b, 1e-5 + b / 2e9});
  const Link link = FitLink(rows, 2);
  EXPECT_NEAR(link.latency_s, 5e-6, 1e-12);
  EXPECT_NEAR(link.bytes_per_s, 2e9, 1e-3);
  EXPECT_THROW(FitLink({{1e5, 1e-3}}, 2), Error);
}

TEST(ScalingPlan, AnalyzeModelCountsDenseWorkAndKeys) {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
  x = sym::SoftmaxOutput(sym::FullyConnected(x, {.num_hidden = 4}, "fc2"), "softmax");
  const ModelCost m = AnalyzeModel(x, {{"data", Shape({8, 32})}}, 1.0, 1.0);
  EXPECT_EQ(m.batch, 8);
  EXPECT_EQ(m.key_names,
            (std::vector<std::string>{"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}));
  EXPECT_EQ(m.key_bytes, (std::vector<int64_t>{16 * 32 * 4, 16 * 4, 4 * 16 * 4, 4 * 4}));
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[0].name, "fc1");
  EXPECT_DOUBLE_EQ(m.layers[0].forward_s, 2.0 * 8 * 16 * 32);  // 2 x multiply-adds
  EXPECT_DOUBLE_EQ(m.layers[0].backward_s, 2 * m.layers[0].forward_s);
  EXPECT_EQ(m.layers[0].keys, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(m.layers[1].forward_s, 8.0 * 16);  // relu: one unit per output element
  EXPECT_EQ(m.layers[2].keys, (std::vector<int>{2, 3}));
}

TEST(ScalingPlan, ProfileTimesReplaceTheEstimates) {
  ModelCost m = TwoLayers();
  const std::string path =
      (std::filesystem::temp_directory_path() / "cohort_plan_profile.tsv").string();
  {
    std::ofstream out(path);
    out << "# profile: 10 steps, 9 ms per step\nphase\tms_per_step\tshare\n"
        << "forward\t3.0\t0.3\nbackward\t5.0\t0.5\nupdate\t1.0\t0.1\n"
        << "op\ttype\tforward_ms\tbackward_ms\tshare\n"
        << "a\tFullyConnected\t1.0\t3.0\t0.4\nb\tFullyConnected\t1.0\t1.0\t0.2\n";
  }
  EXPECT_EQ(ApplyProfile(&m, path), 2);
  // The ops' shares of the phases: forward 1:1 of 3 ms, backward 3:1 of 5 ms.
  EXPECT_NEAR(m.layers[0].forward_s, 1.5e-3, 1e-12);
  EXPECT_NEAR(m.layers[0].backward_s, 3.75e-3, 1e-12);
  EXPECT_NEAR(m.layers[1].backward_s, 1.25e-3, 1e-12);
  EXPECT_NEAR(m.update_s, 1e-3, 1e-12);
  std::filesystem::remove(path);
  EXPECT_THROW(ApplyProfile(&m, path), Error);
}

}  // namespace
}  // namespace cohort::plan

namespace cohort {
namespace {

TEST(LinkUnits, BandwidthsAndLatenciesTakeTheirUnits) {
  EXPECT_DOUBLE_EQ(ParseBandwidth("100Gbit", "--x"), 12.5e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("100Gbit/s", "--x"), 12.5e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("25Gbps", "--x"), 3.125e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("12.5GB/s", "--x"), 12.5e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("450GB/s", "--x"), 450e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("800Mb/s", "--x"), 1e8);
  EXPECT_DOUBLE_EQ(ParseBandwidth("1GiB/s", "--x"), 1073741824.0);
  EXPECT_DOUBLE_EQ(ParseBandwidth("10 kB/s", "--x"), 1e4);
  EXPECT_DOUBLE_EQ(ParseLatency("3us", "--y"), 3e-6);
  EXPECT_DOUBLE_EQ(ParseLatency("1.5ms", "--y"), 1.5e-3);
  EXPECT_DOUBLE_EQ(ParseLatency("0s", "--y"), 0.0);
  for (const char* bad : {"25", "25Gx", "GB/s", "-1GB/s", "0Gbit", "inf GB/s", "nan GB/s"}) {
    EXPECT_THROW(ParseBandwidth(bad, "--x"), ConfigError) << bad;
  }
  for (const char* bad : {"3", "3 hours", "-1us", "us"}) {
    EXPECT_THROW(ParseLatency(bad, "--y"), ConfigError) << bad;
  }
  try {
    ParseBandwidth("25", "--inter-host");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--inter-host: '25': expected a unit after the number "
                                         "(25GB/s or 25Gbit? they differ by 8)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cohort
