// MNISTIter: MNIST-format IDX files (MNIST, Fashion-MNIST), plain or gzip (MXNet's io.MNISTIter).
#pragma once

#include <string>

#include "io/batcher.h"
#include "io/data_iter.h"

namespace cohort {

struct MNISTIterOptions {
  std::string image;  // e.g. /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
  std::string label;  // e.g. .../train-labels-idx1-ubyte.gz
  // Images as (batch, 784) instead of (batch, 1, 28, 28).
  bool flat = false;
  // Each pixel byte is multiplied by this: MXNet 1.x's MNISTIter divides by 256
  // (src/io/iter_mnist.cc), so a network trained in either gives the same outputs in the other.
  float scale = 1.0f / 256.0f;
  std::string data_name = "data";
  std::string label_name = "softmax_label";
  BatchOptions batch{.batch_size = 128, .shuffle = true};
};

// Pixels become float32 (bytes times options.scale: [0, 255/256] by default) and labels float32
// class numbers, as in MXNet.
// The images stay in memory as bytes and are converted batch by batch.
class MNISTIter : public BatcherIter {
 public:
  explicit MNISTIter(const MNISTIterOptions& options);
};

}  // namespace cohort
