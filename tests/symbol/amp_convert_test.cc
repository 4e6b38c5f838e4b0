// The mixed-precision pass (Note [AMP pass]): where casts go, that a cast feeding several readers
// is made once, the types that follow, MXNet's names, and the casts removed again.
#include "symbol/amp_convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cohort {
namespace {

Symbol FC(const Symbol& x, const std::string& name, int hidden) {
  return Symbol::Create("FullyConnected", {x}, {{"num_hidden", std::to_string(hidden)}}, name);
}

// Each non-variable node as "op name <- input, input" (inputs by node name).
std::vector<std::string> Nodes(const Symbol& s) {
  std::vector<std::string> out;
  for (const auto& node : s.TopoOrder()) {
    if (node->is_variable()) continue;
    std::string line = node->op + " " + node->name + " <-";
    for (const NodeEntry& in : node->inputs) line += " " + in.node->name;
    out.push_back(line);
  }
  return out;
}

// data feeds two layers (one cast of it, shared); fc1's bfloat16 output feeds a reshape (which
// keeps it: its kernels take any type) and an exp (float32: cast back); the sum and the loss
// are float32.
TEST(AmpPass, CastsWhereTheTypesChangeOnce) {
  Symbol data = Symbol::Variable("data");
  Symbol fc1 = FC(data, "fc1", 6), fc2 = FC(data, "fc2", 6);
  Symbol flat = Symbol::Create("Reshape", {fc1}, {{"shape", "(0, -1)"}}, "flat");
  Symbol e = Symbol::Create("exp", {fc2}, {}, "exp0");
  Symbol sum = Symbol::Create("elemwise_add", std::vector<Symbol>{flat, e}, {}, "sum");
  Symbol net = Symbol::Create("SoftmaxOutput", {sum}, {}, "softmax");
  const Symbol amp = ConvertToMixedPrecision(net, {.target = DType::kBFloat16});
  EXPECT_EQ(Nodes(amp),
            (std::vector<std::string>{
                "amp_cast data_amp_cast_bfloat16 <- data",
                "amp_cast fc1_weight_amp_cast_bfloat16 <- fc1_weight",
                "amp_cast fc1_bias_amp_cast_bfloat16 <- fc1_bias",
                "FullyConnected fc1 <- data_amp_cast_bfloat16 fc1_weight_amp_cast_bfloat16 "
                "fc1_bias_amp_cast_bfloat16",
                "Reshape flat <- fc1",
                "amp_cast flat_output_amp_cast_float32 <- flat",
                "amp_cast fc2_weight_amp_cast_bfloat16 <- fc2_weight",
                "amp_cast fc2_bias_amp_cast_bfloat16 <- fc2_bias",
                "FullyConnected fc2 <- data_amp_cast_bfloat16 fc2_weight_amp_cast_bfloat16 "
                "fc2_bias_amp_cast_bfloat16",
                "amp_cast fc2_output_amp_cast_float32 <- fc2",
                "exp exp0 <- fc2_output_amp_cast_float32",
                "elemwise_add sum <- flat_output_amp_cast_float32 exp0",
                "SoftmaxOutput softmax <- sum softmax_label",
            }));
  // The arguments are the network's, float32 as bound; the layers compute in bfloat16.
  EXPECT_EQ(amp.ListArguments(), net.ListArguments());
  const Symbol::Types t = amp.GetInternals().InferType({{"data", DType::kFloat32}});
  const std::vector<std::string> names = amp.GetInternals().ListOutputs();
  std::map<std::string, DType> type_of;
  for (size_t i = 0; i < names.size(); ++i) {
    if (t.outputs[i]) type_of[names[i]] = *t.outputs[i];
  }
  EXPECT_EQ(type_of.at("fc1_output"), DType::kBFloat16);
  EXPECT_EQ(type_of.at("flat_output"), DType::kBFloat16);
  EXPECT_EQ(type_of.at("exp0_output"), DType::kFloat32);
  EXPECT_EQ(type_of.at("softmax_output"), DType::kFloat32);
  // Removing the casts gives the network back.
  EXPECT_EQ(RemoveAmpCasts(amp).ToJSON(), net.ToJSON());
}

// Note [BatchNorm in low precision]: a convolution's bfloat16 output goes through BatchNorm and
// relu into the next convolution with no cast; gamma, beta and the statistics stay float32
// (not cast), and so does BatchNorm on the float32 list or with float32 data.
TEST(AmpPass, BatchNormFollowsItsData) {
  auto conv = [](const Symbol& x, const std::string& name) {
    return Symbol::Create("Convolution", {x}, {{"kernel", "(3, 3)"}, {"num_filter", "4"}}, name);
  };
  Symbol data = Symbol::Variable("data");
  Symbol bn =
      Symbol::Create("BatchNorm", {conv(data, "conv1")}, {{"output_mean_var", "True"}}, "bn");
  Symbol relu = Symbol::Create("Activation", {bn[0]}, {{"act_type", "relu"}}, "relu");
  Symbol net = Symbol::Group({conv(relu, "conv2"), bn[1]});
  const Symbol amp = ConvertToMixedPrecision(net, {.target = DType::kBFloat16});
  const std::vector<std::string> nodes = Nodes(amp);
  EXPECT_NE(std::find(nodes.begin(), nodes.end(),
                      "BatchNorm bn <- conv1 bn_gamma bn_beta bn_moving_mean bn_moving_var"),
            nodes.end());
  EXPECT_NE(std::find(nodes.begin(), nodes.end(), "Activation relu <- bn"), nodes.end());
  EXPECT_NE(std::find(nodes.begin(), nodes.end(),
                      "Convolution conv2 <- relu conv2_weight_amp_cast_bfloat16 "
                      "conv2_bias_amp_cast_bfloat16"),
            nodes.end());
  const Symbol::Types t = amp.InferType({{"data", DType::kFloat32}});
  EXPECT_EQ(t.outputs[0], DType::kFloat32);  // cast back at the end
  EXPECT_EQ(t.outputs[1], DType::kFloat32);  // the batch mean, not cast
  EXPECT_EQ(amp.ListOutputs()[1], "bn_mean");
  // On the float32 list (as MXNet's fp32_ops): cast to float32 and back, as before.
  const Symbol kept = ConvertToMixedPrecision(
      net, {.target = DType::kBFloat16, .float32_ops = {"BatchNorm", "SoftmaxOutput"}});
  const std::vector<std::string> kept_nodes = Nodes(kept);
  EXPECT_NE(std::find(kept_nodes.begin(), kept_nodes.end(),
                      "BatchNorm bn <- conv1_output_amp_cast_float32 bn_gamma bn_beta "
                      "bn_moving_mean bn_moving_var"),
            kept_nodes.end());
}

TEST(AmpPass, OutputsStayFloat32AndExclusionsAreKept) {
  Symbol data = Symbol::Variable("data");
  Symbol net = FC(FC(data, "fc1", 4), "fc2", 3);
  Symbol amp = ConvertToMixedPrecision(net, {.target = DType::kFloat16});
  EXPECT_EQ(amp.ListOutputs(), (std::vector<std::string>{"fc2_output_amp_cast_float32_output"}));
  EXPECT_EQ(amp.InferType({{"data", DType::kFloat32}}).outputs[0], DType::kFloat32);
  // fc1 in float32: its output is cast down once for fc2, its inputs are not cast.
  amp = ConvertToMixedPrecision(net, {.target = DType::kFloat16, .excluded_names = {"fc1"}});
  const std::vector<std::string> nodes = Nodes(amp);
  EXPECT_EQ(nodes[0], "FullyConnected fc1 <- data fc1_weight fc1_bias");
  EXPECT_EQ(nodes[1], "amp_cast fc1_output_amp_cast_float16 <- fc1");
  EXPECT_THROW(ConvertToMixedPrecision(net, {.target = DType::kInt8}), Error);
}

}  // namespace
}  // namespace cohort
