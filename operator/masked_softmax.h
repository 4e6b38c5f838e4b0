// _masked_softmax: softmax(data · scale + mask) over the last axis in one pass, the attention
// chain that the executor's fusion pass makes of _mul_scalar → broadcast_add → softmax (Note
// [Masked softmax fusion], symbol/fuse_masked_softmax.h). The parameters and the row bodies that
// the CPU kernel (masked_softmax.cc) and the CUDA kernel (masked_softmax.cu) both run.
#pragma once

#include <cstdint>
#include <optional>

#include "base/dtype.h"
#include "base/error.h"
#include "operator/common/fast_math.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

struct MaskedSoftmaxParam {
  double scale = 1;                   // _mul_scalar's scalar
  DType out_dtype = DType::kFloat32;  // the softmax's, or the amp_cast's after it

  static MaskedSoftmaxParam Parse(const Attrs& attrs);
};

// Note [Masked softmax values]
// The fused op computes what the chain it replaces computes, bit for bit, in every dtype:
// s = In(float(x) · In(scale)) (the _mul_scalar in the data's type In), z = float(s) + mask (the
// add in float32, after the AMP pass's cast), y = Out(softmax(z)) (float32 softmax, then the
// cast to Out). Backward recomputes the float32 probabilities p from x and mask (so it keeps no
// output and reads no rounded one), dz = p·(dy - Σ dy·p) as softmax's backward, and
// dx (=|+=) In(float(In(dz)) · In(scale)), the cast's and the _mul_scalar's backward. The sums
// and maxima go through the same lanes in the same order as softmax.h's rows. Row r of the data
// reads mask row r mod mask_rows: the mask is (mask_rows, size), broadcast over leading axes.
template <typename In, typename Out>
struct MaskedSoftmaxRows {
  const In* x;
  const float* mask;
  Out* y;
  int64_t size, mask_rows;
  float scale;  // In(scale), as float

  COHORT_HOST_DEVICE const float* MaskRow(int64_t base) const {
    return mask + (base / size % mask_rows) * size;
  }
  // The masked logit of column c of the row at xr, whose mask row is m.
  COHORT_HOST_DEVICE float Logit(const float* m, const In* xr, int64_t c) const {
    return RoundedThrough<In>(static_cast<float>(xr[c]) * scale) + m[c];
  }

  // The GPU's row: the exponentials computed again in each pass instead of kept.
  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    const In* xr = x + base;
    const float* m = MaskRow(base);
    const float max = lanes.Max(size, [&](int64_t c) { return Logit(m, xr, c); });
    const float total =
        lanes.Sum(size, [&](int64_t c) { return FastExp((Logit(m, xr, c) - max) * 1.0f); });
    const float inv = 1.0f / total;
    Out* yr = y + base;
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      yr[c] = Out(FastExp((Logit(m, xr, c) - max) * 1.0f) * inv);
    }
  }

  // The CPU's row: the probabilities of the row at `base` into p (size floats), each pass a loop
  // that vectorizes; the same operations in the same order as SerialLanes runs operator().
  COHORT_HOST_DEVICE void Probabilities(int64_t base, float* p) const {
    const In* xr = x + base;
    const float* m = MaskRow(base);
    COHORT_INDEPENDENT
    for (int64_t c = 0; c < size; ++c) p[c] = Logit(m, xr, c);
    SoftmaxInPlace(p);
  }
  // The probabilities of a row whose masked logits p holds, in place.
  COHORT_HOST_DEVICE void SoftmaxInPlace(float* p) const {
    const float max = MaxOf(size, [&](int64_t c) { return p[c]; });
    COHORT_INDEPENDENT
    for (int64_t c = 0; c < size; ++c) p[c] = FastExp((p[c] - max) * 1.0f);
    const float inv = 1.0f / SumOf16(size, [&](int64_t c) { return p[c]; });
    COHORT_INDEPENDENT
    for (int64_t c = 0; c < size; ++c) p[c] *= inv;
  }
  COHORT_HOST_DEVICE void RowOnCpu(int64_t base, float* p) const {
    Probabilities(base, p);
    Out* yr = y + base;
    COHORT_INDEPENDENT
    for (int64_t c = 0; c < size; ++c) yr[c] = Out(p[c]);
  }
};

template <typename In, typename Out>
struct MaskedSoftmaxGradRows {
  MaskedSoftmaxRows<In, Out> forward;  // its y unused
  const Out* dy;
  In* dx;
  GradReq req;

  // float(In(dz)) · In(scale) for dz = p · (dy - d), as softmax's backward: the data's gradient
  // before the last rounding.
  COHORT_HOST_DEVICE float Gradient(float p, float dy_c, float d) const {
    return RoundedThrough<In>(p * (dy_c - d) * 1.0f) * forward.scale;
  }
  // dx (=|+=) In(Gradient(...)).
  COHORT_HOST_DEVICE void Write(In* dxr, int64_t c, float p, float dy_c, float d) const {
    const float g = Gradient(p, dy_c, d);
    dxr[c] = In(req == GradReq::kAdd ? static_cast<float>(dxr[c]) + g : g);
  }

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    const MaskedSoftmaxRows<In, Out>& f = forward;
    const In* xr = f.x + base;
    const float* m = f.MaskRow(base);
    const float max = lanes.Max(f.size, [&](int64_t c) { return f.Logit(m, xr, c); });
    const float total =
        lanes.Sum(f.size, [&](int64_t c) { return FastExp((f.Logit(m, xr, c) - max) * 1.0f); });
    const float inv = 1.0f / total;
    auto p = [&](int64_t c) { return FastExp((f.Logit(m, xr, c) - max) * 1.0f) * inv; };
    const Out* dyr = dy + base;
    const float d = lanes.Sum(f.size, [&](int64_t c) { return static_cast<float>(dyr[c]) * p(c); });
    In* dxr = dx + base;
    COHORT_INDEPENDENT
    for (int64_t c = lanes.first(); c < f.size; c += lanes.step()) {
      Write(dxr, c, p(c), static_cast<float>(dyr[c]), d);
    }
  }

  COHORT_HOST_DEVICE void RowOnCpu(int64_t base, float* p) const {
    forward.Probabilities(base, p);
    const Out* dyr = dy + base;
    const float d =
        SumOf16(forward.size, [&](int64_t c) { return static_cast<float>(dyr[c]) * p[c]; });
    In* dxr = dx + base;
    COHORT_INDEPENDENT
    for (int64_t c = 0; c < forward.size; ++c) Write(dxr, c, p[c], static_cast<float>(dyr[c]), d);
  }
};

// The mask's gradient (not on the fused path, whose mask takes none, but for the op as such):
// each row's statistics first (max, 1 / Σ, Σ dy·p: `stats`, 3 floats a row), then each mask
// element sums p · (dy - Σ dy·p) over the rows that read it.
template <typename In, typename Out>
struct MaskedSoftmaxRowStats {
  MaskedSoftmaxGradRows<In, Out> grad;
  float* stats;

  COHORT_EXEC_CHECK_DISABLE
  template <typename Lanes>
  COHORT_HOST_DEVICE void operator()(Lanes lanes, int64_t base) const {
    const MaskedSoftmaxRows<In, Out>& f = grad.forward;
    const In* xr = f.x + base;
    const float* m = f.MaskRow(base);
    const float max = lanes.Max(f.size, [&](int64_t c) { return f.Logit(m, xr, c); });
    const float inv = 1.0f / lanes.Sum(f.size, [&](int64_t c) {
      return FastExp((f.Logit(m, xr, c) - max) * 1.0f);
    });
    const Out* dyr = grad.dy + base;
    const float d = lanes.Sum(f.size, [&](int64_t c) {
      return static_cast<float>(dyr[c]) * (FastExp((f.Logit(m, xr, c) - max) * 1.0f) * inv);
    });
    if (lanes.first() == 0) {
      float* s = stats + base / f.size * 3;
      s[0] = max;
      s[1] = inv;
      s[2] = d;
    }
  }

  // Σ over the `rows` data rows that read mask element j of p · (dy - d).
  COHORT_HOST_DEVICE float MaskGradient(int64_t j, int64_t rows) const {
    const MaskedSoftmaxRows<In, Out>& f = grad.forward;
    const int64_t c = j % f.size;
    float sum = 0;
    for (int64_t r = j / f.size; r < rows; r += f.mask_rows) {
      const int64_t base = r * f.size;
      const float* s = stats + r * 3;
      const float p = FastExp((f.Logit(f.MaskRow(base), f.x + base, c) - s[0]) * 1.0f) * s[1];
      sum += p * (static_cast<float>(grad.dy[base + c]) - s[2]);
    }
    return sum;
  }
};

// The mask's rows (the product of its axes but the last) where it broadcasts over the data as
// Note [Masked softmax values] says (its last axes the data's, 1 or absent on the others), else
// nullopt: the op's shape check and the fusion pass's (symbol/fuse_masked_softmax.cc) both.
std::optional<int64_t> MaskedSoftmaxMaskRows(const Shape& data, const Shape& mask);

}  // namespace cohort::op
