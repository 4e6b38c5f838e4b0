// Convolution (2-D, NCHW, groups, dilation): the parameters, parsed once, that the CPU kernel
// (convolution.cc: oneDNN or im2col + OpenBLAS) and the CUDA kernel (convolution.cu: cuDNN) both
// take. Neither has per-element math of its own to share: the libraries compute.
#pragma once

#include <cstdint>

#include "base/shape.h"
#include "operator/common/operator.h"

namespace cohort::op {

struct ConvolutionParam {
  Shape kernel;
  int64_t num_filter = 0;
  Shape stride = {1, 1};
  Shape dilate = {1, 1};
  Shape pad = {0, 0};
  int64_t num_group = 1;
  bool no_bias = false;

  static ConvolutionParam Parse(const Attrs& attrs);
};

}  // namespace cohort::op
