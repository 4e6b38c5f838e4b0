// Files written by MXNet 1.9.1's mx.nd.save (scripts/make_mxnet_params_fixtures.py) load to the
// values that script wrote, and Cohort writes the same bytes back.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ndarray/params_io.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(COHORT_TEST_DATA_DIR) + "/mxnet/" + name;
}

std::vector<double> Range(int n, double scale, double shift) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i * scale + shift;
  return v;
}

TEST(MXNetParams, EveryDTypeLoadsWithTheScriptsValues) {
  ParamsFile f = LoadParamsFile(Fixture("all_dtypes_v2.params"));
  const std::vector<std::string> dtypes = {"float32", "float64", "float16", "uint8",   "int32",
                                           "int8",    "int64",   "bool",    "bfloat16"};
  ASSERT_EQ(f.names.size(), dtypes.size());
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const NDArray& a = f.arrays[i];
    EXPECT_EQ(f.names[i], "arg:" + dtypes[i]);
    EXPECT_EQ(a.dtype(), ParseDType(dtypes[i]));
    EXPECT_EQ(a.shape(), Shape({2, 3}));
    std::vector<double> expected;
    if (IsFloatingPoint(a.dtype()))
      expected = {-2.5, -1.0, 0.0, 0.5, 1.25, 3.0};
    else if (dtypes[i] == "uint8")
      expected = {0, 1, 2, 3, 250, 255};
    else if (dtypes[i] == "bool")
      expected = {1, 0, 0, 1, 1, 0};
    else
      expected = {-2, -1, 0, 1, 2, 3};
    EXPECT_EQ(a.ToVector<double>(), expected) << dtypes[i];
  }
}

TEST(MXNetParams, CohortWritesMXNetsBytes) {
  // The same arrays made from scratch in C++ serialise to exactly the file MXNet wrote.
  ParamsFile f;
  const std::vector<double> floats = {-2.5, -1.0, 0.0, 0.5, 1.25, 3.0};
  for (auto [name, values] :
       std::vector<std::pair<std::string, std::vector<double>>>{{"float32", floats},
                                                                {"float64", floats},
                                                                {"float16", floats},
                                                                {"uint8", {0, 1, 2, 3, 250, 255}},
                                                                {"int32", {-2, -1, 0, 1, 2, 3}},
                                                                {"int8", {-2, -1, 0, 1, 2, 3}},
                                                                {"int64", {-2, -1, 0, 1, 2, 3}},
                                                                {"bool", {1, 0, 0, 1, 1, 0}},
                                                                {"bfloat16", floats}}) {
    f.names.push_back("arg:" + name);
    f.arrays.push_back(NDArray::FromVector<double>({2, 3}, values).AsType(ParseDType(name)));
  }
  EXPECT_EQ(SerializeParams(f), testing::ReadFile(Fixture("all_dtypes_v2.params")));
}

TEST(MXNetParams, CheckpointWithArgAndAuxNames) {
  std::map<std::string, NDArray> p = LoadParams(Fixture("checkpoint_v2.params"));
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p["arg:fc1_weight"].shape(), Shape({6, 4}));
  EXPECT_EQ(p["arg:fc1_weight"].ToVector<double>(), Range(24, 1.0 / 8, -1.0));
  EXPECT_EQ(p["arg:fc1_bias"].ToVector<double>(), (std::vector<double>{1, 4, 4, 4, 5, 6}));
  EXPECT_EQ(p["arg:conv0_weight"].shape(), Shape({2, 3, 3, 3}));
  EXPECT_EQ(p["arg:conv0_weight"].ToVector<double>(), Range(54, 0.25, 0));
  EXPECT_EQ(p["aux:bn_moving_mean"].ToVector<double>(), std::vector<double>(3, 0.0));
  EXPECT_EQ(p["aux:bn_moving_var"].ToVector<double>(), std::vector<double>(3, 1.0));
  EXPECT_EQ(p["arg:big"].ToVector<double>(), Range(10000, 1, 0));
}

TEST(MXNetParams, UnnamedList) {
  ParamsFile f = LoadParamsFile(Fixture("list_v2.params"));
  EXPECT_TRUE(f.names.empty());
  ASSERT_EQ(f.arrays.size(), 2u);
  EXPECT_EQ(f.arrays[0].ToVector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(f.arrays[1].dtype(), DType::kInt32);
  EXPECT_EQ(f.arrays[1].shape(), Shape({1, 1}));
  EXPECT_EQ(f.arrays[1].ToVector<int32_t>(), std::vector<int32_t>{7});
}

TEST(MXNetParams, NumpySemanticsV3) {
  std::map<std::string, NDArray> p = LoadParams(Fixture("numpy_v3.params"));
  EXPECT_EQ(p["scalar"].shape(), Shape());
  EXPECT_EQ(p["scalar"].ToVector<float>(), std::vector<float>{42.5f});
  EXPECT_EQ(p["matrix"].dtype(), DType::kFloat64);
  EXPECT_EQ(p["matrix"].ToVector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(p["empty"].shape(), Shape({2, 0}));
}

TEST(MXNetParams, LoadThenSaveGivesTheSameBytes) {
  for (auto [name, format] : {std::pair{"all_dtypes_v2.params", ParamsFormat::kV2},
                              std::pair{"checkpoint_v2.params", ParamsFormat::kV2},
                              std::pair{"list_v2.params", ParamsFormat::kV2},
                              std::pair{"numpy_v3.params", ParamsFormat::kV3}}) {
    const std::string bytes = testing::ReadFile(Fixture(name));
    EXPECT_EQ(SerializeParams(ParseParams(bytes, name), format), bytes) << name;
  }
}

}  // namespace
}  // namespace cohort
