// Throughput of ImageRecordIter: decode, random crop, mirror and normalize into batches.
// One JSON object per line:
//   {"bench":"image_record_iter","impl":"cohort","threads":2,"batch_size":64,"samples_per_sec":...}
// Usage: image_record_bench REC IDX C H W [--threads N] [--epochs N] [--batch N] [--resize N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/image_record_iter.h"

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  int threads = 2, epochs = 2;
  int64_t batch = 64, resize = -1;
  for (int i = 1; i < argc; ++i) {
    const bool value = i + 1 < argc;
    if (std::strcmp(argv[i], "--threads") == 0 && value) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--epochs") == 0 && value) {
      epochs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--batch") == 0 && value) {
      batch = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--resize") == 0 && value) {
      resize = std::atoll(argv[++i]);
    } else {
      positional.push_back(argv[i]);
    }
  }
  if (positional.size() != 5) {
    std::fprintf(stderr, "usage: image_record_bench REC IDX C H W [--threads N] [--epochs N] "
                         "[--batch N] [--resize N]\n");
    return 2;
  }
  try {
    cohort::ImageRecordIterOptions o;
    o.path_imgrec = positional[0];
    o.path_imgidx = positional[1];
    o.data_shape = {std::atoll(positional[2].c_str()), std::atoll(positional[3].c_str()),
                    std::atoll(positional[4].c_str())};
    o.batch_size = batch;
    o.resize = resize;
    o.rand_crop = o.rand_mirror = o.shuffle = true;
    o.mean = {123.68f, 116.28f, 103.53f};
    o.std = {58.395f, 57.12f, 57.375f};
    o.preprocess_threads = threads;
    o.seed = 1;
    cohort::ImageRecordIter it(o);
    double best = 0, checksum = 0;
    for (int e = 0; e < epochs; ++e) {
      it.Reset();
      const auto start = std::chrono::steady_clock::now();
      int64_t samples = 0;
      while (it.Next()) {
        checksum += it.Value().data[0].data<float>()[0];
        samples += batch - it.Value().pad;
      }
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      best = std::max(best, samples / took.count());
    }
    std::printf("{\"bench\":\"image_record_iter\",\"impl\":\"cohort\",\"threads\":%d,"
                "\"batch_size\":%lld,\"samples_per_sec\":%.0f}\n",
                threads, static_cast<long long>(batch), best);
    std::fprintf(stderr, "checksum %g\n", checksum);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "image_record_bench: %s\n", e.what());
    return 2;
  }
}
