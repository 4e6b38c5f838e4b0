// argmax, argmin and argmax_channel against std::max_element / min_element along each axis,
// MXNet's shapes (axis None flattens; keepdims), and no gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/operator/op_harness.h"

namespace cohort {
namespace {

std::vector<float> Positions(const std::string& op, const op::Attrs& attrs, const NDArray& x,
                             Shape* shape = nullptr) {
  testing::OpInstance inst = testing::MakeOp(op, attrs, {x.shape()});
  x.CopyTo(inst.in[0]);
  inst.Forward(false);
  if (shape) *shape = inst.out[0].shape();
  return inst.out[0].ToVector<float>();
}

TEST(IndexOps, PositionsOfTheExtremesAlongAnAxis) {
  std::mt19937 rng(3);
  const NDArray x = NDArray::Empty({3, 5, 4});
  testing::FillUniform(x, rng);
  const std::vector<float> v = x.ToVector<float>();
  Shape shape;
  const std::vector<float> along1 = Positions("argmax", {{"axis", "1"}}, x, &shape);
  EXPECT_EQ(shape, (Shape{3, 4}));
  for (int o = 0; o < 3; ++o) {
    for (int i = 0; i < 4; ++i) {
      std::vector<float> column;
      for (int c = 0; c < 5; ++c) column.push_back(v[(o * 5 + c) * 4 + i]);
      EXPECT_EQ(along1[o * 4 + i], std::max_element(column.begin(), column.end()) - column.begin());
    }
  }
  const std::vector<float> all = Positions("argmin", {}, x, &shape);
  EXPECT_EQ(shape, (Shape{1}));
  EXPECT_EQ(all[0], std::min_element(v.begin(), v.end()) - v.begin());
  Positions("argmax", {{"axis", "-1"}, {"keepdims", "True"}}, x, &shape);
  EXPECT_EQ(shape, (Shape{3, 5, 1}));
  const std::vector<float> channel = Positions("argmax_channel", {}, x, &shape);
  EXPECT_EQ(shape, (Shape{3, 5}));
  EXPECT_EQ(channel, Positions("argmax", {{"axis", "2"}}, x));
}

TEST(IndexOps, TheFirstOfEqualElementsWinsAndBadAxesAreNamed) {
  EXPECT_EQ(Positions("argmax", {{"axis", "0"}}, NDArray::FromVector<float>({3}, {2, 5, 5})),
            std::vector<float>{1});
  EXPECT_EQ(Positions("argmin", {{"axis", "0"}}, NDArray::FromVector<float>({3}, {1, 0, 0})),
            std::vector<float>{1});
  auto op = op::OpRegistry::Get().Create("argmax", {{"axis", "3"}});
  std::vector<Shape> in = {Shape{2, 3}}, out(1), aux;
  EXPECT_THROW(op->InferShape(in, out, aux), Error);
  EXPECT_FALSE(op->PassesGradient());
}

// sort.h's order: ties keep their positions (stable), a NaN sorts as the largest value (last
// ascending, first descending), axis None sorts the flattened input, and topk's k < 1 keeps all.
TEST(Sorting, StableWithNaNsLastAndFlattened) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto run = [&](const std::string& op, const op::Attrs& attrs, const Shape& shape,
                 const std::vector<float>& x) {
    testing::OpInstance inst = testing::MakeOp(op, attrs, {shape});
    NDArray::FromVector<float>(shape, x).CopyTo(inst.in[0]);
    inst.Forward(false);
    return inst;
  };
  const std::vector<float> x = {2, nan, 1, 2, -1};
  EXPECT_EQ(run("argsort", {}, {5}, x).out[0].ToVector<float>(),
            (std::vector<float>{4, 2, 0, 3, 1}));
  EXPECT_EQ(run("argsort", {{"is_ascend", "False"}}, {5}, x).out[0].ToVector<float>(),
            (std::vector<float>{1, 0, 3, 2, 4}));
  testing::OpInstance flat =
      run("topk", {{"axis", "None"}, {"k", "0"}, {"ret_typ", "value"}}, {2, 2}, {3, 1, 4, 2});
  EXPECT_EQ(flat.out[0].shape(), Shape({4}));
  EXPECT_EQ(flat.out[0].ToVector<float>(), (std::vector<float>{4, 3, 2, 1}));
  EXPECT_THROW(testing::MakeOp("topk", {{"ret_typ", "all"}}, {{3}}), Error);
  EXPECT_THROW(testing::MakeOp("argsort", {{"dtype", "bool"}}, {{3}}), Error);
}

}  // namespace
}  // namespace cohort
