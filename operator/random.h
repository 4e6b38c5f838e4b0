// _random_uniform and _random_normal (mx.random.uniform / normal, mx.nd.random.*): samples drawn
// from a counter-based stream, each element's value a function of (seed, position) that the CPU
// kernel (random.cc) and the CUDA kernel (random.cu) both compute, so a GPU draws the numbers a
// CPU draws.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"
#include "base/random_stream.h"
#include "operator/common/operator.h"

namespace cohort::op {

enum class RandomKind { kUniform, kNormal };

struct RandomParam {
  RandomKind kind = RandomKind::kUniform;
  double a = 0, b = 1;  // uniform: low, high; normal: loc, scale
  Shape shape;
  DType dtype = DType::kFloat32;  // float16, float32 or float64: the float draw, rounded

  static RandomParam Parse(RandomKind kind, const Attrs& attrs);
};

// Element i: uniform on [a, b) from 24 random bits, or normal (base/random_stream.h's
// RandomGaussian) with mean a and standard deviation b (draws keyed by Mix64(seed)).
COHORT_HOST_DEVICE float RandomValue(RandomKind kind, uint64_t key, double a, double b, int64_t i) {
  const auto u = static_cast<uint64_t>(i);
  return kind == RandomKind::kUniform ? RandomUniform(key, u, a, b)
                                      : static_cast<float>(RandomGaussian(key, u, a, b));
}

}  // namespace cohort::op
