// Convolution on oneDNN's blocked CPU kernels, for the shapes they suit (Note [oneDNN
// convolution]); the Convolution operator calls it and falls back to im2col + GEMM otherwise.
#pragma once

#include <cstdint>

namespace cohort::op {

// Note [oneDNN convolution]
// oneDNN's JIT kernels work on channels in blocks of 16 (nChw16c). Where both channel counts are
// multiples of 16 they ran ResNet-20's 3x3 layers 2 to 5 times faster than im2col + OpenBLAS
// (forward, backward data, backward weights), reorders to and from NCHW included; where they
// are not (LeNet's 20 and 50 channels) they were slower. So the Convolution operator takes this
// path for one group with channels that are multiples of 16, and im2col otherwise. Primitives
// are made once per thread and shape (JIT compilation costs milliseconds) and cached with their
// memory objects, so a step only sets data pointers; oneDNN's OpenMP runs one thread per call,
// as the operator splits samples over the device's threads itself (Note [Kernel threads]).
// Arrays are NCHW / OIHW float32; bias is left to the caller. With `bfloat16` the inputs of each
// call (x, w, dy) are bfloat16 and its result (y, dx, dw) float32, the products summed in float32
// (AVX512-BF16 instructions where the CPU has them): mixed precision's layers, which the caller
// rounds to bfloat16 in the pass that adds the bias or the old gradient.
struct DnnlConvShape {
  int64_t batch, in_channels, height, width, out_channels, out_h, out_w;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool bfloat16 = false;
  bool operator==(const DnnlConvShape&) const = default;
};

bool DnnlConvSuits(int64_t in_channels, int64_t out_channels, int64_t groups);

// y = x ⊛ w.
void DnnlConvForward(const DnnlConvShape& s, const void* x, const void* w, float* y);
// dx = (or += when add; float32 only) the gradient of x for dy.
void DnnlConvBackwardData(const DnnlConvShape& s, const void* dy, const void* w, float* dx,
                          bool add);
// dw = the gradient of w for dy (overwritten).
void DnnlConvBackwardWeights(const DnnlConvShape& s, const void* x, const void* dy, float* dw);

}  // namespace cohort::op
