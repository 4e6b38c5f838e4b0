// Dtypes through the graph (Note [Operator dtypes]): type inference with __dtype__ hints and
// conflicts, Cast forward and backward, exact integer arithmetic, memory planned in bytes,
// simple_bind's type_dict, and the refusal of a node whose kernels lack a dtype. The GPU case
// (skipped without one) runs the same graphs on gpu:0 and compares.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "executor/executor.h"
#include "ndarray/device_api.h"
#include "symbol/ops.h"

namespace cohort {
namespace {

Symbol Var(const std::string& name, const std::string& flag = "") {
  return flag.empty() ? Symbol::Variable(name) : Symbol::Variable(name, {{"__dtype__", flag}});
}
Symbol CastTo(const Symbol& x, const std::string& dtype) {
  return Symbol::Create("Cast", {x}, {{"dtype", dtype}});
}

TEST(InferType, SpreadsAKnownTypeAndHints) {
  Symbol sum = Var("x") + Var("y");
  Symbol::Types t = sum.InferType({{"x", DType::kInt32}});
  ASSERT_TRUE(t.complete);
  EXPECT_EQ(t.arguments[1], DType::kInt32);
  EXPECT_EQ(t.outputs[0], DType::kInt32);
  // Nothing known: incomplete, every slot unknown.
  t = sum.InferType({});
  EXPECT_FALSE(t.complete);
  EXPECT_FALSE(t.outputs[0].has_value());
  // "__dtype__" is MXNet's type flag (4: int32); a given type wins over nothing else.
  t = (Var("x", "4") + Var("y")).InferType({});
  ASSERT_TRUE(t.complete);
  EXPECT_EQ(t.outputs[0], DType::kInt32);
  // Cast's output is its dtype whatever its input.
  t = CastTo(Var("x"), "float16").InferType({{"x", DType::kInt32}});
  EXPECT_EQ(t.arguments[0], DType::kInt32);
  EXPECT_EQ(t.outputs[0], DType::kFloat16);
  // Most ops give every slot one type, as MXNet: a float16 FullyConnected infers float16.
  Symbol fc = Symbol::Create("FullyConnected", {Var("d")}, {{"num_hidden", "2"}}, "fc");
  t = fc.InferType({{"d", DType::kFloat16}});
  EXPECT_EQ(t.arguments, (op::TypeSlots{DType::kFloat16, DType::kFloat16, DType::kFloat16}));
}

TEST(InferType, ConflictsAndBadHintsNameTheirNode) {
  Symbol sum = Symbol::Create("elemwise_add", std::vector<Symbol>{Var("x"), Var("y")}, {}, "adder");
  try {
    sum.InferType({{"x", DType::kInt32}, {"y", DType::kFloat32}});
    FAIL() << "int32 + float32 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("adder"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("int32"), std::string::npos) << e.message();
  }
  EXPECT_THROW(sum.InferType({{"z", DType::kInt32}}), Error);
  try {
    (Var("x", "float") + Var("y")).InferType({});
    FAIL() << "a malformed __dtype__ was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("'x'"), std::string::npos) << e.message();
  }
}

// Values float32 cannot hold (2^30 + 1), overflow that wraps, division by zero and min / -1:
// exact, as numpy's int32 (MXNet 1.9 dies of SIGFPE on the division by zero).
TEST(DTypeExecutor, Int32ArithmeticIsExact) {
  Symbol net = Symbol::Group(
      {Var("a") + Var("b"), Var("a") * Var("b"), Var("a") / Var("b"), Var("a") - Var("b")});
  const std::vector<int32_t> a = {(1 << 30) + 1, INT_MAX, 7, -7, INT_MIN, 5};
  const std::vector<int32_t> b = {2, 1, 2, 2, -1, 0};
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"a", {6}}, {"b", {6}}}, GradReq::kNull,
                                   {}, nullptr, {{"a", DType::kInt32}});
  EXPECT_EQ(exec->arg_dict().at("b").dtype(), DType::kInt32);
  NDArray::FromVector<int32_t>({6}, a).CopyTo(exec->arg_dict().at("a"));
  NDArray::FromVector<int32_t>({6}, b).CopyTo(exec->arg_dict().at("b"));
  exec->Forward(false);
  for (const NDArray& out : exec->outputs()) EXPECT_EQ(out.dtype(), DType::kInt32);
  EXPECT_EQ(exec->outputs()[0].ToVector<int32_t>(),
            (std::vector<int32_t>{(1 << 30) + 3, INT_MIN, 9, -5, INT_MAX, 5}));
  EXPECT_EQ(exec->outputs()[1].ToVector<int32_t>(),
            (std::vector<int32_t>{INT_MIN + 2, INT_MAX, 14, -14, INT_MIN, 0}));
  EXPECT_EQ(exec->outputs()[2].ToVector<int32_t>(),
            (std::vector<int32_t>{1 << 29, INT_MAX, 3, -3, INT_MIN, 0}));
  EXPECT_EQ(exec->outputs()[3].ToVector<int32_t>(),
            (std::vector<int32_t>{(1 << 30) - 1, INT_MAX - 1, 5, -9, INT_MIN + 1, 5}));
}

// MXNet converts the scalar to the array's type first: int32 + 2.5 adds 2, and 2 / 7 is 0.
TEST(DTypeExecutor, ScalarsTakeTheArraysType) {
  Symbol x = Var("x", "4");
  Symbol net = Symbol::Group({x + 2.5, 2.0 / x, x * 2.5, x - 0.5});
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"x", {3}}}, GradReq::kNull);
  NDArray::FromVector<int32_t>({3}, {7, -7, 3}).CopyTo(exec->arg_dict().at("x"));
  exec->Forward(false);
  EXPECT_EQ(exec->outputs()[0].ToVector<int32_t>(), (std::vector<int32_t>{9, -5, 5}));
  EXPECT_EQ(exec->outputs()[1].ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(exec->outputs()[2].ToVector<int32_t>(), (std::vector<int32_t>{14, -14, 6}));
  EXPECT_EQ(exec->outputs()[3].ToVector<int32_t>(), (std::vector<int32_t>{7, -7, 3}));
}

// float32 -> float64 arithmetic -> float32: values and gradients through both casts, and the
// float16 round trip rounds to half precision (1/3 -> 0.333251953125).
TEST(DTypeExecutor, CastForwardAndBackward) {
  Symbol x = Var("x");
  Symbol wide = CastTo(x, "float64");
  Symbol net = CastTo(wide * wide * 3.0, "float32");
  Symbol grouped = Symbol::Group({net, CastTo(CastTo(x, "float16"), "float32")});
  auto exec = Executor::SimpleBind(grouped, Context::CPU(), {{"x", {3}}});
  NDArray::FromVector<float>({3}, {1.0f / 3, -2.0f, 0.5f}).CopyTo(exec->arg_dict().at("x"));
  exec->Forward(true);
  const std::vector<float> y = exec->outputs()[0].ToVector<float>();
  EXPECT_FLOAT_EQ(y[0], 3 * (1.0f / 3) * (1.0f / 3));
  EXPECT_FLOAT_EQ(y[1], 12.0f);
  EXPECT_EQ(exec->outputs()[1].ToVector<float>()[0], 0.333251953125f);
  EXPECT_EQ(exec->outputs()[1].ToVector<float>()[1], -2.0f);
  exec->Backward({NDArray::Full({3}, 1.0), NDArray::Full({3}, 10.0)});
  const std::vector<float> g = exec->grad_dict().at("x").ToVector<float>();
  // d(3x²)/dx = 6x, plus the identity's 10 through the float16 round trip.
  EXPECT_NEAR(g[0], 6 * (1.0f / 3) + 10, 1e-5);
  EXPECT_NEAR(g[1], -12 + 10, 1e-5);
  EXPECT_NEAR(g[2], 3 + 10, 1e-5);
}

// amp_cast converts among float32, float16 and bfloat16 only; amp_multicast makes its floating
// inputs one type by MXNet 1.9.1's rule (Note [AMP casts]); other dtypes pass through.
TEST(InferType, AmpCastsFollowMXNet) {
  auto amp_cast = [](const std::string& dtype, DType in) {
    return Symbol::Create("amp_cast", {Var("x")}, {{"dtype", dtype}})
        .InferType({{"x", in}})
        .outputs[0];
  };
  EXPECT_EQ(amp_cast("float16", DType::kFloat32), DType::kFloat16);
  EXPECT_EQ(amp_cast("bfloat16", DType::kFloat16), DType::kBFloat16);
  EXPECT_EQ(amp_cast("float16", DType::kInt32), DType::kInt32);
  EXPECT_EQ(amp_cast("float16", DType::kFloat64), DType::kFloat64);
  auto multicast = [](DType a, DType b, bool narrow) {
    Symbol m = Symbol::Create("amp_multicast", std::vector<Symbol>{Var("a"), Var("b")},
                              {{"num_outputs", "2"}, {"cast_narrow", narrow ? "True" : "False"}});
    EXPECT_EQ(m.ListArguments(), (std::vector<std::string>{"a", "b"}));
    const auto t = m.InferType({{"a", a}, {"b", b}});
    return std::pair(*t.outputs[0], *t.outputs[1]);
  };
  using P = std::pair<DType, DType>;
  EXPECT_EQ(multicast(DType::kFloat16, DType::kFloat32, false),
            P(DType::kFloat32, DType::kFloat32));
  EXPECT_EQ(multicast(DType::kFloat16, DType::kFloat32, true), P(DType::kFloat16, DType::kFloat16));
  EXPECT_EQ(multicast(DType::kBFloat16, DType::kFloat32, true),
            P(DType::kBFloat16, DType::kBFloat16));
  // Without cast_narrow and without float32: the first input's type (MXNet 1.9.1's
  // AMPMultiCastType), values checked against its infer_type.
  EXPECT_EQ(multicast(DType::kFloat16, DType::kFloat16, false),
            P(DType::kFloat16, DType::kFloat16));
  EXPECT_EQ(multicast(DType::kBFloat16, DType::kFloat16, false),
            P(DType::kBFloat16, DType::kBFloat16));
  EXPECT_EQ(multicast(DType::kFloat16, DType::kInt32, true), P(DType::kFloat16, DType::kInt32));
}

// Values through amp_cast (float16's rounding of 1/3) and amp_multicast, gradients cast back to
// each input's dtype.
TEST(DTypeExecutor, AmpCastsForwardAndBackward) {
  Symbol x = Var("x"), h = Var("h", "2");  // h: float16
  Symbol half = Symbol::Create("amp_cast", {x}, {{"dtype", "float16"}});
  Symbol both =
      Symbol::Create("amp_multicast", std::vector<Symbol>{half, h}, {{"num_outputs", "2"}});
  Symbol net = both[0] * both[1];  // float16: no input is float32 (the multicast's rule)
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"x", {3}}, {"h", {3}}});
  NDArray::FromVector<float>({3}, {1.0f / 3, -2.0f, 0.5f}).CopyTo(exec->arg_dict().at("x"));
  NDArray::FromVector<float>({3}, {2.0f, 4.0f, -1.0f})
      .AsType(DType::kFloat16)
      .CopyTo(exec->arg_dict().at("h"));
  exec->Forward(true);
  ASSERT_EQ(exec->outputs()[0].dtype(), DType::kFloat16);
  const std::vector<float> y = exec->outputs()[0].AsType(DType::kFloat32).ToVector<float>();
  EXPECT_EQ(y[0], 2 * 0.333251953125f);
  EXPECT_EQ(y[1], -8.0f);
  EXPECT_EQ(y[2], -0.5f);
  exec->Backward({NDArray::Full({3}, 1.0).AsType(DType::kFloat16)});
  ASSERT_EQ(exec->grad_dict().at("x").dtype(), DType::kFloat32);
  ASSERT_EQ(exec->grad_dict().at("h").dtype(), DType::kFloat16);
  EXPECT_EQ(exec->grad_dict().at("x").ToVector<float>(), (std::vector<float>{2, 4, -1}));
  EXPECT_EQ(exec->grad_dict().at("h").AsType(DType::kFloat32).ToVector<float>(),
            (std::vector<float>{0.333251953125f, -2, 0.5f}));
}

// The plan counts bytes: the same chain in float64 plans twice the float32 bytes, in uint8 a
// quarter.
TEST(DTypeExecutor, MemoryIsPlannedInBytes) {
  Symbol x = Var("x");
  Symbol net = (x * 2.0 + 1.0) * 3.0;
  auto planned = [&](DType t) {
    return Executor::SimpleBind(net, Context::CPU(), {{"x", {1000}}}, GradReq::kNull, {}, nullptr,
                                {{"x", t}})
        ->planned_bytes();
  };
  const size_t f32 = planned(DType::kFloat32);
  EXPECT_GE(f32, 4000u);
  EXPECT_EQ(planned(DType::kFloat64), 2 * f32);
  EXPECT_EQ(planned(DType::kUint8), f32 / 4);
}

TEST(DTypeExecutor, BindRefusesADtypeTheKernelsLack) {
  Symbol fc = Symbol::Create("FullyConnected", {Var("data")}, {{"num_hidden", "2"}}, "fc1");
  try {
    Executor::SimpleBind(fc, Context::CPU(), {{"data", {2, 3}}}, GradReq::kWrite, {}, nullptr,
                         {{"data", DType::kInt32}});
    FAIL() << "an int32 FullyConnected was bound";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("fc1"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("int32"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("float32"), std::string::npos) << e.message();
  }
  // Arrays bound by the caller: their dtypes are the graph's.
  Symbol sum = Var("a") + Var("b");
  const NDArray i32 = NDArray::Zeros({2}, DType::kInt32);
  const NDArray f32 = NDArray::Zeros({2});
  EXPECT_THROW(Executor::Bind(sum, Context::CPU(), {i32, f32}, {NDArray(), NDArray()},
                              {GradReq::kNull, GradReq::kNull}, {}),
               Error);
  // A gradient of another dtype than its argument.
  EXPECT_THROW(Executor::Bind(sum, Context::CPU(), {f32, f32}, {i32, f32},
                              {GradReq::kWrite, GradReq::kWrite}, {}),
               Error);
}

// float16 and uint8 arithmetic as numpy's: half rounding, uint8 wrapping.
TEST(DTypeExecutor, HalfAndByteArithmetic) {
  Symbol net = Var("a") * Var("b") + 1.0;
  auto run = [&](DType t, const std::vector<double>& a, const std::vector<double>& b) {
    auto exec = Executor::SimpleBind(net, Context::CPU(), {{"a", {2}}, {"b", {2}}}, GradReq::kNull,
                                     {}, nullptr, {{"a", t}});
    NDArray::FromVector<double>({2}, a).CopyTo(exec->arg_dict().at("a"));
    NDArray::FromVector<double>({2}, b).CopyTo(exec->arg_dict().at("b"));
    exec->Forward(false);
    EXPECT_EQ(exec->outputs()[0].dtype(), t);
    return exec->outputs()[0].ToVector<double>();
  };
  EXPECT_EQ(run(DType::kFloat16, {1.5, 2.25}, {1.5, 2.25}), (std::vector<double>{3.25, 6.0625}));
  EXPECT_EQ(run(DType::kUint8, {250, 3}, {2, 3}), (std::vector<double>{245, 10}));
}

// Elementwise gradients in the half types, computed in float and rounded once per element, for
// kWrite and kAdd, on the CPU and (where visible) gpu:0: d/da and d/db of a*b/(a+5) - 3/b.
TEST(DTypeExecutor, HalfGradients) {
  Symbol a = Var("a"), b = Var("b");
  Symbol net = a * b / (a + 5.0) - 3.0 / b;
  const std::vector<double> av = {1.0, 1.5, 2.0, -0.75}, bv = {1.25, 2.0, -1.5, 0.5};
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    const double tol = t == DType::kFloat16 ? 4e-3 : 3e-2;  // a few ulps of the type
    const int sides = device::Count() > 0 ? 2 : 1;
    for (int side = 0; side < sides; ++side) {
      for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
        const Context ctx = side == 0 ? Context::CPU() : Context::GPU(0);
        auto exec = Executor::SimpleBind(net, ctx, {{"a", {4}}, {"b", {4}}}, req, {}, nullptr,
                                         {{"a", t}, {"b", t}});
        NDArray::FromVector<double>({4}, av).CopyTo(exec->arg_dict().at("a"));
        NDArray::FromVector<double>({4}, bv).CopyTo(exec->arg_dict().at("b"));
        for (const char* name : {"a", "b"}) exec->grad_dict().at(name).Fill(1.0);
        exec->Forward(true);
        exec->Backward({NDArray::Full({4}, 1.0, t)});
        EXPECT_EQ(exec->grad_dict().at("a").dtype(), t);
        const std::vector<double> ga = exec->grad_dict().at("a").ToVector<double>();
        const std::vector<double> gb = exec->grad_dict().at("b").ToVector<double>();
        const double before = req == GradReq::kAdd ? 1.0 : 0.0;
        for (size_t i = 0; i < av.size(); ++i) {
          const double x = av[i], y = bv[i];
          const double want_a = y / (x + 5) - x * y / ((x + 5) * (x + 5)) + before;
          const double want_b = x / (x + 5) + 3 / (y * y) + before;
          EXPECT_NEAR(ga[i], want_a, tol * std::abs(want_a) + tol) << DTypeName(t) << " " << i;
          EXPECT_NEAR(gb[i], want_b, tol * std::abs(want_b) + tol) << DTypeName(t) << " " << i;
        }
      }
    }
  }
}

// Unary gradients outside float32 (Note [Typed unary math]): float64 in double (square's 2x
// exact beyond float32's precision), float16 through float; copies pass the head gradient.
TEST(DTypeExecutor, TypedUnaryGradients) {
  Symbol x = Var("x");
  auto unary = [&](const char* op, const op::Attrs& attrs = {}) {
    return Symbol::Create(op, std::vector<Symbol>{x}, attrs);
  };
  Symbol net = Symbol::Group({unary("square"), unary("abs"), unary("_copy"),
                              unary("clip", {{"a_min", "-1"}, {"a_max", "1"}})});
  const std::vector<double> xv = {1.0 + 1e-12, -3.0, 0.5, -0.25};
  for (DType t : {DType::kFloat64, DType::kFloat16}) {
    auto exec = Executor::SimpleBind(net, Context::CPU(), {{"x", {4}}}, GradReq::kWrite, {},
                                     nullptr, {{"x", t}});
    NDArray::FromVector<double>({4}, xv).CopyTo(exec->arg_dict().at("x"));
    exec->Forward(true);
    std::vector<NDArray> heads;
    for (int k = 0; k < 4; ++k) heads.push_back(NDArray::Full({4}, k + 1.0, t));
    exec->Backward(heads);
    const std::vector<double> g = exec->grad_dict().at("x").ToVector<double>();
    const std::vector<double> xs = exec->arg_dict().at("x").ToVector<double>();
    for (size_t i = 0; i < xv.size(); ++i) {
      // 1·2x + 2·sign(x) + 3 + 4·[|x| <= 1]
      const double want = 2 * xs[i] + 2 * (xs[i] > 0 ? 1 : -1) + 3 + (std::abs(xs[i]) <= 1 ? 4 : 0);
      if (t == DType::kFloat64) {
        EXPECT_EQ(g[i], want) << i;
      } else {
        EXPECT_NEAR(g[i], want, 4e-3 * std::abs(want)) << i;
      }
    }
  }
}

// Dropout keeps its mask in the data's type, as MXNet's: in float16 and float64 each element
// is 0 or x / (1 - p), the gradient the same mask times the head gradient, and gpu:0 (where
// visible) draws the CPU's mask.
TEST(DTypeExecutor, TypedDropout) {
  Symbol net =
      Symbol::Create("Dropout", std::vector<Symbol>{Var("x")}, {{"p", "0.5"}, {"mode", "always"}});
  for (DType t : {DType::kFloat16, DType::kFloat64}) {
    std::vector<double> outputs[2], grads[2];
    const int sides = device::Count() > 0 ? 2 : 1;
    for (int side = 0; side < sides; ++side) {
      auto exec = Executor::SimpleBind(net, side == 0 ? Context::CPU() : Context::GPU(0),
                                       {{"x", {1000}}}, GradReq::kWrite, {}, nullptr, {{"x", t}});
      exec->set_random_seed(7);
      exec->arg_dict().at("x").Fill(1.5);
      exec->Forward(true);
      exec->Backward({NDArray::Full({1000}, 1.0, t)});
      outputs[side] = exec->outputs()[0].ToVector<double>();
      grads[side] = exec->grad_dict().at("x").ToVector<double>();
    }
    int kept = 0;
    for (size_t i = 0; i < outputs[0].size(); ++i) {
      ASSERT_TRUE(outputs[0][i] == 0 || outputs[0][i] == 3.0) << outputs[0][i];
      EXPECT_EQ(grads[0][i], outputs[0][i] / 1.5);
      kept += outputs[0][i] != 0;
    }
    EXPECT_GT(kept, 400);
    EXPECT_LT(kept, 600);
    if (sides == 2) {
      EXPECT_EQ(outputs[0], outputs[1]);
      EXPECT_EQ(grads[0], grads[1]);
    }
  }
}

// Broadcasting in int64: exact beyond 2^53, comparisons 1/0 in the array's type, an exact
// integer power (3^39 needs 62 bits) and a negative exponent 0 as numpy's integer power.
TEST(DTypeExecutor, Int64BroadcastIsExact) {
  Symbol a = Var("a"), b = Var("b");
  auto op = [](const char* name, const Symbol& x, const Symbol& y) {
    return Symbol::Create(name, std::vector<Symbol>{x, y});
  };
  Symbol net = Symbol::Group(
      {op("broadcast_add", a, b), op("broadcast_greater", a, b), op("broadcast_power", b, a)});
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"a", {2, 1}}, {"b", {1, 2}}},
                                   GradReq::kNull, {}, nullptr, {{"a", DType::kInt64}});
  const int64_t big = (int64_t{1} << 53) + 1;  // not a double
  NDArray::FromVector<int64_t>({2, 1}, {big, -1}).CopyTo(exec->arg_dict().at("a"));
  NDArray::FromVector<int64_t>({1, 2}, {2, 3}).CopyTo(exec->arg_dict().at("b"));
  exec->Forward(false);
  EXPECT_EQ(exec->outputs()[0].ToVector<int64_t>(), (std::vector<int64_t>{big + 2, big + 3, 1, 2}));
  EXPECT_EQ(exec->outputs()[1].ToVector<int64_t>(), (std::vector<int64_t>{1, 1, 0, 0}));
  // b ** a: 2^big and 3^big wrap (odd exponent), 2^-1 and 3^-1 are 0.
  NDArray::FromVector<int64_t>({2, 1}, {39, -1}).CopyTo(exec->arg_dict().at("a"));
  exec->Forward(false);
  int64_t three39 = 1;
  for (int i = 0; i < 39; ++i) three39 *= 3;
  EXPECT_EQ(exec->outputs()[2].ToVector<int64_t>(),
            (std::vector<int64_t>{int64_t{1} << 39, three39, 0, 0}));
}

// Indices of any index dtype look up the same rows: Embedding and take with int32 and int64
// indices equal float32 ones, and the table's gradient too.
TEST(DTypeExecutor, IntegerIndicesLookUpRows) {
  Symbol emb = Symbol::Create("Embedding", std::vector<Symbol>{Var("data")},
                              {{"input_dim", "4"}, {"output_dim", "3"}}, "emb");
  Symbol net =
      Symbol::Group({emb, Symbol::Create("take", std::vector<Symbol>{Var("table"), Var("data")})});
  std::vector<std::vector<float>> outputs, grads;
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kInt64}) {
    auto exec =
        Executor::SimpleBind(net, Context::CPU(), {{"data", {2, 3}}, {"table", {5, 2}}},
                             GradReq::kWrite, {{"data", GradReq::kNull}}, nullptr, {{"data", t}});
    EXPECT_EQ(exec->arg_dict().at("data").dtype(), t);
    EXPECT_EQ(exec->outputs()[0].dtype(), DType::kFloat32);
    NDArray::FromVector<double>({2, 3}, {3, 0, 2, 1, 1, 0}).CopyTo(exec->arg_dict().at("data"));
    std::vector<float> w(12), table(10);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * static_cast<float>(i);
    for (size_t i = 0; i < table.size(); ++i) table[i] = -1.0f * static_cast<float>(i);
    NDArray::FromVector<float>({4, 3}, w).CopyTo(exec->arg_dict().at("emb_weight"));
    NDArray::FromVector<float>({5, 2}, table).CopyTo(exec->arg_dict().at("table"));
    exec->Forward(true);
    exec->Backward({NDArray::Full({2, 3, 3}, 1.0), NDArray::Full({2, 3, 2}, 1.0)});
    outputs.push_back(exec->outputs()[0].ToVector<float>());
    std::vector<float> out1 = exec->outputs()[1].ToVector<float>();
    outputs.back().insert(outputs.back().end(), out1.begin(), out1.end());
    grads.push_back(exec->grad_dict().at("emb_weight").ToVector<float>());
  }
  EXPECT_EQ(outputs[0][0], 4.5f);  // row 3 of the embedding, column 0
  EXPECT_EQ(outputs[1], outputs[0]);
  EXPECT_EQ(outputs[2], outputs[0]);
  // Rows 0 and 1 are read twice, rows 2 and 3 once.
  EXPECT_EQ(grads[0], (std::vector<float>{2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(grads[1], grads[0]);
  EXPECT_EQ(grads[2], grads[0]);
}

// The same graphs on gpu:0 and the CPU: integers exact, casts equal (the CPU side runs alone
// where no GPU is visible).
// amp_cast's vectorised conversions give the bits AsType (base/half.h) gives: ties to even,
// infinities, NaN kept a NaN, denormals, over many elements (several chunks).
TEST(DTypeExecutor, AmpCastRoundsAsAsType) {
  std::vector<float> v = {1.0f + 1.0f / 256,
                          1.0f + 3.0f / 256,
                          65504.0f,
                          70000.0f,
                          1e-40f,
                          -0.0f,
                          std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          3.14159265f,
                          -1e38f};
  for (int i = 0; v.size() < 50000; ++i) v.push_back(static_cast<float>(i) * 0.0137f - 300.0f);
  const int64_t n = static_cast<int64_t>(v.size());
  for (const char* type : {"bfloat16", "float16"}) {
    SCOPED_TRACE(type);
    Symbol down = Symbol::Create("amp_cast", {Var("x")}, {{"dtype", type}});
    Symbol up = Symbol::Create("amp_cast", {down}, {{"dtype", "float32"}});
    auto exec = Executor::SimpleBind(Symbol::Group({down, up}), Context::CPU(), {{"x", {n}}},
                                     GradReq::kNull);
    NDArray::FromVector<float>({n}, v).CopyTo(exec->arg_dict().at("x"));
    exec->Forward(false);
    const NDArray want = NDArray::FromVector<float>({n}, v).AsType(ParseDType(type));
    ASSERT_EQ(std::memcmp(exec->outputs()[0].raw_data(), want.raw_data(), n * 2), 0);
    const std::vector<float> back = exec->outputs()[1].ToVector<float>();
    const std::vector<float> want_back = want.AsType(DType::kFloat32).ToVector<float>();
    ASSERT_EQ(std::memcmp(back.data(), want_back.data(), n * sizeof(float)), 0);
  }
}

// transpose moves elements of any type: int32 values beyond float32's exact range and bfloat16
// values keep their bits; gradients come back transposed, added in float for kAdd.
TEST(DTypeExecutor, TransposeMovesAnyType) {
  Symbol t = Symbol::Create("transpose", {Var("x")}, {{"axes", "(1, 0)"}});
  auto exec = Executor::SimpleBind(t, Context::CPU(), {{"x", {2, 3}}}, GradReq::kNull, {}, nullptr,
                                   {{"x", DType::kInt32}});
  NDArray::FromVector<int32_t>({2, 3}, {(1 << 30) + 1, 2, 3, 4, 5, -7})
      .CopyTo(exec->arg_dict().at("x"));
  exec->Forward(false);
  EXPECT_EQ(exec->outputs()[0].ToVector<int32_t>(),
            (std::vector<int32_t>{(1 << 30) + 1, 4, 2, 5, 3, -7}));
  auto half = Executor::SimpleBind(t, Context::CPU(), {{"x", {2, 3}}}, GradReq::kAdd, {}, nullptr,
                                   {{"x", DType::kBFloat16}});
  NDArray::FromVector<float>({2, 3}, {1.5f, -2, 3, 0.25f, 5, 6})
      .AsType(DType::kBFloat16)
      .CopyTo(half->arg_dict().at("x"));
  half->grad_dict().at("x").Fill(1.0);
  half->Forward(true);
  EXPECT_EQ(half->outputs()[0].AsType(DType::kFloat32).ToVector<float>(),
            (std::vector<float>{1.5f, 0.25f, -2, 5, 3, 6}));
  half->Backward({NDArray::FromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6}).AsType(DType::kBFloat16)});
  EXPECT_EQ(half->grad_dict().at("x").AsType(DType::kFloat32).ToVector<float>(),
            (std::vector<float>{2, 4, 6, 3, 5, 7}));
  // The last axis kept (rows moved whole), forward and a written gradient.
  Symbol rows = Symbol::Create("transpose", {Var("x")}, {{"axes", "(1, 0, 2)"}});
  auto moved = Executor::SimpleBind(rows, Context::CPU(), {{"x", {2, 3, 4}}}, GradReq::kWrite, {},
                                    nullptr, {{"x", DType::kBFloat16}});
  std::vector<float> x(24), y(24), dy(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i), dy[i] = static_cast<float>(100 + i);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 4; ++c) y[(a * 2 + b) * 4 + c] = x[(b * 3 + a) * 4 + c];
    }
  }
  NDArray::FromVector<float>({2, 3, 4}, x)
      .AsType(DType::kBFloat16)
      .CopyTo(moved->arg_dict().at("x"));
  moved->Forward(true);
  EXPECT_EQ(moved->outputs()[0].AsType(DType::kFloat32).ToVector<float>(), y);
  // dy laid out as y, so dx is dy moved back: dx[b][a][c] = dy[a][b][c].
  moved->Backward({NDArray::FromVector<float>({3, 2, 4}, dy).AsType(DType::kBFloat16)});
  std::vector<float> dx(24);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 4; ++c) dx[(b * 3 + a) * 4 + c] = dy[(a * 2 + b) * 4 + c];
    }
  }
  EXPECT_EQ(moved->grad_dict().at("x").AsType(DType::kFloat32).ToVector<float>(), dx);
}

// slice_axis's gradient in bfloat16 with grad_req add: added in float, rounded once.
TEST(DTypeExecutor, SliceGradientsAddInTheirType) {
  Symbol s =
      Symbol::Create("slice_axis", {Var("x")}, {{"axis", "0"}, {"begin", "1"}, {"end", "None"}});
  auto half = Executor::SimpleBind(s, Context::CPU(), {{"x", {3}}}, GradReq::kAdd, {}, nullptr,
                                   {{"x", DType::kBFloat16}});
  NDArray::FromVector<float>({3}, {1, 2, 3})
      .AsType(DType::kBFloat16)
      .CopyTo(half->arg_dict().at("x"));
  NDArray::FromVector<float>({3}, {256, 256, 256})
      .AsType(DType::kBFloat16)
      .CopyTo(half->grad_dict().at("x"));
  half->Forward(true);
  EXPECT_EQ(half->outputs()[0].AsType(DType::kFloat32).ToVector<float>(),
            (std::vector<float>{2, 3}));
  // 256 + 1 is not a bfloat16 (8 bits): rounds to even, 256; 256 + 3 rounds to 260.
  half->Backward({NDArray::FromVector<float>({2}, {1, 3}).AsType(DType::kBFloat16)});
  EXPECT_EQ(half->grad_dict().at("x").AsType(DType::kFloat32).ToVector<float>(),
            (std::vector<float>{256, 256, 260}));
}

// A float16 or bfloat16 FullyConnected or batch_dot (Note [Low-precision GEMM]) against the
// float32 op fed the same values (the inputs rounded to the type first): products summed in
// float32, so outputs and gradients differ from float32's by at most the rounding of the result
// (one unit in the last place, plus float32's own summation-order noise), on the CPU and on a GPU.
// `output_ulps` widens the output's bound where the result is rounded twice (a GPU's bfloat16
// Convolution adds its bias to the rounded products: Note [bfloat16 convolution]).
void ExpectLowPrecisionMatchesFloat32(const Symbol& net, const std::map<std::string, Shape>& shapes,
                                      DType dtype, Context ctx, double output_ulps = 1) {
  SCOPED_TRACE(net.ListOutputs()[0] + " in " + std::string(DTypeName(dtype)) + " on " +
               ctx.ToString());
  std::map<std::string, DType> types;
  for (const auto& [name, shape] : shapes) types[name] = dtype;
  auto low = Executor::SimpleBind(net, ctx, shapes, GradReq::kWrite, {}, nullptr, types);
  auto ref = Executor::SimpleBind(net, Context::CPU(), shapes);
  uint64_t seed = 7;
  auto next = [&] {  // uniform in [-1, 1), rounded to the low-precision type
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<double>(seed >> 11) / (1ull << 53) * 2 - 1);
  };
  for (const std::string& name : net.ListArguments()) {
    const NDArray& slot = ref->arg_dict().at(name);
    ASSERT_EQ(low->arg_dict().at(name).dtype(), dtype) << name;
    std::vector<float> v(slot.size());
    for (float& e : v) e = next();
    const NDArray rounded = NDArray::FromVector<float>(slot.shape(), v).AsType(dtype);
    rounded.CopyTo(low->arg_dict().at(name));
    rounded.AsType(DType::kFloat32).CopyTo(slot);
  }
  const Shape out_shape = ref->outputs()[0].shape();
  std::vector<float> dy(out_shape.Size());
  for (float& e : dy) e = next();
  const NDArray head = NDArray::FromVector<float>(out_shape, dy).AsType(dtype);
  for (Executor* e : {low.get(), ref.get()}) e->Forward(true);
  low->Backward({head.CopyTo(ctx)});
  ref->Backward({head.AsType(DType::kFloat32)});
  // One unit in the last place of the type, relative, with a floor for values near zero.
  const double ulp = dtype == DType::kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
  auto expect_close = [&](const NDArray& got, const NDArray& want, const std::string& what,
                          double ulps) {
    ASSERT_EQ(got.dtype(), dtype) << what;
    const std::vector<double> g = got.AsType(DType::kFloat32).ToVector<double>();
    const std::vector<double> w = want.ToVector<double>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], ulps * ulp * std::max(1.0, std::abs(w[i])))
          << what << " element " << i;
    }
  };
  expect_close(low->outputs()[0], ref->outputs()[0], "output", output_ulps);
  for (const std::string& name : net.ListArguments()) {
    expect_close(low->grad_dict().at(name), ref->grad_dict().at(name), "gradient of " + name, 1);
  }
}

TEST(DTypeExecutor, LowPrecisionOpsMatchFloat32) {
  const Symbol fc = Symbol::Create("FullyConnected", {Var("x")}, {{"num_hidden", "24"}}, "fc");
  const Symbol bd = Symbol::Create("batch_dot", std::vector<Symbol>{Var("a"), Var("b")},
                                   {{"transpose_b", "True"}}, "scores");
  const Symbol dot = Symbol::Create("dot", std::vector<Symbol>{Var("p"), Var("q")},
                                    {{"transpose_a", "True"}}, "dot");
  // Activation and LeakyReLU compute in float32 registers: the same one-rounding bound.
  const std::vector<Symbol> activations = {
      Symbol::Create("LeakyReLU", {Var("x")}, {{"act_type", "gelu"}}, "gelu"),
      Symbol::Create("Activation", {Var("x")}, {{"act_type", "tanh"}}, "tanh"),
      Symbol::Create("Activation", {Var("x")}, {{"act_type", "relu"}}, "relu")};
  // slice_axis and SliceChannel move elements of any type (an output of a split alone: the
  // other's gradient is zero).
  const Symbol slice = Symbol::Create("slice_axis", {Var("x")},
                                      {{"axis", "1"}, {"begin", "2"}, {"end", "7"}}, "slice");
  const Symbol split =
      Symbol::Create("SliceChannel", {Var("x")}, {{"num_outputs", "3"}, {"axis", "2"}}, "split")[1];
  // bfloat16 Convolution (Note [bfloat16 convolution]): oneDNN on the CPU, cuDNN on a GPU;
  // float16 (Note [float16 convolution]): the float32 layer on the widened inputs on the CPU.
  const Symbol conv =
      Symbol::Create("Convolution", {Var("x")},
                     {{"kernel", "(3, 3)"}, {"num_filter", "16"}, {"pad", "(1, 1)"}}, "conv");
  std::vector<Context> contexts = {Context::CPU()};
  if (device::Count() > 0) contexts.push_back(Context::GPU(0));
  for (const Context& ctx : contexts) {
    const double conv_ulps = ctx.is_gpu() ? 2 : 1;
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      ExpectLowPrecisionMatchesFloat32(conv, {{"x", {3, 16, 8, 8}}}, dtype, ctx, conv_ulps);
      ExpectLowPrecisionMatchesFloat32(conv, {{"x", {2, 3, 9, 7}}}, dtype, ctx, conv_ulps);
      ExpectLowPrecisionMatchesFloat32(slice, {{"x", {4, 9, 5}}}, dtype, ctx);
      ExpectLowPrecisionMatchesFloat32(split, {{"x", {4, 5, 12}}}, dtype, ctx);
      ExpectLowPrecisionMatchesFloat32(fc, {{"x", {37, 50}}}, dtype, ctx);
      // Rows in several blocks and a partial one (Note [Low-precision row blocks]).
      ExpectLowPrecisionMatchesFloat32(fc, {{"x", {700, 300}}}, dtype, ctx);
      ExpectLowPrecisionMatchesFloat32(bd, {{"a", {6, 17, 8}}, {"b", {6, 19, 8}}}, dtype, ctx);
      ExpectLowPrecisionMatchesFloat32(dot, {{"p", {30, 7}}, {"q", {30, 9}}}, dtype, ctx);
      for (const Symbol& act : activations) {
        ExpectLowPrecisionMatchesFloat32(act, {{"x", {5, 3000}}}, dtype, ctx);  // several tiles
      }
    }
  }
  if (contexts.size() == 1) GTEST_SKIP() << "no GPU visible (CPU cases passed)";
}

// Note [BatchNorm in low precision]: bfloat16 or float16 data, output and gradients with float32
// gamma, beta and statistics, computed in float32 from the widened data: on the CPU exactly the
// float32 op's results fed the same (rounded) values, each rounded once to the type; on a GPU
// within one unit in the last place of them. In training and inference, written and added.
TEST(DTypeExecutor, BatchNormTakesLowPrecisionDataWithFloat32Statistics) {
  const Symbol bn = Symbol::Create("BatchNorm", {Var("x")},
                                   {{"fix_gamma", "False"}, {"output_mean_var", "True"}}, "bn");
  uint64_t seed = 11;
  auto next = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<double>(seed >> 11) / (1ull << 53) * 4 - 1);
  };
  auto values = [&](const Shape& s) {
    std::vector<float> v(s.Size());
    for (float& e : v) e = next();
    return NDArray::FromVector<float>(s, v);
  };
  std::vector<Context> contexts = {Context::CPU()};
  if (device::Count() > 0) contexts.push_back(Context::GPU(0));
  // The second shape's channel (2M values) is widened row by row, the first's at once.
  for (const Shape& shape : {Shape{4, 6, 5, 7}, Shape{2, 1, 1030, 1024}})
    for (const Context& ctx : contexts) {
      const int64_t channels = shape[1];
      for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
        for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
          SCOPED_TRACE(std::string(DTypeName(dtype)) + " on " + ctx.ToString() + ", grad_req " +
                       GradReqName(req) + ", " + std::to_string(shape.Size()) + " values");
          auto low =
              Executor::SimpleBind(bn, ctx, {{"x", shape}}, req, {}, nullptr, {{"x", dtype}});
          auto ref = Executor::SimpleBind(bn, Context::CPU(), {{"x", shape}}, req);
          EXPECT_EQ(low->arg_dict().at("bn_gamma").dtype(), DType::kFloat32);
          EXPECT_EQ(low->aux_dict().at("bn_moving_var").dtype(), DType::kFloat32);
          const NDArray x = values(shape).AsType(dtype);
          x.CopyTo(low->arg_dict().at("x"));
          x.AsType(DType::kFloat32).CopyTo(ref->arg_dict().at("x"));
          for (const std::string name : {"bn_gamma", "bn_beta"}) {
            const NDArray v = values({channels});
            v.CopyTo(low->arg_dict().at(name));
            v.CopyTo(ref->arg_dict().at(name));
          }
          const NDArray dx0 = values(shape).AsType(dtype), dg0 = values({channels});
          dx0.CopyTo(low->grad_dict().at("x"));
          dx0.AsType(DType::kFloat32).CopyTo(ref->grad_dict().at("x"));
          for (const std::string name : {"bn_gamma", "bn_beta"}) {
            dg0.CopyTo(low->grad_dict().at(name));
            dg0.CopyTo(ref->grad_dict().at(name));
          }
          const NDArray dy = values(shape).AsType(dtype);
          // Low-precision results: the float32 op's rounded (exactly on the CPU).
          const bool exact = !ctx.is_gpu();
          auto expect_rounded = [&](const NDArray& got, const NDArray& want, DType type,
                                    const std::string& what) {
            ASSERT_EQ(got.dtype(), type) << what;
            const std::vector<double> g = got.AsType(DType::kFloat32).ToVector<double>();
            const std::vector<double> w =
                want.AsType(type).AsType(DType::kFloat32).ToVector<double>();
            const double ulp = type == DType::kFloat32    ? 1e-5
                               : type == DType::kBFloat16 ? 1.0 / 128
                                                          : 1.0 / 1024;
            for (size_t i = 0; i < g.size(); ++i) {
              if (exact) {
                ASSERT_EQ(g[i], w[i]) << what << " element " << i;
              } else {
                ASSERT_NEAR(g[i], w[i], ulp * std::max(1.0, std::abs(w[i]))) << what << " " << i;
              }
            }
          };
          for (bool train : {true, false}) {
            for (Executor* e : {low.get(), ref.get()}) e->Forward(train);
            expect_rounded(low->outputs()[0], ref->outputs()[0], dtype, "output");
            expect_rounded(low->outputs()[1], ref->outputs()[1], DType::kFloat32, "mean");
            expect_rounded(low->outputs()[2], ref->outputs()[2], DType::kFloat32, "inverse std");
            expect_rounded(low->aux_dict().at("bn_moving_mean"),
                           ref->aux_dict().at("bn_moving_mean"), DType::kFloat32, "moving mean");
          }
          for (Executor* e : {low.get(), ref.get()}) e->Forward(true);
          const NDArray none = NDArray::FromVector<float>(
              {channels}, std::vector<float>(static_cast<size_t>(channels), 0.0f));
          low->Backward({dy.CopyTo(ctx), none.CopyTo(ctx), none.CopyTo(ctx)});
          ref->Backward({dy.AsType(DType::kFloat32), none, none});
          expect_rounded(low->grad_dict().at("x"), ref->grad_dict().at("x"), dtype,
                         "gradient of x");
          if (exact) {
            for (const std::string name : {"bn_gamma", "bn_beta"}) {
              expect_rounded(low->grad_dict().at(name), ref->grad_dict().at(name), DType::kFloat32,
                             "gradient of " + name);
            }
          }
          {
            // And against Σ dy and Σ dy (x - mean) · inv_std in double from the executor's own
            // saved statistics. On a GPU only this: its mean may differ from the CPU's by an
            // ulp, which moves the gamma gradient by Σ dy times that (0.2 at 2M values whose dy
            // average 1, on an H100).
            const std::vector<double> xs = x.AsType(DType::kFloat32).ToVector<double>();
            const std::vector<double> ds = dy.AsType(DType::kFloat32).ToVector<double>();
            const std::vector<double> mean = low->outputs()[1].ToVector<double>();
            const std::vector<double> inv_std = low->outputs()[2].ToVector<double>();
            const std::vector<double> before = dg0.ToVector<double>();
            const std::vector<double> dgamma = low->grad_dict().at("bn_gamma").ToVector<double>();
            const std::vector<double> dbeta = low->grad_dict().at("bn_beta").ToVector<double>();
            const int64_t inner = shape.Size() / shape[0] / channels;
            for (int64_t c = 0; c < channels; ++c) {
              double sum_dy = 0, abs_dy = 0, sum_dy_xmu = 0, abs_dy_xmu = 0;
              for (int64_t k = 0; k < shape.Size(); ++k) {
                if ((k / inner) % channels != c) continue;
                sum_dy += ds[k];
                abs_dy += std::abs(ds[k]);
                sum_dy_xmu += ds[k] * (xs[k] - mean[c]);
                abs_dy_xmu += std::abs(ds[k] * (xs[k] - mean[c]));
              }
              const double added = req == GradReq::kAdd ? before[c] : 0.0;
              // A float32 sum of n terms in any order: well within 2^-20 of Σ|terms| (16 ulps).
              const double bound = 1.0 / (1 << 20);
              EXPECT_NEAR(dbeta[c], sum_dy + added, bound * abs_dy + 1e-6) << "dbeta " << c;
              EXPECT_NEAR(dgamma[c], sum_dy_xmu * inv_std[c] + added,
                          bound * abs_dy_xmu * inv_std[c] + 1e-6)
                  << "dgamma " << c;
            }
          }
        }
      }
    }
  if (contexts.size() == 1) GTEST_SKIP() << "no GPU visible (CPU cases passed)";
}

TEST(DTypeExecutor, GpuMatchesCpu) {
  Symbol a = Var("a"), b = Var("b");
  Symbol net = Symbol::Group(
      {a + b, a * b, a / b, a - 3.5, CastTo(CastTo(b, "float16"), "int64"),
       Symbol::Create("take", std::vector<Symbol>{Var("t"), b}),
       Symbol::Create("broadcast_power", std::vector<Symbol>{b, a * 0.0 + 3.0}),
       Symbol::Create("transpose", {Symbol::Create("Reshape", {a}, {{"shape", "(2, 3)"}})}),
       Symbol::Create("batch_take", std::vector<Symbol>{Var("r"), b}),
       Symbol::Create("take", std::vector<Symbol>{a, b})});
  const std::vector<int32_t> av = {(1 << 30) + 1, INT_MAX, -7, INT_MIN, 5, 1000};
  const std::vector<int32_t> bv = {2, 1, 2, -1, 0, 3};
  std::vector<std::vector<double>> results[2];
  const int sides = device::Count() > 0 ? 2 : 1;
  for (int side = 0; side < sides; ++side) {
    const Context ctx = side == 0 ? Context::CPU() : Context::GPU(0);
    auto exec =
        Executor::SimpleBind(net, ctx, {{"a", {6}}, {"b", {6}}, {"t", {5, 2}}, {"r", {6, 3}}},
                             GradReq::kNull, {}, nullptr, {{"a", DType::kInt32}});
    exec->arg_dict().at("t").Fill(1.5);
    std::vector<float> rows(18);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
    NDArray::FromVector<float>({6, 3}, rows).CopyTo(exec->arg_dict().at("r"));
    NDArray::FromVector<int32_t>({6}, av).CopyTo(exec->arg_dict().at("a"));
    NDArray::FromVector<int32_t>({6}, bv).CopyTo(exec->arg_dict().at("b"));
    exec->Forward(false);
    for (const NDArray& out : exec->outputs()) results[side].push_back(out.ToVector<double>());
  }
  // batch_take: row i's element b[i] clipped to [0, 3); take: a's elements b, clipped.
  const size_t n = results[0].size();
  EXPECT_EQ(results[0][n - 2], (std::vector<double>{2, 4, 8, 9, 12, 17}));
  EXPECT_EQ(results[0][n - 1],
            (std::vector<double>{-7, INT_MAX, -7, (1 << 30) + 1, (1 << 30) + 1, INT_MIN}));
  if (sides == 1) GTEST_SKIP() << "no GPU visible";
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace cohort
