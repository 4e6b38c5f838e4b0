// Dropout: the parameters and the mask, a hash of (seed, element index) that the CPU kernel
// (dropout.cc) and the CUDA kernel (dropout.cu) both compute, so that a GPU run draws the masks a
// CPU run draws and the two can be compared, dropout included.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "base/half.h"
#include "base/host_device.h"
#include "base/random_stream.h"  // Mix64
#include "operator/common/operator.h"

namespace cohort::op {

enum class DropoutMode { kTraining, kAlways };
inline constexpr const char* kDropoutModeNames[] = {"training", "always"};

struct DropoutParam {
  float p = 0.5f;
  DropoutMode mode = DropoutMode::kTraining;

  static DropoutParam Parse(const Attrs& attrs);
  Attrs ToAttrs() const;
  bool Active(bool is_train) const { return (is_train || mode == DropoutMode::kAlways) && p > 0; }
};

// Element i's draw is output i of a splitmix64 generator seeded with Mix64(seed) (seeds of
// successive steps may differ in few bits): independent of the thread or launch that computes
// it. An element is kept with probability 1 - p (the draw at or above p · 2^64) and scaled by
// 1 / (1 - p).
struct DropoutMask {
  uint64_t key, threshold;
  float keep;

  DropoutMask(uint64_t seed, float p)
      : key(Mix64(seed)),
        threshold(static_cast<uint64_t>(static_cast<double>(p) * 18446744073709551615.0)),
        keep(1.0f / (1.0f - p)) {}

  // The mask of an array of n elements whose rows are the executor's batch rows: element i is
  // global element i + ElementOffset (Note [Random streams]).
  static int64_t ElementOffset(const OpContext& ctx, int64_t n) {
    return ctx.batch_rows > 0 && n % ctx.batch_rows == 0 ? ctx.first_sample * (n / ctx.batch_rows)
                                                         : 0;
  }

  COHORT_HOST_DEVICE float At(int64_t i) const {
    const uint64_t bits = Mix64(key + (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull);
    return bits >= threshold ? keep : 0.0f;
  }
};

// Output element i for input x and mask m in the data's type T, as MXNet keeps both (the half
// types multiply in float).
template <typename T>
COHORT_HOST_DEVICE T DropoutValue(T x, T m) {
  return ConvertValue<T>(ConvertValue<ComputeType<T>>(x) * ConvertValue<ComputeType<T>>(m));
}

}  // namespace cohort::op
