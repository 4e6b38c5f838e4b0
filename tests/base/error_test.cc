#include "base/error.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ErrorOf;


TEST(Error, CheckNamesConditionMessageAndLocation) {
  std::string what = ErrorOf([] {
    COHORT_CHECK(1 + 1 == 3) << "arithmetic is "
                             << "broken";
  });
  EXPECT_EQ(what.find("arithmetic is broken [tests/base/error_test.cc:"), 0u) << what;
  what = ErrorOf([] { COHORT_CHECK(1 + 1 == 3); });
  EXPECT_EQ(what.find("Check failed: 1 + 1 == 3 [tests/base/error_test.cc:"), 0u) << what;
}

TEST(Error, CheckOpNamesBothValues) {
  int a = 3, b = 4;
  std::string what = ErrorOf([&] { COHORT_CHECK_EQ(a, b) << "sizes differ"; });
  EXPECT_EQ(what.find("sizes differ (a == b: 3 vs. 4) ["), 0u) << what;
  EXPECT_EQ(ErrorOf([&] { COHORT_CHECK_LT(a, b); }), "no error");
  what = ErrorOf([&] { COHORT_CHECK_GE(a, b); });
  EXPECT_EQ(what.find("Check failed: a >= b (3 vs. 4) ["), 0u) << what;
}

TEST(Error, PassingChecksEvaluateOperandsOnce) {
  int calls = 0;
  auto next = [&] { return ++calls; };
  COHORT_CHECK_EQ(next(), 1);
  COHORT_CHECK(next() == 2);
  EXPECT_EQ(calls, 2);
}

TEST(Error, ThrowKeepsMessageSeparately) {
  try {
    COHORT_THROW() << "bad key '"
                   << "lr"
                   << "'";
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "bad key 'lr'");
    EXPECT_GT(e.line(), 0);
  }
}

}  // namespace
}  // namespace cohort
