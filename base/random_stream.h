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

}  // namespace cohort
