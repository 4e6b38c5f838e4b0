// Throughput of MNISTIter over Fashion-MNIST, plain and behind a PrefetchingIter, in order and
// shuffled. One JSON object per line:
//   {"bench":"mnist_iter","prefetch":false,"shuffle":true,"batch_size":128,"samples_per_sec":...}
// Usage: io_bench [IMAGES LABELS] [--epochs N]   (default: the train set of dataset-fashion-mnist)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "io/mnist_iter.h"
#include "io/prefetching_iter.h"

namespace {

using Clock = std::chrono::steady_clock;

// Runs `epochs` epochs and returns the best samples/s; touches each batch like a consumer would.
double Measure(cohort::DataIter& it, int epochs, double* checksum) {
  double best = 0;
  for (int e = 0; e < epochs; ++e) {
    it.Reset();
    const auto start = Clock::now();
    int64_t samples = 0;
    while (it.Next()) {
      const cohort::DataBatch& b = it.Value();
      *checksum += b.data[0].data<float>()[0] + b.label[0].data<float>()[0];
      samples += it.batch_size() - b.pad;
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, samples / seconds);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string images = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
  std::string labels = "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz";
  int epochs = 5;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) {
      epochs = std::atoi(argv[++i]);
    } else {
      positional.push_back(argv[i]);
    }
  }
  if (positional.size() == 2) {
    images = positional[0];
    labels = positional[1];
  }
  try {
    double checksum = 0;
    for (bool prefetch : {false, true}) {
      for (bool shuffle : {false, true}) {
        cohort::MNISTIterOptions o;
        o.image = images;
        o.label = labels;
        o.batch = {.batch_size = 128, .shuffle = shuffle, .seed = 1};
        const auto load_start = Clock::now();
        std::unique_ptr<cohort::DataIter> it = std::make_unique<cohort::MNISTIter>(o);
        const double load_seconds =
            std::chrono::duration<double>(Clock::now() - load_start).count();
        if (prefetch) it = std::make_unique<cohort::PrefetchingIter>(std::move(it), 4);
        const double rate = Measure(*it, epochs, &checksum);
        std::printf(
            "{\"bench\":\"mnist_iter\",\"impl\":\"cohort\",\"prefetch\":%s,\"shuffle\":%s,"
            "\"batch_size\":128,\"samples_per_sec\":%.0f,\"load_seconds\":%.3f}\n",
            prefetch ? "true" : "false", shuffle ? "true" : "false", rate, load_seconds);
      }
    }
    std::fprintf(stderr, "checksum %g\n", checksum);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "io_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
