// group2ctx (Note [Device placement]): nodes of each ctx_group run on their context, with
// _CrossDeviceCopy nodes between contexts; results equal one context's up to the order in which
// gradient contributions are summed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "executor/executor.h"
#include "ndarray/device_api.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

op::Attrs In(const std::string& group, op::Attrs attrs = {}) {
  attrs["__ctx_group__"] = group;
  return attrs;
}

Symbol Op(const std::string& op, std::vector<Symbol> inputs, const op::Attrs& attrs,
          const std::string& name) {
  return Symbol::Create(op, inputs, attrs, name);
}

// MXNet's test_module_ctx_group graph: a*2 in dev1, + b in dev2; then a node of no group that
// reads both (it runs where its first input is) and a reader of a*2 in dev1 itself, so a*2 is
// read on two contexts and its gradient sums a copy's and a local op's.
Symbol TwoGroups() {
  Symbol a = Symbol::Variable("a", In("dev1"));
  Symbol a2 = Op("_mul_scalar", {a}, In("dev1", {{"scalar", "2"}}), "a2");
  Symbol b = Symbol::Variable("b", In("dev2"));
  Symbol c = Op("elemwise_add", {a2, b}, In("dev2"), "c");
  Symbol d = Op("elemwise_mul", {Op("relu", {c}, {}, "r"), a2}, {}, "d");
  Symbol e = Op("_plus_scalar", {a2}, In("dev1", {{"scalar", "1"}}), "e");
  return Symbol::Group(std::vector<Symbol>{d, Op("elemwise_mul", {e, e}, In("dev1"), "f")});
}

const std::map<std::string, Context> kHostGroups = {{"dev1", Context::CPU(1)},
                                                    {"dev2", Context::CPU(2)}};

void Fill(Executor& exec, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  for (const auto& [name, array] : exec.arg_dict()) {
    std::vector<float> v(array.size());
    for (float& x : v) x = normal(gen);
    NDArray::FromVector<float>(array.shape(), v).CopyTo(array);
  }
}

// Forward and backward with ones as head gradients; outputs then gradients, on the host.
std::vector<std::vector<float>> Step(Executor& exec) {
  exec.Forward(true);
  std::vector<NDArray> heads;
  for (const NDArray& o : exec.outputs())
    heads.push_back(NDArray::Full(o.shape(), 1.0, o.dtype(), o.ctx()));
  exec.Backward(heads);
  std::vector<std::vector<float>> out;
  for (const NDArray& o : exec.outputs()) out.push_back(o.ToVector<float>());
  for (const auto& [name, g] : exec.grad_dict()) out.push_back(g.ToVector<float>());
  return out;
}

// Equal up to the order of summing gradient contributions (a copy sums its readers' first).
void ExpectClose(const std::vector<std::vector<float>>& got,
                 const std::vector<std::vector<float>>& want) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].size(), got[i].size());
    for (size_t j = 0; j < want[i].size(); ++j) {
      EXPECT_NEAR(got[i][j], want[i][j], 1e-5 * (1 + std::abs(want[i][j]))) << i << ", " << j;
    }
  }
}

TEST(Placement, HostGroupsMatchOneContextWithMXNetsPlacement) {
  const Symbol net = TwoGroups();
  for (const Symbol& s :
       {net, Symbol::Group(std::vector<Symbol>{net[1], net[0]})}) {  // either backward order
    auto one = Executor::SimpleBind(s, Context::CPU(), {{"a", {2, 3}}, {"b", {2, 3}}});
    auto placed = Executor::SimpleBind(s, Context::CPU(), {{"a", {2, 3}}, {"b", {2, 3}}},
                                       GradReq::kWrite, {}, nullptr, {}, kHostGroups);
    Fill(*one, 7);
    Fill(*placed, 7);
    ExpectClose(Step(*placed), Step(*one));
    // MXNet's contexts: each variable on its group's, outputs where their node ran.
    EXPECT_EQ(placed->arg_dict().at("a").ctx(), Context::CPU(1));
    EXPECT_EQ(placed->grad_dict().at("a").ctx(), Context::CPU(1));
    EXPECT_EQ(placed->arg_dict().at("b").ctx(), Context::CPU(2));
    EXPECT_EQ(placed->output_dict().at("d_output").ctx(), Context::CPU(2));
    EXPECT_EQ(placed->output_dict().at("f_output").ctx(), Context::CPU(1));
  }
  // One copy of a*2 to dev2, shared by c and d, named as MXNet names it.
  auto placed = Executor::SimpleBind(net, Context::CPU(), {{"a", {2, 3}}, {"b", {2, 3}}},
                                     GradReq::kWrite, {}, nullptr, {}, kHostGroups);
  int copies = 0;
  for (const auto& node : placed->optimized_symbol().TopoOrder()) {
    if (node->op != "_CrossDeviceCopy") continue;
    ++copies;
    EXPECT_EQ(node->name, "a2_0_copy");
  }
  EXPECT_EQ(copies, 1);
  // Without group2ctx the groups are ignored, as in MXNet.
  auto plain = Executor::SimpleBind(net, Context::CPU(), {{"a", {2, 3}}, {"b", {2, 3}}});
  EXPECT_EQ(plain->arg_dict().at("a").ctx(), Context::CPU());
}

TEST(Placement, BindTakesTheArraysContextsAndReshapeKeepsThePlacement) {
  const Symbol net = TwoGroups();
  auto one = Executor::SimpleBind(net, Context::CPU(), {{"a", {2, 3}}, {"b", {2, 3}}});
  Fill(*one, 3);
  const std::vector<std::vector<float>> want = Step(*one);
  std::vector<NDArray> args, grads;
  for (const std::string& name : net.ListArguments()) {
    const Context c = name == "a" ? Context::CPU(1) : Context::CPU(2);
    args.push_back(one->arg_dict().at(name).CopyTo(c));
    grads.push_back(NDArray::Zeros({2, 3}, DType::kFloat32, c));
  }
  auto placed = Executor::Bind(net, Context::CPU(), args, grads, {GradReq::kWrite, GradReq::kWrite},
                               {}, nullptr, kHostGroups);
  ExpectClose(Step(*placed), want);
  auto smaller = placed->Reshape({{"a", {1, 3}}, {"b", {1, 3}}});
  EXPECT_EQ(smaller->output_dict().at("d_output").ctx(), Context::CPU(2));
  EXPECT_EQ(smaller->group2ctx(), kHostGroups);
  Step(*smaller);
}

TEST(Placement, UnplacedGroupsAndSplitAuxiliaryStatesAreRefused) {
  const Symbol net = TwoGroups();
  std::string what = testing::ErrorOf([&] {
    Executor::SimpleBind(net, Context::CPU(), {{"a", {2, 3}}, {"b", {2, 3}}}, GradReq::kWrite, {},
                         nullptr, {}, {{"dev1", Context::CPU(1)}});
  });
  EXPECT_NE(what.find("node 'c' (elemwise_add) is in ctx_group 'dev2', which group2ctx does not "
                      "place (it places: dev1)"),
            std::string::npos)
      << what;
  // BatchNorm in dev1 with moving statistics made outside it: updating a copy would lose them.
  Symbol bn =
      Symbol::Create("BatchNorm",
                     std::map<std::string, Symbol>{{"data", Symbol::Variable("x")},
                                                   {"moving_mean", Symbol::Variable("mean")},
                                                   {"moving_var", Symbol::Variable("var")}},
                     In("dev1"), "bn");
  what = testing::ErrorOf([&] {
    Executor::SimpleBind(bn, Context::CPU(), {{"x", {4, 3}}}, GradReq::kWrite, {}, nullptr, {},
                         kHostGroups);
  });
  EXPECT_NE(what.find("auxiliary state 'mean' is on cpu:0: put both in one ctx_group"),
            std::string::npos)
      << what;
}

// Each group on the GPU and the other on the host computes what the host alone computes (the
// cross-device copies both ways, the added gradient among them).
TEST(Placement, GpuAndHostGroupsMatchTheHost) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU";
  const Symbol net = TwoGroups();
  for (const auto& groups : std::vector<std::map<std::string, Context>>{
           {{"dev1", Context::GPU(0)}, {"dev2", Context::CPU()}},
           {{"dev1", Context::CPU()}, {"dev2", Context::GPU(0)}}}) {
    auto one = Executor::SimpleBind(net, Context::CPU(), {{"a", {4, 5}}, {"b", {4, 5}}});
    auto placed = Executor::SimpleBind(net, Context::CPU(), {{"a", {4, 5}}, {"b", {4, 5}}},
                                       GradReq::kWrite, {}, nullptr, {}, groups);
    Fill(*one, 11);
    Fill(*placed, 11);
    ExpectClose(Step(*placed), Step(*one));
  }
}

}  // namespace
}  // namespace cohort
