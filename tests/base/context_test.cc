#include "base/context.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace cohort {
namespace {

TEST(Context, ParsesSingleDevices) {
  EXPECT_EQ(Context::Parse("cpu"), Context::CPU(0));
  EXPECT_EQ(Context::Parse("cpu:3"), Context::CPU(3));
  EXPECT_EQ(Context::Parse(" gpu:1 "), Context::GPU(1));
  EXPECT_EQ(Context::Parse("gpu(2)"), Context::GPU(2));
  EXPECT_EQ(Context::Parse("cpu_pinned:0"), Context::CPUPinned(0));
}

TEST(Context, PrintsAsItParses) {
  for (const char* text : {"cpu:0", "gpu:7", "cpu_pinned:1"}) {
    EXPECT_EQ(Context::Parse(text).ToString(), text);
  }
}

TEST(Context, ParsesListsAndRanges) {
  EXPECT_EQ(ParseContexts("gpu:0-3"), (std::vector<Context>{Context::GPU(0), Context::GPU(1),
                                                            Context::GPU(2), Context::GPU(3)}));
  EXPECT_EQ(ParseContexts("cpu:0,cpu:1"), (std::vector<Context>{Context::CPU(0), Context::CPU(1)}));
  EXPECT_EQ(ParseContexts("cpu:0, gpu:2-3"),
            (std::vector<Context>{Context::CPU(0), Context::GPU(2), Context::GPU(3)}));
}

TEST(Context, RejectsMalformedSpecsNamingThem) {
  for (const char* bad :
       {"", "tpu:0", "gpu:", "gpu:-1", "gpu:3-1", "gpu:a", "cpu:0,,cpu:1", "gpu:1x"}) {
    try {
      ParseContexts(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(Context::Parse("gpu:0-3"), Error);  // a range is not one device
}

TEST(Context, RejectsDuplicates) {
  try {
    ParseContexts("gpu:0-2,gpu:1");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu:1 is listed twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cohort
