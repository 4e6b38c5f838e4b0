// The zoo's Inception v3: MXNet's example/image-classification/symbols/inception-v3.py, for
// 3x299x299 images. Block and tower names are MXNet's, so its checkpoints load.
#include "symbol/models/models.h"
#include "symbol/ops.h"

namespace cohort::models {

namespace {

struct ConvSpec {
  int64_t filters;
  int64_t kh = 1, kw = 1;
  int64_t stride = 1;
  int64_t ph = 0, pw = 0;
};

// Convolution without bias, BatchNorm (MXNet's defaults: fix_gamma) and relu, named
// "<name><suffix>_conv2d" and so on.
Symbol Conv(const Symbol& data, const ConvSpec& c, const std::string& name,
            const std::string& suffix = "") {
  const std::string n = name + suffix;
  Symbol x = sym::Convolution(data,
                              {.kernel = {c.kh, c.kw},
                               .num_filter = c.filters,
                               .stride = {c.stride, c.stride},
                               .pad = {c.ph, c.pw},
                               .no_bias = true},
                              n + "_conv2d");
  x = sym::BatchNorm(x, {}, n + "_batchnorm");
  return sym::Activation(x, "relu", n + "_relu");
}

Symbol Pool3x3(const Symbol& data, sym::PoolType type, int64_t stride, int64_t pad,
               const std::string& block) {
  const std::string kind = type == sym::PoolType::kMax ? "max" : "avg";
  return sym::Pooling(
      data, {.kernel = {3, 3}, .pool_type = type, .stride = {stride, stride}, .pad = {pad, pad}},
      kind + "_pool_" + block + "_pool");
}

Symbol Concat(const std::vector<Symbol>& towers, const std::string& block) {
  return Symbol::Create("Concat", towers, {{"num_args", std::to_string(towers.size())}},
                        "ch_concat_" + block + "_chconcat");
}

// 35x35: 1x1; 1x1-5x5; 1x1-3x3-3x3; 3x3 average pooling-1x1 projection.
Symbol BlockA(const Symbol& d, int64_t proj, const std::string& n) {
  const Symbol t1 = Conv(d, {64}, n + "_conv");
  Symbol t5 = Conv(d, {48}, n + "_tower", "_conv");
  t5 = Conv(t5, {64, 5, 5, 1, 2, 2}, n + "_tower", "_conv_1");
  Symbol t3 = Conv(d, {64}, n + "_tower_1", "_conv");
  t3 = Conv(t3, {96, 3, 3, 1, 1, 1}, n + "_tower_1", "_conv_1");
  t3 = Conv(t3, {96, 3, 3, 1, 1, 1}, n + "_tower_1", "_conv_2");
  const Symbol pooled = Pool3x3(d, sym::PoolType::kAvg, 1, 1, n);
  return Concat({t1, t5, t3, Conv(pooled, {proj}, n + "_tower_2", "_conv")}, n);
}

// 35x35 to 17x17: 3x3 stride 2; 1x1-3x3-3x3 stride 2; max pooling.
Symbol BlockB(const Symbol& d, const std::string& n) {
  const Symbol t3 = Conv(d, {384, 3, 3, 2}, n + "_conv");
  Symbol td = Conv(d, {64}, n + "_tower", "_conv");
  td = Conv(td, {96, 3, 3, 1, 1, 1}, n + "_tower", "_conv_1");
  td = Conv(td, {96, 3, 3, 2}, n + "_tower", "_conv_2");
  return Concat({t3, td, Pool3x3(d, sym::PoolType::kMax, 2, 0, n)}, n);
}

// 17x17 with factorised 7x7 convolutions of `mid` filters.
Symbol BlockC(const Symbol& d, int64_t mid, const std::string& n) {
  const ConvSpec row = {mid, 1, 7, 1, 0, 3}, col = {mid, 7, 1, 1, 3, 0};
  const Symbol t1 = Conv(d, {192}, n + "_conv");
  Symbol td = Conv(d, {mid}, n + "_tower", "_conv");
  td = Conv(td, row, n + "_tower", "_conv_1");
  td = Conv(td, {192, 7, 1, 1, 3, 0}, n + "_tower", "_conv_2");
  Symbol tq = Conv(d, {mid}, n + "_tower_1", "_conv");
  tq = Conv(tq, col, n + "_tower_1", "_conv_1");
  tq = Conv(tq, row, n + "_tower_1", "_conv_2");
  tq = Conv(tq, col, n + "_tower_1", "_conv_3");
  tq = Conv(tq, {192, 1, 7, 1, 0, 3}, n + "_tower_1", "_conv_4");
  const Symbol pooled = Pool3x3(d, sym::PoolType::kAvg, 1, 1, n);
  return Concat({t1, td, tq, Conv(pooled, {192}, n + "_tower_2", "_conv")}, n);
}

// 17x17 to 8x8.
Symbol BlockD(const Symbol& d, const std::string& n) {
  Symbol t3 = Conv(d, {192}, n + "_tower", "_conv");
  t3 = Conv(t3, {320, 3, 3, 2}, n + "_tower", "_conv_1");
  Symbol td = Conv(d, {192}, n + "_tower_1", "_conv");
  td = Conv(td, {192, 1, 7, 1, 0, 3}, n + "_tower_1", "_conv_1");
  td = Conv(td, {192, 7, 1, 1, 3, 0}, n + "_tower_1", "_conv_2");
  td = Conv(td, {192, 3, 3, 2}, n + "_tower_1", "_conv_3");
  const Symbol pooled =
      sym::Pooling(d, {.kernel = {3, 3}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                   "max_pool_" + n + "_pool");
  return Concat({t3, td, pooled}, n);
}

// 8x8 with expanded filter banks (1x3 and 3x1 side by side); `pool` is avg or max.
Symbol BlockE(const Symbol& d, sym::PoolType pool, const std::string& n) {
  const ConvSpec row = {384, 1, 3, 1, 0, 1}, col = {384, 3, 1, 1, 1, 0};
  const Symbol t1 = Conv(d, {320}, n + "_conv");
  const Symbol td = Conv(d, {384}, n + "_tower", "_conv");
  const Symbol td_a = Conv(td, row, n + "_tower", "_mixed_conv");
  const Symbol td_b = Conv(td, col, n + "_tower", "_mixed_conv_1");
  Symbol t3 = Conv(d, {448}, n + "_tower_1", "_conv");
  t3 = Conv(t3, {384, 3, 3, 1, 1, 1}, n + "_tower_1", "_conv_1");
  const Symbol t3_a = Conv(t3, row, n + "_tower_1", "_mixed_conv");
  const Symbol t3_b = Conv(t3, col, n + "_tower_1", "_mixed_conv_1");
  const Symbol pooled = Pool3x3(d, pool, 1, 1, n);
  return Concat({t1, td_a, td_b, t3_a, t3_b, Conv(pooled, {192}, n + "_tower_2", "_conv")}, n);
}

}  // namespace

Symbol InceptionV3(int64_t num_classes) {
  Symbol x = Conv(sym::Variable("data"), {32, 3, 3, 2}, "conv");
  x = Conv(x, {32, 3, 3}, "conv_1");
  x = Conv(x, {64, 3, 3, 1, 1, 1}, "conv_2");
  x = sym::Pooling(x, {.kernel = {3, 3}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                   "pool");
  x = Conv(x, {80}, "conv_3");
  x = Conv(x, {192, 3, 3}, "conv_4");
  x = sym::Pooling(x, {.kernel = {3, 3}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                   "pool1");
  x = BlockA(x, 32, "mixed");
  x = BlockA(x, 64, "mixed_1");
  x = BlockA(x, 64, "mixed_2");
  x = BlockB(x, "mixed_3");
  x = BlockC(x, 128, "mixed_4");
  x = BlockC(x, 160, "mixed_5");
  x = BlockC(x, 160, "mixed_6");
  x = BlockC(x, 192, "mixed_7");
  x = BlockD(x, "mixed_8");
  x = BlockE(x, sym::PoolType::kAvg, "mixed_9");
  x = BlockE(x, sym::PoolType::kMax, "mixed_10");
  x = sym::Pooling(x, {.kernel = {8, 8}, .pool_type = sym::PoolType::kAvg}, "global_pool");
  x = sym::FullyConnected(sym::Flatten(x, "flatten"), {.num_hidden = num_classes}, "fc1");
  return sym::SoftmaxOutput(x, "softmax");
}

}  // namespace cohort::models
