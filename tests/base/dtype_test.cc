#include "base/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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

// Note [Branchless half conversions]: the conversions against their definitions, written
// with branches: every half, and floats over the whole range in steps of 1021 bit patterns with
// every pattern around the boundaries (subnormal halves, 2^-14, 65504-65536, infinity, NaN).
float HalfDefinition(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) {
    return mantissa ? std::bit_cast<float>(0x7f800000u | (h & 0x8000u) << 16 | mantissa << 13)
                    : sign * std::numeric_limits<float>::infinity();
  }
  return sign * std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
}
uint16_t FloatToHalfDefinition(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return sign | 0x7e00;
  const double a = std::fabs(static_cast<double>(f));
  // The nearest half, ties to the even mantissa: halves are exact in double.
  uint16_t best = 0;
  double best_error = INFINITY;
  int lo = 0, hi = 0x7c00;  // binary search over the ordered magnitudes
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (HalfDefinition(static_cast<uint16_t>(mid)) <= a ? lo : hi) = mid;
  }
  for (int h : {lo, hi}) {
    const double v = h == 0x7c00 ? 65536.0 : HalfDefinition(static_cast<uint16_t>(h));  // 65520 up
    const double error = std::fabs(v - a);
    if (error < best_error || (error == best_error && (h & 1) == 0)) {
      best = static_cast<uint16_t>(h);
      best_error = error;
    }
  }
  return sign | best;
}

TEST(Half, ConversionsMatchTheirDefinitions) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float got = static_cast<float>(float16::FromBits(static_cast<uint16_t>(bits)));
    const float want = HalfDefinition(static_cast<uint16_t>(bits));
    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << std::hex << bits;
  }
  std::vector<uint32_t> patterns;
  for (uint64_t x = 0; x <= 0xffffffffu; x += 1021) patterns.push_back(static_cast<uint32_t>(x));
  for (const uint32_t edge : {0x00000000u, 0x33000000u, 0x387fc000u, 0x38800000u, 0x477fe000u,
                              0x477ff000u, 0x47800000u, 0x7f800000u, 0x7fc00000u}) {
    for (uint32_t d = 0; d < 8192; ++d) {
      patterns.push_back(edge + d);
      patterns.push_back(edge - d);
      patterns.push_back((edge + d) | 0x80000000u);
    }
  }
  for (const uint32_t x : patterns) {
    const float f = std::bit_cast<float>(x);
    if (std::isinf(f) || std::fabs(f) >= 65520.0f) {
      ASSERT_EQ(float16(f).bits, (std::signbit(f) ? 0xfc00 : 0x7c00)) << std::hex << x;
    } else {
      ASSERT_EQ(float16(f).bits, FloatToHalfDefinition(f)) << std::hex << x;
    }
  }
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

// RoundedThrough's 32-bit bfloat16 steps give float(bfloat16(f)) for every float: ties, the
// largest finite values (which round to infinity), infinities, NaNs of either sign, denormals.
TEST(BFloat16, RoundedThroughIsTheRoundTrip) {
  for (uint64_t x = 0; x <= 0xffffffffu; x += 257) {
    for (const uint32_t bits : {static_cast<uint32_t>(x), static_cast<uint32_t>(x) | 0x8000u,
                                (static_cast<uint32_t>(x) & ~0xffffu) | 0x7fffu}) {
      const float f = std::bit_cast<float>(bits);
      ASSERT_EQ(std::bit_cast<uint32_t>(RoundedThrough<bfloat16>(f)),
                std::bit_cast<uint32_t>(static_cast<float>(bfloat16(f))))
          << std::hex << bits;
    }
  }
  EXPECT_EQ(RoundedThrough<bfloat16>(std::bit_cast<float>(0x7f7fffffu)), INFINITY);
  EXPECT_TRUE(std::isnan(RoundedThrough<bfloat16>(std::bit_cast<float>(0x7fffffffu))));
  EXPECT_TRUE(std::isnan(RoundedThrough<bfloat16>(std::bit_cast<float>(0xff800001u))));
  EXPECT_EQ(RoundedThrough<float16>(1.0f + 0x1p-11f), 1.0f);  // the generic path: a tie to even
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
