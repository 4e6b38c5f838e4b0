// ndarray/convert.h's loops against base/half.h's definitions, on whatever path this CPU takes
// (Note [AVX512-BF16 narrowing]: blocks of 16 through VCVTNEPS2BF16, denormals through the loop).
#include "ndarray/convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/half.h"

namespace cohort {
namespace {

// Floats over the whole range (every 4099th bit pattern, 1M of them) with the cases the
// conversion treats apart placed at odd positions: denormals (alone in a block of 16 and
// beside normal values), zeros, NaNs, infinities, ties, the largest finite.
std::vector<float> Samples() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    v.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  const uint32_t special[] = {0x00000001u, 0x807fffffu, 0x00400000u, 0x80000000u, 0x00000000u,
                              0x7fc00001u, 0xffa00000u, 0x7f800000u, 0xff800000u, 0x3f808000u,
                              0x3f818000u, 0x7f7fffffu, 0x7f7f8000u, 0x00800000u, 0x007fffffu};
  for (size_t k = 0; k < std::size(special); ++k) {
    v[37 * k + 5] = std::bit_cast<float>(special[k]);
  }
  v.resize(v.size() - 3);  // a length that is no multiple of 16
  return v;
}

TEST(Convert, BFloat16NarrowingMatchesTheDefinition) {
  const std::vector<float> src = Samples();
  std::vector<bfloat16> dst(src.size());
  NarrowFromFloat(src.data(), static_cast<int64_t>(src.size()), DType::kBFloat16, dst.data());
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(dst[i].bits, FloatToBFloat16Bits(src[i]))
        << "at " << i << ": float bits " << std::hex << std::bit_cast<uint32_t>(src[i]);
  }
}

TEST(Convert, BFloat16AddNarrowedMatchesTheDefinition) {
  const std::vector<float> src = Samples();
  std::vector<bfloat16> dst(src.size()), old(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    // Old values that make some sums denormal, zero (x - x) or a tie.
    old[i] = bfloat16(i % 3 == 0 ? -src[i] : (i % 3 == 1 ? 1.0f : src[src.size() - 1 - i]));
  }
  dst = old;
  StoreNarrowed(src.data(), static_cast<int64_t>(src.size()), DType::kBFloat16, dst.data(), true);
  for (size_t i = 0; i < src.size(); ++i) {
    const float sum = src[i] + static_cast<float>(old[i]);
    if (std::isnan(sum)) {  // which operand's payload a NaN sum carries is the compiler's choice
      ASSERT_TRUE(std::isnan(static_cast<float>(dst[i]))) << "at " << i;
      continue;
    }
    ASSERT_EQ(dst[i].bits, FloatToBFloat16Bits(sum))
        << "at " << i << ": float bits " << std::hex << std::bit_cast<uint32_t>(src[i]);
  }
}

}  // namespace
}  // namespace cohort
