// Convolution against a direct computation in double, on both paths: oneDNN (channels that are
// multiples of 16, Note [oneDNN convolution]) and im2col; strides, padding, dilation, grad_req
// write and add, and samples split over threads.
#include <gtest/gtest.h>

#include "base/thread_arena.h"
#include "tests/operator/op_harness.h"

namespace cohort::testing {
namespace {

struct ConvCase {
  int64_t n, c, h, w, f, k, stride, pad, dilate;
};

struct Direct {
  std::vector<double> y, dx, dw, db;
};

// y = x ⊛ w + b and the gradients for head dy, by definition.
Direct Reference(const ConvCase& p, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>& b, const std::vector<float>& dy, int64_t oh,
                 int64_t ow) {
  Direct r;
  r.y.assign(p.n * p.f * oh * ow, 0);
  r.dx.assign(x.size(), 0);
  r.dw.assign(w.size(), 0);
  r.db.assign(p.f, 0);
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t f = 0; f < p.f; ++f) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t o = ((n * p.f + f) * oh + oy) * ow + ox;
          double sum = b[f];
          for (int64_t c = 0; c < p.c; ++c) {
            for (int64_t i = 0; i < p.k; ++i) {
              for (int64_t j = 0; j < p.k; ++j) {
                const int64_t yy = oy * p.stride - p.pad + i * p.dilate;
                const int64_t xx = ox * p.stride - p.pad + j * p.dilate;
                if (yy < 0 || yy >= p.h || xx < 0 || xx >= p.w) continue;
                const int64_t xi = ((n * p.c + c) * p.h + yy) * p.w + xx;
                const int64_t wi = ((f * p.c + c) * p.k + i) * p.k + j;
                sum += double{x[xi]} * w[wi];
                r.dx[xi] += double{dy[o]} * w[wi];
                r.dw[wi] += double{dy[o]} * x[xi];
              }
            }
          }
          r.y[o] = sum;
          r.db[f] += dy[o];
        }
      }
    }
  }
  return r;
}

// With `type` bfloat16 or float16 the layer runs in that type (Notes [bfloat16 convolution],
// [float16 convolution]) against the definition on the same (rounded) values, within the type's
// rounding of the results.
void Check(const ConvCase& p, DType type = DType::kFloat32) {
  const bool low = type != DType::kFloat32;
  ThreadArena arena(3);
  for (ThreadArena* threads : {static_cast<ThreadArena*>(nullptr), &arena}) {
    for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
      const std::string k = std::to_string(p.k), s = std::to_string(p.stride);
      const std::string pad = std::to_string(p.pad), dil = std::to_string(p.dilate);
      OpInstance conv = MakeOp("Convolution",
                               {{"kernel", "(" + k + "," + k + ")"},
                                {"num_filter", std::to_string(p.f)},
                                {"stride", "(" + s + "," + s + ")"},
                                {"pad", "(" + pad + "," + pad + ")"},
                                {"dilate", "(" + dil + "," + dil + ")"}},
                               {{p.n, p.c, p.h, p.w}});
      std::mt19937 rng(7);
      for (auto& a : conv.in) FillUniform(a, rng);
      NDArray head = NDArray::Zeros(conv.out[0].shape());
      FillUniform(head, rng);
      if (low) {
        for (auto& a : conv.in) a = a.AsType(type);
        conv.out[0] = NDArray::Zeros(conv.out[0].shape(), type);
        head = head.AsType(type);
      }
      const op::OpContext ctx{.is_train = true, .arena = threads};
      conv.op->Forward(ctx, conv.in, {GradReq::kWrite}, conv.out, conv.aux);
      std::vector<NDArray> grads;
      for (const NDArray& a : conv.in) {
        grads.push_back(NDArray::Zeros(a.shape(), type));
        grads.back().Fill(0.25);
      }
      conv.op->Backward(ctx, {head}, conv.in, conv.out, {req, req, req}, grads, conv.aux);
      const Shape& o = conv.out[0].shape();
      auto floats = [](const NDArray& a) { return a.AsType(DType::kFloat32).ToVector<float>(); };
      const Direct want = Reference(p, floats(conv.in[0]), floats(conv.in[1]), floats(conv.in[2]),
                                    floats(head), o[2], o[3]);
      const double add = req == GradReq::kAdd ? 0.25 : 0.0;
      const std::string what = std::to_string(p.c) + "->" + std::to_string(p.f) + " k" + k + " s" +
                               s + " p" + pad + " d" + dil + " " + GradReqName(req) +
                               (threads ? " 3 threads" : "") + " " + std::string(DTypeName(type));
      auto expect = [&](const NDArray& got, std::vector<double> values, double shift,
                        const std::string& part) {
        for (double& v : values) v += shift;  // kAdd onto the 0.25 the gradients held
        // bfloat16 keeps 8 significant bits, float16 11: results within 2^-8 (2^-11) of their
        // size, and a little.
        const double tolerance = type == DType::kBFloat16  ? 8e-3
                                 : type == DType::kFloat16 ? 1e-3
                                                           : 1e-4;
        testing::ExpectClose(floats(got), values, tolerance, tolerance, what + " " + part);
      };
      expect(conv.out[0], want.y, 0, "output");
      expect(grads[0], want.dx, add, "data gradient");
      expect(grads[1], want.dw, add, "weight gradient");
      expect(grads[2], want.db, add, "bias gradient");
    }
  }
}

TEST(Convolution, OneDnnPathMatchesTheDefinition) {
  Check({.n = 5, .c = 16, .h = 7, .w = 6, .f = 32, .k = 3, .stride = 2, .pad = 1, .dilate = 1});
  Check({.n = 4, .c = 32, .h = 5, .w = 5, .f = 16, .k = 1, .stride = 1, .pad = 0, .dilate = 1});
  Check({.n = 3, .c = 16, .h = 9, .w = 8, .f = 16, .k = 3, .stride = 1, .pad = 2, .dilate = 2});
}

// bfloat16 runs on oneDNN whatever the channels (3 -> 5 too).
TEST(Convolution, BFloat16MatchesTheDefinitionWithinItsRounding) {
  const DType bf16 = DType::kBFloat16;
  Check({.n = 5, .c = 16, .h = 7, .w = 6, .f = 32, .k = 3, .stride = 2, .pad = 1, .dilate = 1},
        bf16);
  Check({.n = 5, .c = 3, .h = 7, .w = 6, .f = 5, .k = 3, .stride = 2, .pad = 1, .dilate = 1}, bf16);
  Check({.n = 3, .c = 4, .h = 9, .w = 8, .f = 6, .k = 3, .stride = 1, .pad = 2, .dilate = 2}, bf16);
}

// float16 runs the float32 layer (oneDNN or im2col) on the widened inputs.
TEST(Convolution, Float16MatchesTheDefinitionWithinItsRounding) {
  const DType f16 = DType::kFloat16;
  Check({.n = 5, .c = 16, .h = 7, .w = 6, .f = 32, .k = 3, .stride = 2, .pad = 1, .dilate = 1},
        f16);
  Check({.n = 5, .c = 3, .h = 7, .w = 6, .f = 5, .k = 3, .stride = 2, .pad = 1, .dilate = 1}, f16);
  Check({.n = 4, .c = 32, .h = 5, .w = 5, .f = 16, .k = 1, .stride = 1, .pad = 0, .dilate = 1},
        f16);
}

TEST(Convolution, Im2ColPathMatchesTheDefinition) {
  Check({.n = 5, .c = 3, .h = 7, .w = 6, .f = 5, .k = 3, .stride = 2, .pad = 1, .dilate = 1});
  Check({.n = 3, .c = 4, .h = 9, .w = 8, .f = 6, .k = 3, .stride = 1, .pad = 2, .dilate = 2});
}

}  // namespace
}  // namespace cohort::testing
