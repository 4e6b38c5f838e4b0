// MXNet symbol JSON: files exported by MXNet 1.9.1 (scripts/make_mxnet_symbol_fixtures.py),
// hand-written older formats, round trips and errors.
#include <gtest/gtest.h>

#include "symbol/models/models.h"
#include "symbol/symbol.h"

namespace cohort {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(COHORT_TEST_DATA_DIR) + "/symbols/" + name;
}

// Parameters: every argument but the data and the label.
int64_t CountParameters(const Symbol& s, const Shape& data) {
  Symbol::Shapes shapes = s.InferShape({{"data", data}});
  EXPECT_TRUE(shapes.complete);
  const auto args = s.ListArguments();
  int64_t n = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "data" && args[i] != "softmax_label") n += shapes.arguments[i].Size();
  }
  return n;
}

TEST(SymbolJSON, LoadsMXNetExports) {
  // Counts printed by the fixture script from MXNet's own infer_shape.
  Symbol mlp = Symbol::Load(Fixture("mlp-symbol.json"));
  EXPECT_EQ(CountParameters(mlp, {2, 1, 28, 28}), 109386);
  Symbol lenet = Symbol::Load(Fixture("lenet-symbol.json"));
  EXPECT_EQ(CountParameters(lenet, {2, 1, 28, 28}), 431080);
  Symbol res = Symbol::Load(Fixture("resblock-symbol.json"));
  EXPECT_EQ(CountParameters(res, {2, 3, 32, 32}), 5306);
  EXPECT_EQ(res.ListAuxiliaryStates().size(), 6u);
  EXPECT_EQ(res.InferShape({{"data", {2, 3, 32, 32}}}).outputs[0], Shape({2, 10}));
}

TEST(SymbolJSON, ZooModelsMatchTheMXNetExports) {
  Symbol ours = models::LeNet(), theirs = Symbol::Load(Fixture("lenet-symbol.json"));
  EXPECT_EQ(ours.ListArguments(), theirs.ListArguments());
  EXPECT_EQ(CountParameters(ours, {2, 1, 28, 28}), CountParameters(theirs, {2, 1, 28, 28}));
  EXPECT_EQ(models::Mlp().ListArguments(),
            Symbol::Load(Fixture("mlp-symbol.json")).ListArguments());
}

// The same ops in the same order with the same names and attributes, arguments, auxiliary
// states and shapes for `data`.
void ExpectSameNetwork(const Symbol& ours, const Symbol& theirs, const Shape& data) {
  EXPECT_EQ(ours.ListArguments(), theirs.ListArguments());
  EXPECT_EQ(ours.ListAuxiliaryStates(), theirs.ListAuxiliaryStates());
  const Symbol::Shapes a = ours.InferShape({{"data", data}});
  const Symbol::Shapes b = theirs.InferShape({{"data", data}});
  EXPECT_EQ(a.arguments, b.arguments);
  EXPECT_EQ(a.auxiliary, b.auxiliary);
  EXPECT_EQ(a.outputs, b.outputs);
  const auto ours_order = ours.TopoOrder(), theirs_order = theirs.TopoOrder();
  ASSERT_EQ(ours_order.size(), theirs_order.size());
  for (size_t i = 0; i < ours_order.size(); ++i) {
    if (ours_order[i]->is_variable()) continue;
    EXPECT_EQ(ours_order[i]->name, theirs_order[i]->name) << "node " << i;
    EXPECT_EQ(ours_order[i]->impl->type(), theirs_order[i]->impl->type()) << "node " << i;
    // MXNet writes the attributes it was given; the zoo also writes some defaults.
    const auto& ours_attrs = ours_order[i]->impl->attrs();
    for (const auto& [key, value] : theirs_order[i]->impl->attrs()) {
      auto it = ours_attrs.find(key);
      ASSERT_NE(it, ours_attrs.end()) << theirs_order[i]->name << " has no " << key;
      EXPECT_EQ(it->second, value) << theirs_order[i]->name << "." << key;
    }
  }
}

// The zoo's ResNet-20 is MXNet's example network (scripts/make_mxnet_resnet_fixture.py).
TEST(SymbolJSON, ZooResNet20MatchesMXNetsExample) {
  Symbol ours = models::ByName("resnet20");
  Symbol theirs = Symbol::Load(Fixture("resnet20-symbol.json"));
  const Shape data = {2, 3, 32, 32};
  ExpectSameNetwork(ours, theirs, data);
  EXPECT_EQ(CountParameters(theirs, data), 272544);  // printed by the fixture script
  EXPECT_EQ(CountParameters(ours, data), 272544);
  EXPECT_EQ(ours.InferShape({{"data", data}}).outputs[0], Shape({2, 10}));
  EXPECT_THROW(models::ByName("resnet21"), Error);
  EXPECT_THROW(models::ByName("resnet"), Error);
}

// The zoo's ImageNet networks are MXNet's example networks
// (scripts/make_mxnet_imagenet_fixtures.py printed the counts), with 1000 classes by default.
TEST(SymbolJSON, ZooResNet50MatchesMXNetsExample) {
  const Shape data = {1, 3, 224, 224};
  Symbol ours = models::ByName("resnet50"), theirs = Symbol::Load(Fixture("resnet50-symbol.json"));
  ExpectSameNetwork(ours, theirs, data);
  EXPECT_EQ(CountParameters(ours, data), 25549486);
  EXPECT_EQ(ours.InferShape({{"data", data}}).outputs[0], Shape({1, 1000}));
}

// ResNet-101 differs from ResNet-50 only in the units of its third stage: its JSON is not kept.
TEST(SymbolJSON, ZooResNet101HasMXNetsParameterCount) {
  const Shape data = {1, 3, 224, 224};
  Symbol ours = models::ByName("resnet101");
  EXPECT_EQ(CountParameters(ours, data), 44541614);
  EXPECT_EQ(ours.ListAuxiliaryStates().size(), 2u * (1 + 1 + 3 * (3 + 4 + 23 + 3) + 1));
  EXPECT_EQ(models::ByName("resnet101", 10).InferShape({{"data", data}}).outputs[0],
            Shape({1, 10}));
  EXPECT_THROW(models::ImageNetResNet(51), Error);
  // Depths the ImageNet network lacks stay CIFAR networks.
  EXPECT_EQ(models::ByName("resnet56").InferShape({{"data", {1, 3, 32, 32}}}).outputs[0],
            Shape({1, 10}));
}

TEST(SymbolJSON, ZooVgg16MatchesMXNetsExample) {
  const Shape data = {1, 3, 224, 224};
  Symbol ours = models::ByName("vgg16"), theirs = Symbol::Load(Fixture("vgg16-symbol.json"));
  ExpectSameNetwork(ours, theirs, data);
  EXPECT_EQ(CountParameters(ours, data), 138357544);
  EXPECT_THROW(models::ByName("vgg17"), Error);
}

TEST(SymbolJSON, ZooInceptionV3MatchesMXNetsExample) {
  const Shape data = {1, 3, 299, 299};
  Symbol ours = models::ByName("inceptionv3");
  Symbol theirs = Symbol::Load(Fixture("inceptionv3-symbol.json"));
  ExpectSameNetwork(ours, theirs, data);
  EXPECT_EQ(CountParameters(ours, data), 23834568);
  EXPECT_EQ(ours.InferShape({{"data", data}}).outputs[0], Shape({1, 1000}));
}

// The zoo's MobileNet v1 is MXNet's example network (scripts/make_mxnet_mobilenet_fixture.py),
// at full width on ImageNet-sized images and at a quarter width on 64x64 images.
TEST(SymbolJSON, ZooMobileNetMatchesMXNetsExample) {
  const Shape full = {2, 3, 224, 224};
  Symbol ours = models::ByName("mobilenet", 1000);
  Symbol theirs = Symbol::Load(Fixture("mobilenet-symbol.json"));
  ExpectSameNetwork(ours, theirs, full);
  EXPECT_EQ(CountParameters(theirs, full), 4231976);  // printed by the fixture script
  EXPECT_EQ(CountParameters(ours, full), 4231976);
  EXPECT_EQ(ours.InferShape({{"data", full}}).outputs[0], Shape({2, 1000}));

  const Shape small = {2, 3, 64, 64};
  Symbol quarter = models::MobileNet({.multiplier = 0.25, .resolution = 64, .num_classes = 10});
  ExpectSameNetwork(quarter, Symbol::Load(Fixture("mobilenet0.25-r64-symbol.json")), small);
  EXPECT_EQ(CountParameters(quarter, small), 215642);

  EXPECT_THROW(models::MobileNet({.resolution = 100}), Error);
  EXPECT_THROW(models::MobileNet({.multiplier = 0.01}), Error);
}

TEST(SymbolJSON, RoundTripKeepsGraphAndAttributes) {
  Symbol res = Symbol::Load(Fixture("resblock-symbol.json"));
  Symbol again = Symbol::FromJSON(res.ToJSON());
  EXPECT_EQ(again.ListArguments(), res.ListArguments());
  EXPECT_EQ(again.ListAuxiliaryStates(), res.ListAuxiliaryStates());
  EXPECT_EQ(again.ListOutputs(), res.ListOutputs());
  EXPECT_EQ(again.ToJSON(), res.ToJSON());
  const auto order = again.TopoOrder();
  auto bn = std::find_if(order.begin(), order.end(), [](auto& n) { return n->name == "bn0"; });
  ASSERT_NE(bn, order.end());
  EXPECT_EQ((*bn)->attrs.at("eps"), "2e-05");
}

TEST(SymbolJSON, OlderParamAndAttrKeys) {
  const char* json = R"J({
    "nodes": [
      {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1,
       "attr": {"__shape__": "(0, 4)"}},
      {"op": "null", "param": {}, "name": "fc_weight", "inputs": [], "backward_source_id": -1},
      {"op": "null", "param": {}, "name": "fc_bias", "inputs": [], "backward_source_id": -1},
      {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "3"}, "name": "fc",
       "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1}
    ],
    "arg_nodes": [0, 1, 2],
    "heads": [[3, 0]]
  })J";
  Symbol s = Symbol::FromJSON(json);
  EXPECT_EQ(s.ListArguments(), (std::vector<std::string>{"data", "fc_weight", "fc_bias"}));
  Symbol::Shapes shapes = s.InferShape({{"data", {5, 4}}});
  EXPECT_EQ(shapes.outputs[0], Shape({5, 3}));
}

std::string ErrorOf(const std::string& json) {
  try {
    Symbol::FromJSON(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SymbolJSON, ErrorsNameTheNode) {
  EXPECT_NE(ErrorOf("{not json").find("symbol JSON"), std::string::npos);
  EXPECT_NE(ErrorOf(R"J({"nodes": []})J").find("\"heads\""), std::string::npos);
  EXPECT_NE(
      ErrorOf(
          R"J({"nodes": [{"op": "Frobnicate", "name": "f", "inputs": []}], "heads": [[0,0,0]]})J")
          .find("node 0 'f': unknown operator 'Frobnicate'"),
      std::string::npos);
  EXPECT_NE(ErrorOf(R"J({"nodes": [{"op": "null", "name": "x", "inputs": []},
      {"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": [[5, 0, 0]]}],
      "heads": [[1,0,0]]})J")
                .find("node 1 'a': refers to node 5"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"J({"nodes": [{"op": "null", "name": "x", "inputs": []},
      {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"}, "inputs": [[0, 0, 0]]}],
      "heads": [[1,0,0]]})J")
                .find("node 1 'fc': FullyConnected needs 3 inputs"),
            std::string::npos);
  try {
    Symbol::Load(Fixture("missing.json"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// Hostile but well-formed documents get an error, never a signal (issue 14, item 3).
TEST(SymbolJSON, DeepNestingIsRefusedNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string json = R"({"nodes": [{"op": "null", "name": "data", "attrs": {"x": )" + deep +
                           R"(}}], "heads": [[0, 0, 0]]})";
  EXPECT_NE(ErrorOf(json).find("nested more than 64 levels deep"), std::string::npos);
}

// What MXNet 1.9.1's reader refuses is refused (the fuzzing campaign found these loaded): a node
// without "inputs", an input of four numbers, a graph attribute that is not [type, value], a
// document without "arg_nodes". Two-number inputs ([node, output]) load, as in MXNet.
TEST(SymbolJSON, WhatMXNetsReaderRefusesIsRefused) {
  const std::string ok =
      R"({"nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "Flatten", "name": "f", "inputs": [[0, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})";
  EXPECT_EQ(Symbol::FromJSON(ok).ListArguments(), std::vector<std::string>{"data"});
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string json = ok;
    json.replace(json.find(from), from.size(), to);
    return ErrorOf(json);
  };
  EXPECT_NE(edit(R"("data", "inputs": [])", R"("data")").find(R"(needs "op", "name" and "inputs")"),
            std::string::npos);
  EXPECT_NE(edit("[[0, 0]]", "[[0, 0, 0, 0]]").find("an input must be [node, output, version]"),
            std::string::npos);
  EXPECT_NE(edit(R"(["int", 10901])", R"(["int", 11, 10901])")
                .find("graph attribute 'mxnet_version' must be [type, value]"),
            std::string::npos);
  EXPECT_NE(edit(R"("mxnet_version": ["int", 10901])", R"("inputs": [])").find("[type, value]"),
            std::string::npos);
  EXPECT_NE(edit(R"("arg_nodes": [0], )", "").find(R"(no "arg_nodes")"), std::string::npos);
  EXPECT_NE(edit(R"("arg_nodes": [0])", R"("arg_nodes": [99999999999])").find("not a node number"),
            std::string::npos);
  EXPECT_NE(edit(R"("name": "f",)", R"("name": "f", "no_bias": "True",)")
                .find(R"(node 1 'f': unknown field "no_bias")"),
            std::string::npos);
  EXPECT_NE(edit(R"("heads")", R"("extra": 1, "heads")").find(R"(unknown field "extra")"),
            std::string::npos);
}

TEST(SymbolJSON, OutputIndexBeyondIntIsAnError) {
  const std::string json =
      R"({"nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "Flatten", "name": "f", "inputs": [[0, 4294967296, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]]})";
  EXPECT_NE(ErrorOf(json).find("refers to output 4294967296"), std::string::npos) << ErrorOf(json);
}

// A valid graph of 300,000 chained ops loads, lists its arguments and is destroyed without
// recursing once per node (it overflowed the stack at exit).
TEST(SymbolJSON, ALongChainLoadsAndIsDestroyed) {
  constexpr int kOps = 300000;
  std::string json = R"({"nodes": [{"op": "null", "name": "data", "inputs": []})";
  for (int i = 1; i <= kOps; ++i) {
    json += R"(, {"op": "Activation", "name": "a)" + std::to_string(i) +
            R"(", "attrs": {"act_type": "relu"}, "inputs": [[)" + std::to_string(i - 1) + ", 0, 0]]}";
  }
  json += R"(], "arg_nodes": [0], "heads": [[)" + std::to_string(kOps) + ", 0, 0]]}";
  {
    const Symbol chain = Symbol::FromJSON(json);
    EXPECT_EQ(chain.ListArguments(), std::vector<std::string>{"data"});
  }
  SUCCEED() << "destroyed";
}

}  // namespace
}  // namespace cohort
