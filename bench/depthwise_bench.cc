// Forward+backward time of one depthwise convolution layer (3x3, pad 1, one filter per channel,
// as MobileNet's) on one CPU device, median of --iters. One JSON object per line:
//   {"bench":"depthwise","batch":16,"channels":64,"size":56,"stride":1,"train_ms":...}
// Usage: depthwise_bench [--batch N] [--channels N] [--size N] [--stride N] [--iters N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "executor/executor.h"

int main(int argc, char** argv) {
  using namespace cohort;
  int64_t batch = 16, channels = 64, size = 56, stride = 1;
  int iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const int64_t v = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--batch") == 0) batch = v;
    if (std::strcmp(argv[i], "--channels") == 0) channels = v;
    if (std::strcmp(argv[i], "--size") == 0) size = v;
    if (std::strcmp(argv[i], "--stride") == 0) stride = v;
    if (std::strcmp(argv[i], "--iters") == 0) iters = static_cast<int>(v);
  }
  const std::string c = std::to_string(channels), s = std::to_string(stride);
  const Symbol conv = Symbol::Create("Convolution", std::vector<Symbol>{Symbol::Variable("data")},
                                     {{"kernel", "(3, 3)"},
                                      {"num_filter", c},
                                      {"num_group", c},
                                      {"pad", "(1, 1)"},
                                      {"stride", "(" + s + ", " + s + ")"},
                                      {"no_bias", "True"}},
                                     "dw");
  auto exec = Executor::SimpleBind(conv, Context::CPU(), {{"data", {batch, channels, size, size}}});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const auto& [name, a] : exec->arg_dict()) {
    float* p = static_cast<float*>(a.raw_data());
    for (int64_t i = 0; i < a.size(); ++i) p[i] = u(rng);
  }
  const NDArray head = NDArray::Full(exec->outputs()[0].shape(), 1.0);
  std::vector<double> ms;
  for (int i = 0; i < iters + 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    exec->Forward(true);
    exec->Backward({head});
    if (i >= 2) {
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "{\"bench\":\"depthwise\",\"batch\":%lld,\"channels\":%lld,\"size\":%lld,\"stride\":%lld,"
      "\"train_ms\":%.3f}\n",
      static_cast<long long>(batch), static_cast<long long>(channels), static_cast<long long>(size),
      static_cast<long long>(stride), ms[ms.size() / 2]);
}
