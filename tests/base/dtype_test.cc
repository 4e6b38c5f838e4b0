#include "base/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cohort {
namespace {

TEST(DType, SizesAndMXNetFlags) {
  struct Case {
    int flag;
    const char* name;
    size_t size;
  };
  for (Case c : {Case{0, "float32", 4}, Case{1, "float64", 8}, Case{2, "float16", 2},
                 Case{3, "uint8", 1}, Case{4, "int32", 4}, Case{5, "int8", 1}, Case{6, "int64", 8},
                 Case{7, "bool", 1}, Case{12, "bfloat16", 2}}) {
    std::optional<DType> d = DTypeFromFlag(c.flag);
    ASSERT_TRUE(d.has_value()) << c.flag;
    EXPECT_EQ(DTypeName(*d), c.name);
    EXPECT_EQ(DTypeSize(*d), c.size);
    EXPECT_EQ(ParseDType(c.name), *d);
  }
  EXPECT_FALSE(DTypeFromFlag(8).has_value());
  EXPECT_FALSE(DTypeFromFlag(-1).has_value());
  EXPECT_THROW(ParseDType("float128"), Error);
}

TEST(DType, DispatchGivesTheMatchingType) {
  EXPECT_TRUE(
      DispatchDType(DType::kInt64, [](auto t) { return std::is_same_v<decltype(t), int64_t>; }));
  EXPECT_TRUE(DispatchDType(DType::kBFloat16,
                            [](auto t) { return std::is_same_v<decltype(t), bfloat16>; }));
  EXPECT_EQ(kDTypeOf<float16>, DType::kFloat16);
}

TEST(Half, KnownBitPatterns) {
  // IEEE 754 binary16 reference values.
  EXPECT_EQ(float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);  // largest finite
  EXPECT_EQ(float16(65520.0f).bits, 0x7c00);  // ties to even: overflows to inf
  EXPECT_EQ(float16(65519.0f).bits, 0x7bff);
  EXPECT_EQ(float16(std::ldexp(1.0f, -24)).bits, 0x0001);             // smallest subnormal
  EXPECT_EQ(float16(std::ldexp(1.0f, -25)).bits, 0x0000);             // tie to even: zero
  EXPECT_EQ(float16(std::ldexp(3.0f, -26)).bits, 0x0001);             // 0.75 ulp rounds up
  EXPECT_EQ(float16(std::ldexp(1.0f, -14)).bits, 0x0400);             // smallest normal
  EXPECT_EQ(float16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);      // tie to even, down
  EXPECT_EQ(float16(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);  // tie to even, up
  EXPECT_EQ(float16(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(static_cast<float>(float16(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(float16::FromBits(0x3555)), 0.333251953125f);
  EXPECT_EQ(static_cast<float>(float16::FromBits(0x8001)), -std::ldexp(1.0f, -24));
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float16 h = float16::FromBits(static_cast<uint16_t>(bits));
    float f = static_cast<float>(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float16(f).bits, bits) << std::hex << bits;
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfloat16(-2.5f).bits, 0xc020);
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // tie, even stays
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f808001u)).bits, 0x3f81);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(std::nanf("")))));
}

TEST(ConvertValue, FollowsNumpyAstype) {
  EXPECT_EQ(ConvertValue<int32_t>(-2.7), -2);
  EXPECT_EQ(ConvertValue<bool>(0.5f), true);
  EXPECT_EQ(ConvertValue<bool>(0), false);
  EXPECT_EQ(ConvertValue<float>(float16(1.5f)), 1.5f);
  EXPECT_EQ(ConvertValue<float16>(3).bits, 0x4200);
  EXPECT_EQ(ConvertValue<int8_t>(bfloat16(-3.0f)), -3);
}

}  // namespace
}  // namespace cohort
