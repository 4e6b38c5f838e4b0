// The operator declarations (Note [Operator specs]): every op has one, the parsers read exactly
// what it declares, and the defaults and choices the parsers use are the declared ones.
#include <gtest/gtest.h>

#include "operator/batch_norm.h"
#include "operator/common/operator.h"
#include "operator/dropout.h"
#include "operator/pooling.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

// A value of the declared type for a required parameter.
std::string SampleValue(const op::ParamSpec& p) {
  if (const auto choices = op::EnumChoices(p.type); !choices.empty()) return choices.front();
  if (p.type == "boolean") return "False";
  if (p.type.starts_with("float") || p.type.starts_with("double")) return "0.5";
  if (p.type.starts_with("Shape")) return "(2, 2)";
  return "1";
}

// Required parameters whose sample value an op refuses, and optional ones whose default
// describes no valid op (a shape the caller always gives in practice).
const std::map<std::string, op::Attrs> kOverrides = {
    {"Pooling", {{"kernel", "(2, 2)"}}},       {"Reshape", {{"shape", "(2, 2)"}}},
    {"_zeros", {{"shape", "(2, 2)"}}},         {"_ones", {{"shape", "(2, 2)"}}},
    {"_full", {{"shape", "(2, 2)"}}},          {"_random_uniform", {{"shape", "(2, 2)"}}},
    {"_random_normal", {{"shape", "(2, 2)"}}}, {"Pad", {{"pad_width", "(0, 0, 1, 1)"}}}};

// The attributes an op needs to be made: a sample of each required parameter, and the overrides.
op::Attrs RequiredAttrs(const std::string& name, const op::OpSpec& spec) {
  op::Attrs attrs;
  for (const op::ParamSpec& p : spec.params) {
    if (!p.default_text) attrs[p.name] = SampleValue(p);
  }
  if (auto it = kOverrides.find(name); it != kOverrides.end()) {
    for (const auto& [k, v] : it->second) attrs[k] = v;
  }
  return attrs;
}

TEST(OpSpecs, EveryOpDeclaresWhatItsParserReads) {
  const op::OpRegistry& registry = op::OpRegistry::Get();
  const std::vector<std::string> names = registry.Names();
  ASSERT_GT(names.size(), 100u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const op::OpSpec& spec = registry.Spec(name);
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.doc.empty());
    for (const op::ParamSpec& p : spec.params) {
      EXPECT_FALSE(p.type.empty()) << p.name;
      EXPECT_FALSE(p.doc.empty()) << p.name;
    }
    const op::Attrs attrs = RequiredAttrs(name, spec);
    // Create runs the parser, whose Finish() throws on a declared parameter it never read.
    EXPECT_NO_THROW(registry.Create(name, attrs));
    // Every declared parameter at its declared default is accepted.
    for (const op::ParamSpec& p : spec.params) {
      if (!p.default_text || attrs.count(p.name)) continue;
      op::Attrs with_default = attrs;
      with_default[p.name] = *p.default_text;
      EXPECT_NO_THROW(registry.Create(name, with_default)) << p.name << "=" << *p.default_text;
    }
  }
  for (const auto& [alias, name] : registry.aliases()) {
    EXPECT_EQ(&registry.Spec(alias), &registry.Spec(name)) << alias;
  }
}

// Every op with an axis parameter refuses an axis its data lacks while shapes are inferred,
// before any forward (cohort-model and cohort-train then name the node and exit 2).
TEST(OpSpecs, AnAxisTheDataLacksIsRefusedByShapeInference) {
  const op::OpRegistry& registry = op::OpRegistry::Get();
  int checked = 0;
  for (const std::string& name : registry.Names()) {
    const op::OpSpec& spec = registry.Spec(name);
    op::Attrs attrs = RequiredAttrs(name, spec);
    bool has_axis = false;
    for (const op::ParamSpec& p : spec.params) {
      if (p.name != "axis" && p.name != "axes" && p.name != "dim") continue;
      has_axis = true;
      attrs[p.name] = p.type.starts_with("Shape") ? "(9,)" : "9";
    }
    if (!has_axis) continue;
    if (name == "transpose") attrs["axes"] = "(0, 9)";
    if (name == "broadcast_axis") attrs["size"] = "(4,)";
    if (name == "slice_axis") attrs["begin"] = "0";
    if (name == "repeat" || name == "SliceChannel")
      attrs[name == "repeat" ? "repeats" : "num_outputs"] = "1";
    SCOPED_TRACE(name);
    ++checked;
    std::string message = "no error";
    try {
      const auto op = registry.Create(name, attrs);
      std::vector<Shape> in(op->ListArguments().size(), Shape{2, 3}),
          aux(op->ListAuxiliaryStates().size());
      std::vector<Shape> out(static_cast<size_t>(op->NumOutputs()));
      op->InferShape(in, out, aux);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_TRUE(message.find("axis") != std::string::npos ||
                message.find("axes") != std::string::npos ||
                message.find("dim") != std::string::npos)
        << message;
  }
  EXPECT_GT(checked, 20);
}

TEST(OpSpecs, DefaultsComeFromTheDeclaration) {
  const op::BatchNormParam bn = op::BatchNormParam::Parse({});
  EXPECT_FLOAT_EQ(bn.eps, 1e-3f);
  EXPECT_FLOAT_EQ(bn.momentum, 0.9f);
  EXPECT_TRUE(bn.fix_gamma);
  EXPECT_FALSE(bn.use_global_stats);
  const op::DropoutParam dropout = op::DropoutParam::Parse({});
  EXPECT_FLOAT_EQ(dropout.p, 0.5f);
  EXPECT_EQ(dropout.mode, op::DropoutMode::kTraining);
  // count_include_pad's declared default is None, which means true; stride "[]" means 1.
  const op::PoolingParam pool = op::PoolingParam::Parse({{"kernel", "(2, 2)"}});
  EXPECT_TRUE(pool.count_include_pad);
  EXPECT_EQ(pool.stride, Shape({1, 1}));
  EXPECT_EQ(pool.pool_type, op::PoolType::kMax);
  EXPECT_FALSE(op::PoolingParam::Parse({{"kernel", "(2, 2)"}, {"count_include_pad", "False"}})
                   .count_include_pad);
}

TEST(OpSpecs, EnumChoicesAreTheDeclaredOnes) {
  EXPECT_EQ(op::EnumChoices("{None, 'NCHW'}"), (std::vector<std::string>{"None", "NCHW"}));
  EXPECT_EQ(op::EnumChoices("int"), std::vector<std::string>{});
  try {
    op::OpRegistry::Get().Create("Pooling", {{"kernel", "(2, 2)"}, {"pool_type", "lp"}});
    FAIL() << "lp pooling accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pool_type='lp': expected one of avg max sum"),
              std::string::npos)
        << e.what();
  }
}

TEST(OpSpecs, UnknownAttributeListsTheDeclaredOnes) {
  try {
    op::OpRegistry::Get().Create("FullyConnected", {{"num_hidden", "2"}, {"num_hiden", "3"}});
    FAIL() << "misspelt attribute accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown attribute 'num_hiden' (it takes num_hidden, "
                                         "no_bias, flatten)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cohort
