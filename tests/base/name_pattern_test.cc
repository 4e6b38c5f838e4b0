// Name patterns (Note [Name patterns]): whole-name matches, and patterns that would hang or
// overflow a backtracking engine are answered at once or refused by name.
#include "base/name_pattern.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/error.h"

namespace cohort {
namespace {

TEST(NamePattern, MatchesWholeNamesOnly) {
  const NamePattern fc1("fc1_.*", "fixed_params");
  EXPECT_TRUE(fc1.Matches("fc1_weight"));
  EXPECT_TRUE(fc1.Matches("fc1_"));
  EXPECT_FALSE(fc1.Matches("xfc1_weight"));  // not a search: the whole name
  EXPECT_FALSE(fc1.Matches("fc10weight"));
  const NamePattern alt("(fc|conv)[0-9]+_(weight|bias)", "fixed_params");
  EXPECT_TRUE(alt.Matches("conv12_bias"));
  EXPECT_FALSE(alt.Matches("conv12_gamma"));
}

TEST(NamePattern, NestedQuantifiersMatchInLinearTime) {
  // (a*)*b against a run of a's with no b takes exponential time on a backtracking engine
  // (std::regex never finished on 30 of them); here it is one pass over the name.
  const NamePattern nested("(a*)*b", "fixed_params");
  const std::string name(100000, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(nested.Matches(name));
  EXPECT_TRUE(nested.Matches(name + "b"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(NamePattern, RefusesLongDeepAndInvalidPatternsNamingTheKey) {
  // 100,000 characters overflowed std::regex's recursive parser (SIGSEGV).
  try {
    NamePattern(std::string(100000, '('), "fixed_params");
    FAIL() << "a 100,000-character pattern was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("fixed_params"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("longer than 4096 characters"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("(100000 characters)"), std::string::npos) << e.message();
  }
  // Under the length limit, nested 2000 deep: RE2 parses it without recursion (it ran in a
  // 256 KB stack), so it is a pattern like any other.
  const std::string deep = std::string(2000, '(') + "a" + std::string(2000, ')');
  EXPECT_TRUE(NamePattern(deep, "fixed_params").Matches("a"));
  // A repetition count that would compile to too many states.
  EXPECT_THROW(NamePattern("((a{100}){100}){100}", "fixed_params"), ConfigError);
  try {
    NamePattern("fc1_(", "fixed_params");
    FAIL() << "an unbalanced pattern was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("fixed_params: 'fc1_(' is not a regular expression"),
              std::string::npos)
        << e.message();
  }
  EXPECT_THROW(NamePattern("(a)\\1", "fixed_params"), ConfigError);  // backreferences: not RE2
}

}  // namespace
}  // namespace cohort
