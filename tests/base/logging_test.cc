#include "base/logging.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace cohort {
namespace {

TEST(Logging, LevelsByName) {
  SetLogLevel("debug");
  EXPECT_EQ(Log().level(), spdlog::level::debug);
  SetLogLevel("off");
  EXPECT_EQ(Log().level(), spdlog::level::off);
  SetLogLevel("info");
  EXPECT_EQ(Log().level(), spdlog::level::info);
  EXPECT_THROW(SetLogLevel("chatty"), Error);
}

}  // namespace
}  // namespace cohort
