#include <gtest/gtest.h>

#include "operator/common/operator.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

std::string ErrorOf(const std::string& op, const op::Attrs& attrs) {
  try {
    op::OpRegistry::Get().Create(op, attrs);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpRegistry, ErrorsNameTheOpAndAttribute) {
  EXPECT_NE(ErrorOf("Convolutoin", {}).find("unknown operator 'Convolutoin'"), std::string::npos);
  EXPECT_NE(ErrorOf("FullyConnected", {}).find("FullyConnected: required attribute 'num_hidden'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("FullyConnected", {{"num_hidden", "ten"}})
                .find("attribute num_hidden='ten': expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf("FullyConnected", {{"num_hidden", "2"}, {"num_hiden", "3"}})
                .find("FullyConnected: unknown attribute 'num_hiden'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("Activation", {{"act_type", "swish"}}).find("expected one of relu"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("Convolution", {{"kernel", "(3,3,3)"}, {"num_filter", "2"}}).find("only 2-D kernels"),
      std::string::npos);
}

// Attributes MXNet honours and Cohort does not implement are refused, never read and ignored.
TEST(OpRegistry, UnimplementedModesAreRefused) {
  EXPECT_NE(ErrorOf("SoftmaxOutput", {{"out_grad", "True"}}).find("out_grad=True"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("SoftmaxOutput", {{"out_grad", "False"}}), "no error");
  EXPECT_NE(ErrorOf("softmax", {{"use_length", "True"}}).find("use_length=True"),
            std::string::npos);
}

TEST(OpRegistry, DoubleUnderscoreAttributesAreNotParameters) {
  EXPECT_EQ(ErrorOf("FullyConnected", {{"num_hidden", "2"}, {"__lr_mult__", "0.1"}}), "no error");
}

TEST(OpRegistry, AliasesAndMXNetSpellings) {
  auto plus = op::OpRegistry::Get().Create("_Plus", {});
  EXPECT_EQ(plus->type(), "elemwise_add");
  EXPECT_EQ(op::OpRegistry::Get().Create("identity", {})->type(), "_copy");
  EXPECT_EQ(op::OpRegistry::Get().Create("_MaximumScalar", {{"scalar", "0"}})->type(),
            "_maximum_scalar");
  // MXNet's standalone relu is Activation(act_type=relu), and keeps its own name in JSON.
  EXPECT_EQ(op::OpRegistry::Get().Create("relu", {})->type(), "relu");
  EXPECT_NE(ErrorOf("relu", {{"act_type", "tanh"}}).find("relu: unknown attribute 'act_type'"),
            std::string::npos);
  auto fc =
      op::OpRegistry::Get().Create("FullyConnected", {{"num_hidden", "3"}, {"no_bias", "True"}});
  EXPECT_EQ(fc->ListArguments(), (std::vector<std::string>{"data", "weight"}));
  auto bn = op::OpRegistry::Get().Create("BatchNorm", {});
  EXPECT_EQ(bn->ListAuxiliaryStates(), (std::vector<std::string>{"moving_mean", "moving_var"}));
  EXPECT_EQ(bn->NumOutputs(), 3);
  EXPECT_EQ(bn->NumVisibleOutputs(), 1);
}

// MXNet takes labels of the data's shape as probabilities; Cohort says it does not.
TEST(OpRegistry, SoftmaxOutputSaysSoftLabelsAreNotSupported) {
  auto op = op::OpRegistry::Get().Create("SoftmaxOutput", {});
  std::vector<Shape> in = {Shape({4, 3}), Shape({4, 3})}, out(1), aux;
  const std::string what = testing::ErrorOf([&] { op->InferShape(in, out, aux); });
  EXPECT_NE(what.find("probability (soft) labels are not supported"), std::string::npos) << what;
}

TEST(OpRegistry, ShapeConflictsNameTheInput) {
  auto fc = op::OpRegistry::Get().Create("FullyConnected", {{"num_hidden", "3"}});
  std::vector<Shape> in = {{2, 4}, {3, 5}, {}}, out(1), aux;
  try {
    fc->InferShape(in, out, aux);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("FullyConnected: weight has shape (3,5) but (3,4) is expected"),
        std::string::npos)
        << e.what();
  }
}

// The GPU's cached cuDNN plans are keyed by id(): a later operator at a freed one's address
// must not find its plan.
TEST(OpRegistry, EveryOperatorHasAnIdOfItsOwn) {
  auto first = op::OpRegistry::Get().Create("relu", {});
  const uint64_t first_id = first->id();
  first.reset();
  auto second = op::OpRegistry::Get().Create("relu", {});
  auto third = op::OpRegistry::Get().Create("relu", {});
  EXPECT_NE(second->id(), first_id);
  EXPECT_NE(third->id(), second->id());
}

}  // namespace
}  // namespace cohort
