// Counter-based random numbers for host and device code alike: draw i of a stream is a function
// of (key, i), so any thread or kernel launch that computes element i draws the same number, on
// a CPU or a GPU (Dropout's masks, the random operators, SGLD's noise).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace cohort {

// splitmix64's finaliser (Steele, Lea and Flood): a bijection with full avalanche.
COHORT_HOST_DEVICE uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Draw i of a splitmix64 stream keyed by `key` (itself best a Mix64 of a seed).
COHORT_HOST_DEVICE uint64_t RandomBits(uint64_t key, uint64_t i) {
  return Mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull);
}

// Element i of a normal stream with this mean and standard deviation: Box-Muller on draws 2i
// and 2i + 1, in double; u1 in (0, 1] keeps the logarithm finite.
COHORT_HOST_DEVICE double RandomGaussian(uint64_t key, uint64_t i, double mean, double stddev) {
  const double u1 =
      (static_cast<double>(RandomBits(key, 2 * i) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  const double u2 =
      static_cast<double>(RandomBits(key, 2 * i + 1) >> 11) * (1.0 / 9007199254740992.0);
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Element i of a uniform stream on [a, b): 24 random bits scaled in double, rounded to float.
COHORT_HOST_DEVICE float RandomUniform(uint64_t key, uint64_t i, double a, double b) {
  const double unit = static_cast<double>(RandomBits(key, i) >> 40) * (1.0 / 16777216.0);
  return static_cast<float>(a + (b - a) * unit);
}

// The seed an executor hands the op of node `node_index` on its `forward_count`-th forward
// (counted from 1) after set_random_seed(random_seed): each node and each forward draws afresh.
COHORT_HOST_DEVICE uint64_t ForwardSeed(uint64_t random_seed, uint64_t forward_count,
                                        uint64_t node_index) {
  return random_seed ^ forward_count * 0x9E3779B97F4A7C15ull ^
         (node_index + 1) * 0xBF58476D1CE4E5B9ull;
}

// mx.random.seed's stream (Note [Random streams]): draw d of seed s is seeded with
// Mix64(s + d * golden ratio), so the same seed gives the same draws whatever ran between.
// mx.random.uniform/normal run their op alone, node 0 of a one-op executor on its first
// forward: NextDrawKey is the key their elements are drawn with, which cohort-train's
// initializer uses too, so that its parameters equal Module.init_params' after mx.random.seed.
class SeedStream {
 public:
  explicit SeedStream(uint64_t seed = 0) : base_(seed) {}
  uint64_t Next() { return Mix64(base_ + 0x9E3779B97F4A7C15ull * ++draws_); }
  uint64_t NextDrawKey() { return Mix64(ForwardSeed(Next(), 1, 0)); }

 private:
  uint64_t base_, draws_ = 0;
};

}  // namespace cohort
