// Max pooling with 2x2 windows and stride 2 (Note [2x2 max pooling]) against a direct
// computation: odd sizes, ties, NaN, both the four-window and the one-window loop, and grad_req
// write and add.
#include <limits>

#include "tests/operator/op_harness.h"

namespace cohort::testing {
namespace {

// Width 11: windows 0-3 of a row take the four-wide path, window 4 the scalar one.
constexpr int64_t kN = 2, kC = 3, kH = 5, kW = 11, kOH = 2, kOW = 5;

int64_t At(int64_t plane, int64_t y, int64_t x) { return (plane * kH + y) * kW + x; }

// Values with ties (few distinct levels) and one NaN window element.
OpInstance MakePool() {
  OpInstance pool =
      MakeOp("Pooling", {{"kernel", "(2,2)"}, {"stride", "(2,2)"}}, {{kN, kC, kH, kW}});
  float* x = static_cast<float*>(pool.in[0].raw_data());
  std::mt19937 rng(5);
  for (int64_t i = 0; i < pool.in[0].size(); ++i) x[i] = static_cast<float>(rng() % 4);
  x[At(1, 0, 0)] = std::numeric_limits<float>::quiet_NaN();  // first of its window
  x[At(2, 1, 3)] = std::numeric_limits<float>::quiet_NaN();  // last of its window
  x[At(3, 0, 8)] = std::numeric_limits<float>::quiet_NaN();  // first of a tail window
  return pool;
}

// The first maximum of a window in row-major order (a NaN first element keeps it).
int64_t Winner(const float* x, int64_t plane, int64_t oy, int64_t ox) {
  int64_t best = At(plane, 2 * oy, 2 * ox);
  for (int64_t k = 1; k < 4; ++k) {
    const int64_t i = At(plane, 2 * oy + k / 2, 2 * ox + k % 2);
    if (x[i] > x[best]) best = i;
  }
  return best;
}

TEST(MaxPool2x2, ForwardTakesEachWindowsMaximumIgnoringNaN) {
  OpInstance pool = MakePool();
  pool.Forward(true);
  ASSERT_EQ(pool.out[0].shape(), Shape({kN, kC, kOH, kOW}));
  const float* x = static_cast<const float*>(pool.in[0].raw_data());
  const std::vector<float> y = pool.out[0].ToVector<float>();
  for (int64_t p = 0; p < kN * kC; ++p) {
    for (int64_t oy = 0; oy < kOH; ++oy) {
      for (int64_t ox = 0; ox < kOW; ++ox) {
        float want = -std::numeric_limits<float>::infinity();
        for (int64_t k = 0; k < 4; ++k) {
          const float v = x[At(p, 2 * oy + k / 2, 2 * ox + k % 2)];
          if (v > want) want = v;  // NaN never compares greater
        }
        EXPECT_EQ(y[(p * kOH + oy) * kOW + ox], want)
            << "plane " << p << " (" << oy << "," << ox << ")";
      }
    }
  }
}

TEST(MaxPool2x2, BackwardRoutesToTheFirstMaximumAndClearsTheRest) {
  for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
    OpInstance pool = MakePool();
    pool.Forward(true);
    NDArray head = NDArray::Zeros(pool.out[0].shape());
    std::mt19937 rng(9);
    FillUniform(head, rng, 1, 2);
    NDArray grad = NDArray::Zeros(pool.in[0].shape());
    grad.Fill(7);  // write must overwrite every element, the odd last row and column included
    pool.Backward(true, {head}, {req}, {grad});
    std::vector<float> want(grad.size(), req == GradReq::kAdd ? 7.0f : 0.0f);
    const float* x = static_cast<const float*>(pool.in[0].raw_data());
    const std::vector<float> g = head.ToVector<float>();
    for (int64_t p = 0; p < kN * kC; ++p) {
      for (int64_t oy = 0; oy < kOH; ++oy) {
        for (int64_t ox = 0; ox < kOW; ++ox)
          want[Winner(x, p, oy, ox)] += g[(p * kOH + oy) * kOW + ox];
      }
    }
    EXPECT_EQ(grad.ToVector<float>(), want) << GradReqName(req);
  }
}

}  // namespace
}  // namespace cohort::testing
