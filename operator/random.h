// _random_uniform and _random_normal (mx.random.uniform / normal, mx.nd.random.*): samples drawn
// from a counter-based stream, each element's value a function of (seed, position) that the CPU
// kernel (random.cc) and the CUDA kernel (random.cu) both compute, so a GPU draws the numbers a
// CPU draws.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"
#include "operator/common/operator.h"
#include "operator/dropout.h"  // Mix64

namespace cohort::op {

enum class RandomKind { kUniform, kNormal };

struct RandomParam {
  RandomKind kind = RandomKind::kUniform;
  double a = 0, b = 1;  // uniform: low, high; normal: loc, scale
  Shape shape;
  DType dtype = DType::kFloat32;  // float16, float32 or float64: the float draw, rounded

  static RandomParam Parse(RandomKind kind, const Attrs& attrs);
};

// Draw i of a splitmix64 stream keyed by Mix64(seed), as Dropout's mask (dropout.h).
COHORT_HOST_DEVICE uint64_t RandomBits(uint64_t key, uint64_t i) {
  return Mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull);
}

// Element i: uniform on [a, b) from 24 random bits, or normal (Box-Muller on draws 2i and
// 2i + 1, in double) with mean a and standard deviation b.
COHORT_HOST_DEVICE float RandomValue(RandomKind kind, uint64_t key, double a, double b, int64_t i) {
  const auto u = static_cast<uint64_t>(i);
  if (kind == RandomKind::kUniform) {
    const double unit = static_cast<double>(RandomBits(key, u) >> 40) * (1.0 / 16777216.0);
    return static_cast<float>(a + (b - a) * unit);
  }
  // u1 in (0, 1] keeps the logarithm finite.
  const double u1 =
      (static_cast<double>(RandomBits(key, 2 * u) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  const double u2 =
      static_cast<double>(RandomBits(key, 2 * u + 1) >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(a +
                            b * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

}  // namespace cohort::op
