// Forward+backward time of LeNet (conv5x5x20-tanh-maxpool2-conv5x5x50-tanh-maxpool2-fc500-tanh-
// fc10-softmax) per batch, on the CPU with one BLAS thread. One JSON object per line:
//   {"bench":"lenet","impl":"cohort","batch_size":128,"train_ms":...,"infer_ms":...}
// Usage: lenet_bench [--batch N] [--iters N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "executor/executor.h"
#include "symbol/models/models.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename Fn>
double MedianMs(int iters, Fn fn) {
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    const auto start = Clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 128;
  int iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--batch") == 0) batch = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--iters") == 0) iters = std::atoi(argv[i + 1]);
  }
  try {
    auto exec = cohort::Executor::SimpleBind(cohort::models::LeNet(), cohort::Context::CPU(),
                                             {{"data", {batch, 1, 28, 28}}});
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> u(-0.1f, 0.1f);
    for (auto& [name, array] : exec->arg_dict()) {
      float* p = static_cast<float*>(array.raw_data());
      for (int64_t i = 0; i < array.size(); ++i) {
        p[i] = name == "softmax_label" ? static_cast<float>(rng() % 10) : u(rng);
      }
    }
    for (int i = 0; i < 2; ++i) {  // warm-up
      exec->Forward(true);
      exec->Backward();
    }
    const double train_ms = MedianMs(iters, [&] {
      exec->Forward(true);
      exec->Backward();
    });
    const double infer_ms = MedianMs(iters, [&] { exec->Forward(false); });
    std::printf(
        "{\"bench\":\"lenet\",\"impl\":\"cohort\",\"batch_size\":%lld,\"train_ms\":%.2f,"
        "\"train_samples_per_sec\":%.0f,\"infer_ms\":%.2f,\"planned_mb\":%.1f}\n",
        static_cast<long long>(batch), train_ms, batch * 1000.0 / train_ms, infer_ms,
        exec->planned_bytes() / 1048576.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lenet_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
