// What the binding-fusion tests (masked softmax, LayerNorm cast, widening add) share: how many
// nodes of an op a graph holds, and reproducible inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "symbol/symbol.h"

namespace cohort::testing {

inline size_t CountOps(const Symbol& s, const std::string& op) {
  size_t n = 0;
  for (const auto& node : s.TopoOrder()) n += node->op == op;
  return n;
}

// n values uniform in [-half_width, half_width), from a 32-bit LCG started at `seed`.
inline std::vector<float> LcgValues(size_t n, uint32_t seed, float half_width) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) * (2 * half_width) - half_width;
  }
  return v;
}

}  // namespace cohort::testing
