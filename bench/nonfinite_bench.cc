// What Note [Non-finite gradients] costs: AllFinite over a gradient of N floats against copying
// it once (the least the kvstore does with a gradient), one JSON line per size.
//   build/bench/nonfinite_bench [ITERS]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "kvstore/kvstore.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const int iters = argc > 1 ? std::atoi(argv[1]) : 50;
  for (int64_t n : {int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24}) {
    const cohort::NDArray grad = cohort::NDArray::Full({n}, 0.5);
    const cohort::NDArray copy = cohort::NDArray::Zeros({n});
    bool finite = true;
    auto time = [&](auto&& body) {
      body();
      const auto start = Clock::now();
      for (int i = 0; i < iters; ++i) body();
      return std::chrono::duration<double>(Clock::now() - start).count() / iters;
    };
    const double check = time([&] { finite = finite && cohort::AllFinite(grad); });
    const double copied = time([&] { grad.CopyTo(copy); });
    std::printf("{\"floats\":%lld,\"allfinite_us\":%.1f,\"allfinite_gbs\":%.2f,\"copy_us\":%.1f,"
                "\"ratio_to_copy\":%.2f,\"finite\":%s}\n",
                static_cast<long long>(n), check * 1e6, n * 4 / check / 1e9, copied * 1e6,
                check / copied, finite ? "true" : "false");
  }
  return 0;
}
