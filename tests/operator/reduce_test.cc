// sum, mean and max (Note [Reduce as rows]): which reductions run as rows, and both paths against
// a reference summed in double, forward and backward (grad_req write and add), over threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/thread_arena.h"
#include "operator/common/kernel_util.h"
#include "operator/reduce.h"
#include "tests/operator/op_harness.h"

namespace cohort::testing {
namespace {

op::ReduceRowsShape RowsOf(const op::Attrs& attrs, const Shape& in) {
  return op::ReduceParam::Parse("sum", attrs).RowsShape(in);
}

TEST(ReduceRows, WhichReductionsAreRows) {
  struct Case {
    op::Attrs attrs;
    Shape in;
    int64_t lead, outer, size, inner;  // size 0: not rows
  } cases[] = {
      {{}, Shape({2, 3, 4}), 1, 1, 24, 1},
      {{{"axis", "1"}}, Shape({2, 3, 4}), 1, 2, 3, 4},
      {{{"axis", "(1, 2)"}}, Shape({2, 3, 4}), 1, 2, 12, 1},
      {{{"axis", "0"}}, Shape({2, 3, 4}), 1, 1, 2, 12},
      // A reduced run at the start and another later: lead blocks of rows.
      {{{"axis", "(0, 2)"}}, Shape({2, 3, 4}), 2, 3, 4, 1},
      {{{"axis", "1"}, {"exclude", "True"}}, Shape({2, 3, 4}), 2, 3, 4, 1},
      {{{"axis", "(0, 2, 3)"}}, Shape({8, 16, 5, 5}), 8, 16, 25, 1},
      {{{"axis", "(0, 2)"}}, Shape({2, 3, 4, 5}), 2, 3, 4, 5},
      {{{"axis", "(1, 3)"}}, Shape({2, 3, 4, 5}), 0, 0, 0, 0},  // kept, reduced, kept, reduced
      {{{"axis", "(0, 2, 4)"}}, Shape({2, 3, 4, 5, 6}), 0, 0, 0, 0},
      // Axes of extent 1 are no gap, reduced or not.
      {{{"axis", "(0, 2)"}}, Shape({3, 1, 5, 7}), 1, 1, 15, 7},
      {{{"axis", "(1, 3)"}}, Shape({3, 5, 1, 7, 2}), 1, 3, 35, 2},
      {{{"axis", "1"}}, Shape({3, 1, 5}), 1, 1, 1, 15},  // nothing to reduce: rows of one
      {{{"axis", "(0, 1)"}}, Shape({1, 1, 5}), 1, 1, 1, 5},
  };
  for (const Case& c : cases) {
    const op::ReduceRowsShape r = RowsOf(c.attrs, c.in);
    SCOPED_TRACE(::testing::PrintToString(c.in) + " axis " +
                 (c.attrs.count("axis") ? c.attrs.at("axis") : "None") +
                 (c.attrs.count("exclude") ? " exclude" : ""));
    EXPECT_EQ(r.rows, c.size > 0);
    if (c.size > 0) {
      EXPECT_EQ(r.lead, c.lead);
      EXPECT_EQ(r.outer, c.outer);
      EXPECT_EQ(r.size, c.size);
      EXPECT_EQ(r.inner, c.inner);
    }
  }
}

// Every element's position in the kept shape (reduced axes 1), row-major.
int64_t KeptIndex(const Shape& in, const Shape& kept, int64_t i) {
  int64_t j = 0, stride = 1;
  for (int d = in.ndim() - 1; d >= 0; --d) {
    const int64_t coord = i % in[d];
    i /= in[d];
    if (kept[d] != 1) j += coord * stride;
    stride *= kept[d];
  }
  return j;
}

TEST(ReduceRows, BothPathsMatchADoubleReference) {
  struct Case {
    const char* axis;
    Shape in;
  } cases[] = {
      {"None", Shape({300, 257})},   // everything: one long row
      {"1", Shape({300, 257})},      // contiguous rows
      {"0", Shape({300, 257})},      // strided rows
      {"1", Shape({9, 130, 33})},    // a middle axis
      {"(0, 2)", Shape({9, 130, 33})},  // lead blocks of contiguous rows
      {"(0, 2)", Shape({5, 40, 30, 70})},  // lead blocks of rows apart
      {"(1, 3)", Shape({5, 40, 30, 7})},  // not rows
  };
  ThreadArena arena(3);
  std::mt19937 rng(5);
  for (const char* kind : {"sum", "mean", "max"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(kind) + " axis " + c.axis + " of " +
                   ::testing::PrintToString(c.in));
      const op::Attrs attrs = {{"axis", c.axis}};
      OpInstance inst = MakeOp(kind, attrs, {c.in});
      FillUniform(inst.in[0], rng);
      const op::OpContext ctx{.is_train = true, .arena = &arena};
      inst.op->Forward(ctx, inst.in, {GradReq::kWrite}, inst.out, inst.aux);
      const op::ReduceParam p = op::ReduceParam::Parse(kind, attrs);
      const Shape kept = p.KeptShape(c.in);
      const int64_t outputs = kept.Size(), count = c.in.Size() / outputs;
      std::vector<double> want(outputs, std::string(kind) == "max" ? -INFINITY : 0.0);
      const float* x = inst.in[0].data<float>();
      for (int64_t i = 0; i < c.in.Size(); ++i) {
        double& w = want[KeptIndex(c.in, kept, i)];
        w = std::string(kind) == "max" ? std::max(w, double{x[i]}) : w + x[i];
      }
      if (std::string(kind) == "mean") {
        for (double& w : want) w /= static_cast<double>(count);
      }
      ExpectClose(inst.out[0].ToVector<float>(), want, 1e-5, 1e-5, "output");
      // Rows `inner` apart, reduced a block at a time on the CPU, give the bits of one row at a
      // time (SerialLanes: the GPU's thread per row).
      if (const op::ReduceRowsShape s = p.RowsShape(c.in); s.rows) {
        NDArray serial = NDArray::Zeros(inst.out[0].shape());
        const op::ReduceRows rows{p.kind,  x,       serial.data<float>(), s.size,
                                  s.inner, s.lead, s.outer * s.size * s.inner};
        op::RunRows(rows, 0, s.outer * s.inner, s.size, s.inner);
        EXPECT_EQ(inst.out[0].ToVector<float>(), serial.ToVector<float>());
      }
      // Backward, written then added onto 0.5: the head gradient of each element's output
      // (over count for mean; for max where the element is its output's maximum).
      NDArray head = NDArray::Zeros(inst.out[0].shape());
      FillUniform(head, rng);
      const float* dy = head.data<float>();
      const float* y = inst.out[0].data<float>();
      for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
        NDArray grad = NDArray::Full(c.in, 0.5);
        inst.op->Backward(ctx, {head}, inst.in, inst.out, {req}, {grad}, inst.aux);
        std::vector<double> want_grad(c.in.Size());
        for (int64_t i = 0; i < c.in.Size(); ++i) {
          const int64_t j = KeptIndex(c.in, kept, i);
          double g = std::string(kind) == "sum"    ? dy[j]
                     : std::string(kind) == "mean" ? dy[j] / static_cast<float>(count)
                     : x[i] == y[j]                ? dy[j]
                                                   : 0.0;
          want_grad[i] = g + (req == GradReq::kAdd ? 0.5 : 0.0);
        }
        ExpectClose(grad.ToVector<float>(), want_grad, 1e-6, 1e-6,
                    req == GradReq::kAdd ? "gradient added" : "gradient written");
      }
    }
  }
}

// A NaN is the maximum of its row whichever way the rows are read (rows `inner` apart go a block
// at a time on the CPU).
TEST(ReduceRows, MaxKeepsNaNInRowsApart) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpInstance max = MakeOp("max", {{"axis", "0"}}, {{3, 70}});
  std::mt19937 rng(3);
  FillUniform(max.in[0], rng);
  max.in[0].data<float>()[1 * 70 + 5] = nan;
  max.in[0].data<float>()[0 * 70 + 69] = nan;
  max.Forward(false);
  const std::vector<float> y = max.out[0].ToVector<float>();
  for (int i = 0; i < 70; ++i) {
    EXPECT_EQ(std::isnan(y[i]), i == 5 || i == 69) << "column " << i << ": " << y[i];
  }
}

// nansum and nanprod skip NaNs (and send them no gradient); min and max keep them, as numpy's
// nansum / nanprod / min / max do.
TEST(ReduceThroughTheLayout, NaNsAsNumpy) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, nan, 3, -2, 0.5f, nan};  // rows (1, nan, 3), (-2, 0.5, nan)
  auto run = [&](const std::string& op) {
    OpInstance inst = MakeOp(op, {{"axis", "1"}}, {{2, 3}});
    NDArray::FromVector<float>({2, 3}, x).CopyTo(inst.in[0]);
    inst.Forward(true);
    return inst;
  };
  OpInstance nansum = run("nansum");
  EXPECT_EQ(nansum.out[0].ToVector<float>(), (std::vector<float>{4, -1.5f}));
  OpInstance nanprod = run("nanprod");
  EXPECT_EQ(nanprod.out[0].ToVector<float>(), (std::vector<float>{3, -1}));
  const std::vector<float> min = run("min").out[0].ToVector<float>();
  EXPECT_TRUE(std::isnan(min[0]) && std::isnan(min[1]));
  // Gradients: nothing to a NaN; nanprod's is the product of the others.
  const NDArray head = NDArray::Full({2}, 1.0);
  const NDArray grad = NDArray::Zeros({2, 3});
  nanprod.op->Backward({}, {head}, nanprod.in, nanprod.out, {GradReq::kWrite}, {grad}, {});
  const std::vector<float> g = grad.ToVector<float>();
  EXPECT_EQ(g, (std::vector<float>{3, 0, 1, 0.5f, -2, 0}));
  nansum.op->Backward({}, {head}, nansum.in, nansum.out, {GradReq::kWrite}, {grad}, {});
  EXPECT_EQ(grad.ToVector<float>(), (std::vector<float>{1, 0, 1, 1, 1, 0}));
}

TEST(ReduceThroughTheLayout, NormsAndProducts) {
  OpInstance l2 = MakeOp("norm", {}, {{2, 2}});
  NDArray::FromVector<float>({2, 2}, {3, 0, -4, 0}).CopyTo(l2.in[0]);
  l2.Forward(false);
  EXPECT_EQ(l2.out[0].shape(), Shape({1}));  // MXNet 1.x's (1,) for a full reduction
  EXPECT_FLOAT_EQ(l2.out[0].ToVector<float>()[0], 5);
  OpInstance l1 = MakeOp("norm", {{"ord", "1"}, {"axis", "0"}}, {{2, 2}});
  NDArray::FromVector<float>({2, 2}, {3, -1, -4, 2}).CopyTo(l1.in[0]);
  l1.Forward(false);
  EXPECT_EQ(l1.out[0].ToVector<float>(), (std::vector<float>{7, 3}));
  EXPECT_THROW(MakeOp("norm", {{"ord", "3"}}, {{2, 2}}), Error);
  OpInstance prod = MakeOp("prod", {}, {{4}});
  NDArray::FromVector<float>({4}, {2, -3, 0.5f, 4}).CopyTo(prod.in[0]);
  prod.Forward(false);
  EXPECT_FLOAT_EQ(prod.out[0].ToVector<float>()[0], -12);
}

}  // namespace
}  // namespace cohort::testing
