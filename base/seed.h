// Derives independent random seeds from a seed and a value (device, rank, epoch, batch).
#pragma once

#include <cstdint>

namespace cohort {

// SplitMix64's finalizer over seed + value: nearby inputs give unrelated seeds.
inline uint64_t MixSeed(uint64_t seed, uint64_t value) {
  uint64_t z = seed + (value + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace cohort
