// slice_axis and SliceChannel (split): the parameters and the index map from an output element
// to the input element it copies, shared by the CPU kernel (slice.cc) and the CUDA kernel
// (slice.cu). Both take a window [begin, begin + size) of one axis; backward writes the head
// gradient back into that window.
#pragma once

#include <cstdint>
#include <optional>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct SliceAxisParam {
  int axis = 0;
  int64_t begin = 0;
  std::optional<int64_t> end;  // None: to the end

  static SliceAxisParam Parse(const Attrs& attrs);
};

struct SliceChannelParam {
  int num_outputs = 1;
  int axis = 1;
  bool squeeze_axis = false;

  static SliceChannelParam Parse(const std::string& op, const Attrs& attrs);
};

// A window of `size` positions from `begin` along the middle axis of an (outer, extent, inner)
// array.
struct SliceWindow {
  int64_t extent, begin, size, inner;
};

// The input element that output element i of the window copies.
COHORT_HOST_DEVICE int64_t SliceSource(const SliceWindow& w, int64_t i) {
  const int64_t block = w.size * w.inner;
  return i / block * w.extent * w.inner + w.begin * w.inner + i % block;
}

}  // namespace cohort::op
