#include "base/shape.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace cohort {
namespace {

TEST(Shape, SizeAndPrinting) {
  EXPECT_EQ(Shape({2, 3, 4}).Size(), 24);
  EXPECT_EQ(Shape().Size(), 1);  // scalar
  EXPECT_EQ(Shape({5, 0}).Size(), 0);
  EXPECT_EQ(Shape({2, 3}).ToString(), "(2,3)");
  EXPECT_EQ(Shape().ToString(), "()");
  EXPECT_EQ(Shape({6}).ToString(), "(6,)");
  EXPECT_EQ(Shape({2, -1}).ToString(), "(2,?)");
  EXPECT_FALSE(Shape({2, -1}).is_known());
  EXPECT_THROW(Shape({2, -1}).Size(), Error);
}

TEST(Shape, IndexingIsChecked) {
  Shape s{4, 5};
  EXPECT_EQ(s[1], 5);
  s[0] = 7;
  EXPECT_EQ(s.WithDim0(2), Shape({2, 5}));
  EXPECT_EQ(s, Shape({7, 5}));
  EXPECT_THROW(s[2], Error);
  EXPECT_THROW(Shape({1, 2, 3, 4, 5, 6, 7, 8, 9}), Error);
}

TEST(Shape, Parses) {
  EXPECT_EQ(Shape::Parse("1,28,28"), Shape({1, 28, 28}));
  EXPECT_EQ(Shape::Parse("(2, 3)"), Shape({2, 3}));
  EXPECT_EQ(Shape::Parse("[7]"), Shape({7}));
  EXPECT_EQ(Shape::Parse("(6,)"), Shape({6}));
  EXPECT_EQ(Shape::Parse("()"), Shape());
  EXPECT_THROW(Shape::Parse("2,x"), Error);
  EXPECT_THROW(Shape::Parse("2,,3"), Error);
}

}  // namespace
}  // namespace cohort
