// Every operator case of scripts/make_mxnet_op_fixtures.py: Cohort's outputs, gradients and
// updated auxiliary states equal MXNet 1.9.1's on the same inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ndarray/params_io.h"
#include "op_harness.h"

namespace cohort {
namespace {

struct Case {
  std::string name, op;
  op::Attrs attrs;
  bool is_train;
};

std::vector<Case> LoadCases() {
  std::ifstream in(std::string(COHORT_TEST_DATA_DIR) + "/mxnet_ops/cases.txt");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> parts;
    std::stringstream s(line);
    std::string part;
    while (std::getline(s, part, '|')) parts.push_back(part);
    Case c{parts.at(0), parts.at(1), {}, parts.at(3) == "1"};
    std::stringstream a(parts.at(2));
    while (std::getline(a, part, ';')) {
      if (part.empty()) continue;
      const auto eq = part.find('=');
      c.attrs[part.substr(0, eq)] = part.substr(eq + 1);
    }
    cases.push_back(c);
  }
  return cases;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class MXNetOps : public ::testing::TestWithParam<Case> {};

TEST_P(MXNetOps, MatchesMXNet) {
  const Case& c = GetParam();
  auto fixture = LoadParams(std::string(COHORT_TEST_DATA_DIR) + "/mxnet_ops/" + c.name + ".params");
  auto get = [&](const std::string& key) -> const NDArray* {
    auto it = fixture.find(key);
    return it == fixture.end() ? nullptr : &it->second;
  };
  std::vector<Shape> shapes;
  for (int i = 0; get("in:" + std::to_string(i)); ++i)
    shapes.push_back(get("in:" + std::to_string(i))->shape());
  testing::OpInstance inst = testing::MakeOp(c.op, c.attrs, shapes);
  ASSERT_EQ(inst.in.size(), shapes.size());
  for (size_t i = 0; i < inst.in.size(); ++i) get("in:" + std::to_string(i))->CopyTo(inst.in[i]);
  for (size_t i = 0; i < inst.aux.size(); ++i) get("aux:" + std::to_string(i))->CopyTo(inst.aux[i]);
  inst.Forward(c.is_train);
  for (int k = 0; k < inst.visible(); ++k) {
    testing::ExpectClose(inst.out[k], *get("out:" + std::to_string(k)), 1e-4, 1e-5,
                         c.name + " output " + std::to_string(k));
  }
  for (size_t i = 0; i < inst.aux.size(); ++i) {
    testing::ExpectClose(inst.aux[i], *get("auxout:" + std::to_string(i)), 1e-4, 1e-5,
                         c.name + " aux " + std::to_string(i));
  }
  std::vector<NDArray> heads, grads;
  std::vector<GradReq> req;
  for (int k = 0; k < inst.visible(); ++k) heads.push_back(*get("head:" + std::to_string(k)));
  for (size_t i = 0; i < inst.in.size(); ++i) {
    grads.push_back(NDArray::Full(inst.in[i].shape(), 99.0));
    req.push_back(get("grad:" + std::to_string(i)) ? GradReq::kWrite : GradReq::kNull);
  }
  inst.Backward(c.is_train, heads, req, grads);
  for (size_t i = 0; i < inst.in.size(); ++i) {
    if (const NDArray* want = get("grad:" + std::to_string(i))) {
      testing::ExpectClose(grads[i], *want, 1e-4, 1e-5, c.name + " gradient " + std::to_string(i));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MXNetOps, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(MXNetOps, AllCasesLoaded) { EXPECT_EQ(LoadCases().size(), 156u); }

}  // namespace
}  // namespace cohort
